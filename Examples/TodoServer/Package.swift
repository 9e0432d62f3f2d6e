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
    // The inspector, for development (TODO_INSPECTOR_PORT).
    .package(name: "Inspector", path: "../Inspector"),
    // No traits: the server reads its settings from the environment, so swift-configuration is not needed.
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
    // SQLite (the embedded default). On Linux it links the system's SQLite: Debian's `libsqlite3-dev`.
    .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
    // PostgreSQL (several instances on one database).
    .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    // Observability: the example feeds the store's dispatches to these; the root package stays dependency-free.
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    // Already in Hummingbird's dependency graph, and used directly.
    .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0", traits: []),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
    .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
  ],
  targets: [
    .target(
      name: "TodoServer",
      dependencies: [
        .product(name: "Katana", package: "Katana"),
        .product(name: "KatanaRecordingLog", package: "Katana"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdCore", package: "hummingbird"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "OrderedCollections", package: "swift-collections"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Metrics", package: "swift-metrics"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "UnixSignals", package: "swift-service-lifecycle"),
      ],
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "todo-server",
      dependencies: [
        "TodoServer",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "Katana", package: "Katana"),
        .product(name: "KatanaInspector", package: "Inspector"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "TodoServerTests",
      dependencies: [
        "TodoServer",
        // Built for the durability test, which runs the server as a child process and kills it.
        "todo-server",
        .product(name: "Katana", package: "Katana"),
        .product(name: "KatanaRecordingLog", package: "Katana"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Metrics", package: "swift-metrics"),
        .product(name: "MetricsTestKit", package: "swift-metrics"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
        .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "NIOCore", package: "swift-nio"),
        // Raw connections for the slow-client tests.
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "OrderedCollections", package: "swift-collections"),
      ],
      swiftSettings: strictSettings
    ),
  ],
  swiftLanguageModes: [.v6]
)
