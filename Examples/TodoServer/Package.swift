// swift-tools-version: 6.2
import PackageDescription

/// The root package's settings (explicit existentials, imports that only expose what a file imports), and zero
/// warnings: CI builds this package as it is, so warnings fail the build here rather than through a flag that
/// would also apply to the dependencies.
let strictSettings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("MemberImportVisibility"),
  .treatAllWarnings(as: .error),
]

let package = Package(
  name: "TodoServer",
  // Hummingbird 2 needs macOS 14 / iOS 17.
  platforms: [.macOS(.v14), .iOS(.v17)],
  products: [
    .executable(name: "todo-server", targets: ["todo-server"])
  ],
  dependencies: [
    // The library, from this checkout. `name:` fixes the package identity whatever the checkout's folder is called.
    .package(name: "Katana", path: "../.."),
    // No traits: the server reads its settings from the environment, so swift-configuration is not needed.
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0", traits: []),
    // Already in Hummingbird's dependency graph, and used directly.
    .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
  ],
  targets: [
    .target(
      name: "TodoServer",
      dependencies: [
        .product(name: "Katana", package: "Katana"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "OrderedCollections", package: "swift-collections"),
        .product(name: "DequeModule", package: "swift-collections"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "todo-server",
      dependencies: [
        "TodoServer",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "TodoServerTests",
      dependencies: [
        "TodoServer",
        .product(name: "Katana", package: "Katana"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "OrderedCollections", package: "swift-collections"),
      ],
      swiftSettings: strictSettings
    ),
  ],
  swiftLanguageModes: [.v6]
)
