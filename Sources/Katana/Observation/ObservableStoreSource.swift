/// What an ``ObservableStore`` reads and sends to: a store, or a feature's scope of one.
///
/// A source gives the latest committed state synchronously, a way to wait until it is ready, an ordered
/// stream of committed states that starts with the state at subscription, and the three `send`s. A source must
/// publish states so that a state read with ``stateIfPresent`` is never newer than the first element of a stream
/// subscribed to afterwards: the model reads first and subscribes second, and so never shows an older state after a
/// newer one.
protocol ObservableStoreSource<StateType, Dependencies>: Sendable {
  associatedtype StateType: FeatureState
  associatedtype Dependencies: SideEffectDependencyContainer

  /// The latest committed state; nil while a scope's element or optional child is missing.
  var stateIfPresent: StateType? { get }

  /// Returns once the source is ready; throws if it never will be (failed start-up, shutdown) or if the
  /// calling task is cancelled. A store's initial state is not a commit, so streams subscribed before it
  /// is ready do not deliver it: the model waits for readiness before subscribing.
  nonisolated(nonsending) func waitUntilReady() async throws

  /// The current state when iteration starts, then each committed state, in commit order.
  func states(buffering: StreamBuffering) -> StoreStream<StateType>

  /// Enqueues a state updater now.
  func send<U: StateUpdater>(_ dispatchable: U) -> DispatchHandle<Void> where U.StateType == StateType

  /// Enqueues a side effect now.
  func send<E: SideEffect>(_ dispatchable: E) -> DispatchHandle<Void>
  where E.StateType == StateType, E.Dependencies == Dependencies

  /// Enqueues a returning side effect now.
  func send<R: ReturningSideEffect>(_ dispatchable: R) -> DispatchHandle<R.ReturnValue>
}

extension Store: ObservableStoreSource {
  typealias StateType = S
  typealias Dependencies = D

  /// A store's state is always present.
  nonisolated var stateIfPresent: S? { state }
}

extension ScopedStore: ObservableStoreSource {
  typealias StateType = S
  typealias Dependencies = D

  /// Returns once the root store is ready. Runs on the caller's executor, as the store's does: a model's task
  /// stays on the main actor, and subscribes in its first job there once the store is ready.
  nonisolated(nonsending) func waitUntilReady() async throws {
    try await core.waitUntilReady()
  }
}
