// swift-tools-version: 6.1
import PackageDescription

// Allocation counts (and, where the machine has hardware counters, instruction counts) of the cases that
// katana-benchmarks times, with ordo-one/benchmark (package-benchmark), against thresholds committed in
// Thresholds/. A package of its own, so that Katana itself keeps no dependencies.
//
//   swift package --package-path Benchmarks benchmark                        # run and print every metric
//   .ci/benchmark-thresholds                                                 # check the committed thresholds
//   .ci/benchmark-thresholds update                                          # record new ones
let package = Package(
  name: "KatanaPackageBenchmarks",
  platforms: [.macOS(.v13)],
  dependencies: [
    // Named, so that the product reference below does not depend on the folder the checkout is in.
    .package(name: "Katana", path: ".."),
    // The malloc interposer counts every allocation. The package's other default trait, RuntimeInterposer (ARC
    // counts on Linux with Swift 6.3), needs swift-runtime-interposer, which this project neither needs nor has in
    // its CI machines' package mirror.
    .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
  ],
  targets: [
    .executableTarget(
      name: "StoreBenchmarks",
      dependencies: [
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "KatanaBenchmarkFixtures", package: "Katana"),
      ],
      path: "Benchmarks/StoreBenchmarks",
      swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")],
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
  ],
  swiftLanguageModes: [.v6]
)
