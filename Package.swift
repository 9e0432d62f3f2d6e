// swift-tools-version: 6.2
import PackageDescription

/// Settings every Swift target shares: explicit existentials, and imports that only expose what a file
/// imports itself.
let strictSettings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
  name: "Katana",
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
  products: [
    .library(name: "Katana", targets: ["Katana"]),
    .library(name: "KatanaPromises", targets: ["KatanaPromises"]),
    .library(name: "KatanaTesting", targets: ["KatanaTesting"]),
    .library(name: "KatanaRecordingLog", targets: ["KatanaRecordingLog"]),
    .executable(name: "katana-demo", targets: ["KatanaDemo"]),
    .executable(name: "katana-benchmarks", targets: ["KatanaBenchmarks"]),
    // Not API: the benchmark cases, shared by katana-benchmarks and the package in Benchmarks/ (which counts
    // allocations with ordo-one/benchmark, a dependency this package does not take).
    .library(name: "KatanaBenchmarkFixtures", targets: ["KatanaBenchmarkFixtures"]),
  ],
  targets: [
    // A few C inline functions: atomic loads and stores of one word (the `Synchronization` module would raise the
    // Apple floor to macOS 15 / iOS 18).
    .target(name: "CKatana"),
    .target(name: "Katana", dependencies: ["CKatana"], swiftSettings: strictSettings),
    .target(name: "KatanaPromises", dependencies: ["Katana"], swiftSettings: strictSettings),
    .target(name: "KatanaTesting", dependencies: ["Katana"], swiftSettings: strictSettings),
    // A recording as JSON Lines (Foundation's JSON coders; Katana itself does not import Foundation).
    .target(name: "KatanaRecordingLog", dependencies: ["Katana"], swiftSettings: strictSettings),
    // The runnable tour: `swift run katana-demo`.
    .executableTarget(
      name: "KatanaDemo", dependencies: ["Katana", "KatanaPromises", "KatanaRecordingLog", "KatanaTesting"],
      swiftSettings: strictSettings),
    // The baselines live in their own module, so that the optimizer cannot fold them into the measuring loop.
    .target(name: "KatanaBenchmarkBaselines", swiftSettings: strictSettings),
    // Each benchmark case's set-up and measured operations, written once: katana-benchmarks times them against
    // the baselines, Benchmarks/ counts their allocations against committed thresholds.
    .target(
      name: "KatanaBenchmarkFixtures", dependencies: ["Katana", "KatanaPromises", "KatanaBenchmarkBaselines"],
      swiftSettings: strictSettings),
    .executableTarget(
      name: "KatanaBenchmarks",
      // CKatana: the calling task's Mach port on Apple platforms (`residentMemory()`).
      dependencies: ["CKatana", "Katana", "KatanaPromises", "KatanaBenchmarkBaselines", "KatanaBenchmarkFixtures"],
      swiftSettings: strictSettings),
    // Gates, recorders and output capture that the test targets share (test targets cannot import each other);
    // KatanaPromises for the switch that runs the `.katana6` suites on the pre-macOS 15 fallbacks, KatanaTesting for
    // the failsafe factor its own waits use (`KATANA_FAILSAFE_SCALE`).
    .target(
      name: "KatanaTestSupport", dependencies: ["KatanaPromises", "KatanaTesting"], path: "Tests/KatanaTestSupport",
      swiftSettings: strictSettings),
    // CKatana: the relaxed atomics of the fuzzer's coverage record (Fuzz/FuzzEntryPoints.swift).
    .testTarget(
      name: "KatanaTests", dependencies: ["CKatana", "Katana", "KatanaRecordingLog", "KatanaTestSupport"],
      swiftSettings: strictSettings),
    .testTarget(
      name: "KatanaTestingTests", dependencies: ["Katana", "KatanaRecordingLog", "KatanaTesting", "KatanaTestSupport"],
      swiftSettings: strictSettings),
    .testTarget(
      name: "KatanaPromisesTests", dependencies: ["Katana", "KatanaPromises", "KatanaTestSupport"],
      swiftSettings: strictSettings),
    // Katana 6's README and SideEffect page examples, migrated by hand with MIGRATION.md's steps (stage 1:
    // KatanaPromises; stage 2: async/await and KatanaTesting), and the tests that run them.
    .testTarget(
      name: "KatanaMigrationTests", dependencies: ["KatanaPromises", "KatanaTesting", "KatanaTestSupport"],
      swiftSettings: strictSettings),
  ],
  swiftLanguageModes: [.v6]
)
