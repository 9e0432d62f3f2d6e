/// Dispatches an item to the store that built a dependency container, and returns the item's outcome
/// (`()` for state updaters and for side effects that return nothing).
///
/// It throws what ``Store/anyDispatch(_:)`` throws, and ``StoreError/storeShutDown`` once the store has
/// shut down or been released.
public typealias AnyDispatch = @Sendable (_ dispatchable: any Dispatchable) async throws -> any Sendable

/// Returns the latest committed state of the store that built a dependency container (the empty state
/// before start-up completes and after the store has been released).
public typealias GetState = @Sendable () -> any State

/// The dependencies that side effects use: API clients, databases, clocks, anything with effects.
///
/// The store builds one container at initialisation and hands the same instance to every side effect
/// through ``SideEffectContext/dependencies``. Replace it in tests through the store's
/// `dependenciesInitializer`.
///
/// ```swift
/// final class AppDependencies: SideEffectDependencyContainer {
///   let api: APIClient
///   init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
///     api = LiveAPIClient()
///   }
/// }
/// ```
///
/// The container is shared across tasks, so it must be `Sendable`: a final class of `let` properties
/// holding `Sendable` values.
public protocol SideEffectDependencyContainer: AnyObject, Sendable {
  /// Creates the container for a store.
  ///
  /// - Parameters:
  ///   - dispatch: Dispatches to the store. Safe to keep; it does not keep the store alive, and throws
  ///     ``StoreError/storeShutDown`` once the store is gone.
  ///   - getState: Reads the store's latest committed state.
  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState)
}

/// A dependency container with no dependencies, for stores and tests that need none.
public final class EmptySideEffectDependencyContainer: SideEffectDependencyContainer {
  /// Creates the container; it ignores both closures.
  public init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {}

  /// Creates the container.
  public init() {}
}
