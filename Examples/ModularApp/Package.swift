// swift-tools-version: 6.2
import PackageDescription

/// The root package's settings (explicit existentials, imports that only expose what a file imports), and zero
/// warnings: CI builds this package as it is, so warnings fail the build here rather than through a flag that
/// would also apply to the library's own targets.
let strictSettings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("MemberImportVisibility"),
  .treatAllWarnings(as: .error),
]

let package = Package(
  name: "ModularApp",
  // The library's own floor: nothing here needs more.
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
  products: [
    .executable(name: "modular-app", targets: ["modular-app"])
  ],
  dependencies: [
    // The library, from this checkout. `name:` fixes the package identity whatever the checkout's folder is called.
    .package(name: "Katana", path: "../..")
  ],
  targets: [
    // Two features. Each knows only its own state, items, dependencies and effect ids: neither imports the
    // other, nor the app.
    .target(
      name: "Catalog",
      dependencies: [.product(name: "Katana", package: "Katana")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "Cart",
      dependencies: [.product(name: "Katana", package: "Katana")],
      swiftSettings: strictSettings
    ),
    // The app: one store, the two features mounted on it, and the wiring between them.
    .target(
      name: "ShopApp",
      dependencies: ["Catalog", "Cart", .product(name: "Katana", package: "Katana")],
      swiftSettings: strictSettings
    ),
    // A scripted session on the app: `swift run modular-app`.
    .executableTarget(
      name: "modular-app",
      dependencies: ["ShopApp", "Catalog", "Cart", .product(name: "Katana", package: "Katana")],
      swiftSettings: strictSettings
    ),
    // Each feature alone, on a TestStore of its own state and dependencies.
    .testTarget(
      name: "CatalogTests",
      dependencies: ["Catalog", .product(name: "KatanaTesting", package: "Katana")],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "CartTests",
      dependencies: ["Cart", .product(name: "KatanaTesting", package: "Katana")],
      swiftSettings: strictSettings
    ),
    // The features together, on the app's real store.
    .testTarget(
      name: "ShopAppTests",
      dependencies: [
        "ShopApp", "Catalog", "Cart", .product(name: "Katana", package: "Katana"),
        .product(name: "KatanaTesting", package: "Katana"),
      ],
      swiftSettings: strictSettings
    ),
  ],
  swiftLanguageModes: [.v6]
)
