// Stand-in for the Apple SDK's SwiftUI module, for .ci/check-apple-branches: exactly the declarations that
// the package's `#if canImport(SwiftUI)` code uses, with the signatures, isolation and attributes of
// SwiftUI.swiftinterface in the SDKs of Xcode 16 and later (Xcode 26 comes with Swift 6.2, the package's
// minimum). Bodies are never run.

/// SwiftUI.swiftinterface:
/// `@frozen @propertyWrapper @dynamicMemberLookup public struct Binding<Value>`.
@frozen @propertyWrapper
public struct Binding<Value> {
  /// SwiftUI.swiftinterface:
  /// `@preconcurrency public init(get: @escaping @isolated(any) @Sendable () -> Value,`
  /// `  set: @escaping @isolated(any) @Sendable (Value) -> Swift.Void)`.
  /// The closures are `@isolated(any) @Sendable`: a closure literal written in main-actor code does not
  /// inherit the main actor unless it says so (`{ @MainActor in ... }`).
  @preconcurrency
  public init(
    get: @escaping @isolated(any) @Sendable () -> Value, set: @escaping @isolated(any) @Sendable (Value) -> Void
  ) {
    fatalError("stand-in: never run")
  }

  /// SwiftUI.swiftinterface: `public var wrappedValue: Value { get nonmutating set }`.
  public var wrappedValue: Value {
    get { fatalError("stand-in: never run") }
    nonmutating set { fatalError("stand-in: never run") }
  }
}
