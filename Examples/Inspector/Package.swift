// swift-tools-version: 6.2
import PackageDescription

/// The root package's settings (explicit existentials, imports that only expose what a file imports), and zero
/// warnings in this package's own targets (a flag on the command line would also apply to the dependencies).
let strictSettings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("MemberImportVisibility"),
  .treatAllWarnings(as: .error),
]

let package = Package(
  name: "Inspector",
  // Hummingbird 2 needs macOS 14 / iOS 17.
  platforms: [.macOS(.v14), .iOS(.v17)],
  products: [
    .library(name: "KatanaInspector", targets: ["KatanaInspector"]),
    .executable(name: "inspector-demo", targets: ["inspector-demo"]),
    .executable(name: "inspector-benchmark", targets: ["inspector-benchmark"]),
  ],
  dependencies: [
    // The library, from this checkout. `name:` fixes the package identity whatever the checkout's folder is called.
    .package(name: "Katana", path: "../.."),
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
    .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
    // Already in Hummingbird's dependency graph, and used directly.
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0", traits: []),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
  ],
  targets: [
    .target(
      name: "KatanaInspector",
      dependencies: [
        .product(name: "Katana", package: "Katana"),
        .product(name: "KatanaRecordingLog", package: "Katana"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      // The page: plain HTML, CSS and JavaScript, served as they are (no build step, nothing from the internet).
      resources: [.copy("Page")],
      swiftSettings: strictSettings
    ),
    // A demo store running a looping session with the inspector: `swift run inspector-demo`.
    .executableTarget(
      name: "inspector-demo",
      dependencies: [
        "KatanaInspector", .product(name: "Katana", package: "Katana"),
        .product(name: "KatanaRecordingLog", package: "Katana"),
      ],
      swiftSettings: strictSettings
    ),
    // The store's cost per commit with and without an inspector attached.
    .executableTarget(
      name: "inspector-benchmark",
      dependencies: [
        "KatanaInspector", .product(name: "Katana", package: "Katana"),
        .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
      ],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "KatanaInspectorTests",
      dependencies: [
        "KatanaInspector",
        .product(name: "Katana", package: "Katana"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
        .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOWebSocket", package: "swift-nio"),
        .product(name: "WSCore", package: "swift-websocket"),
      ],
      swiftSettings: strictSettings
    ),
    // Tests the inspector made from recorded sessions of the demo, compiled and run as generated (the browser test
    // adds the one it makes from its session, builds and runs it; RecordedSession.swift is one kept from such a run).
    .testTarget(
      name: "InspectorDemoSessionTests",
      dependencies: [
        "inspector-demo",
        .product(name: "Katana", package: "Katana"),
        .product(name: "KatanaTesting", package: "Katana"),
      ],
      swiftSettings: strictSettings
    ),
  ],
  swiftLanguageModes: [.v6]
)
