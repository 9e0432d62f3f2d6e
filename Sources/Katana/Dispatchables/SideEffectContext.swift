/// What a side effect or an interceptor gets from the store, without knowing the store's types.
///
/// Interceptors and ``ReturningSideEffect``s receive this. Get the typed ``SideEffectContext`` back with
/// ``typed(_:_:)``.
public protocol AnySideEffectContext: Sendable {
  /// The store's dependency container.
  var anyDependencies: any SideEffectDependencyContainer { get }

  /// The latest committed state of the store.
  func getAnyState() -> any State

  /// Dispatches any item and returns its outcome; see ``Store/anyDispatch(_:)``.
  @discardableResult
  func anyDispatch(_ dispatchable: any Dispatchable) async throws -> any Sendable

  /// Hands any item to the store now, without waiting; see ``Store/anySend(_:)``.
  @discardableResult
  func anySend(_ dispatchable: any Dispatchable) -> DispatchHandle<any Sendable>

  /// The store's clock (``StoreConfiguration/clock``).
  var clock: any Clock<Duration> { get }
}

extension AnySideEffectContext {
  /// Dispatches a returning side effect and returns its value.
  ///
  /// - Throws: What the side effect throws, or ``StoreError/returnValueTypeMismatch(expected:actual:)`` if
  ///   an interceptor replaced it with a side effect returning another type.
  public func dispatch<R: ReturningSideEffect>(_ dispatchable: R) async throws -> R.ReturnValue {
    let value = try await anyDispatch(dispatchable)
    guard let typed = value as? R.ReturnValue else {
      throw StoreError.returnValueTypeMismatch(
        expected: String(reflecting: R.ReturnValue.self), actual: typeName(of: value))
    }
    return typed
  }

  /// Returns this context as the typed context of a store with state `S` and dependencies `D`.
  ///
  /// ```swift
  /// func sideEffect(_ context: any AnySideEffectContext) async throws -> Int {
  ///   let context = try context.typed(AppState.self, AppDependencies.self)
  ///   return context.getState().todos.count
  /// }
  /// ```
  ///
  /// - Throws: ``StoreError/wrongContextType(expected:actual:)`` if the store has other types.
  public func typed<S: State, D: SideEffectDependencyContainer>(_ state: S.Type, _ dependencies: D.Type) throws
    -> SideEffectContext<S, D>
  {
    guard let typed = self as? SideEffectContext<S, D> else {
      throw StoreError.wrongContextType(
        expected: String(reflecting: SideEffectContext<S, D>.self), actual: typeName(of: self))
    }
    return typed
  }
}

/// What a ``SideEffect`` gets from its store: the state, the dependencies, and dispatch.
///
/// ```swift
/// func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
///   guard !context.getState().isSyncing else { return }
///   try await context.dispatch(SetSyncing(true))
///   let todos = try await context.dependencies.api.fetchTodos()
///   try await context.dispatch(ReplaceTodos(todos))
/// }
/// ```
///
/// The context does not keep the store alive: once the store has shut down, dispatching through it throws
/// ``StoreError/storeShutDown``.
public struct SideEffectContext<S: State, D: SideEffectDependencyContainer>: AnySideEffectContext {
  @usableFromInline let core: StoreCore<S, D>

  /// The store's dependency container.
  public let dependencies: D

  @inlinable
  init(core: StoreCore<S, D>, dependencies: D) {
    self.core = core
    self.dependencies = dependencies
  }

  /// The latest committed state. After an awaited `dispatch` of a state updater returns, it includes that
  /// updater's change.
  @inlinable
  public func getState() -> S {
    core.state
  }

  /// The store's clock (``StoreConfiguration/clock``): sleep on it rather than on a clock of your own, so
  /// that tests can control time.
  public var clock: any Clock<Duration> {
    core.configuration.clock
  }

  /// Dispatches a state updater; see ``Store/dispatch(_:)-(U)``.
  @inlinable
  public nonisolated(nonsending) func dispatch<U: StateUpdater>(_ dispatchable: U) async throws
  where U.StateType == S {
    try await core.dispatch(dispatchable)
  }

  /// Dispatches a side effect and waits for it; see ``Store/dispatch(_:)-(E)``.
  @inlinable
  public nonisolated(nonsending) func dispatch<E: SideEffect>(_ dispatchable: E) async throws
  where E.StateType == S, E.Dependencies == D {
    try await core.dispatch(dispatchable, context: self)
  }

  /// Dispatches a returning side effect and returns its value; see
  /// ``Store/dispatch(_:)->_``.
  @inlinable
  public nonisolated(nonsending) func dispatch<R: ReturningSideEffect>(_ dispatchable: R) async throws
    -> R.ReturnValue
  {
    try await core.dispatch(dispatchable, context: self)
  }

  /// Dispatches any item, checking its kind and types at run time; see ``Store/anyDispatch(_:)``.
  @discardableResult
  public nonisolated(nonsending) func anyDispatch(_ dispatchable: any Dispatchable) async throws -> any Sendable {
    try await core.anyDispatch(dispatchable)
  }

  /// Hands a state updater to the store now; see ``Store/send(_:)-(U)``.
  @discardableResult
  public func send<U: StateUpdater>(_ dispatchable: U) -> DispatchHandle<Void> where U.StateType == S {
    core.send(dispatchable)
  }

  /// Hands a side effect to the store now; see ``Store/send(_:)-(E)``.
  @discardableResult
  public func send<E: SideEffect>(_ dispatchable: E) -> DispatchHandle<Void>
  where E.StateType == S, E.Dependencies == D {
    core.send(dispatchable, context: self)
  }

  /// Hands a returning side effect to the store now; see ``Store/send(_:)->DispatchHandle<R.ReturnValue>``.
  @discardableResult
  public func send<R: ReturningSideEffect>(_ dispatchable: R) -> DispatchHandle<R.ReturnValue> {
    core.send(dispatchable, context: self)
  }

  /// Hands any item to the store now; see ``Store/anySend(_:)``.
  @discardableResult
  public func anySend(_ dispatchable: any Dispatchable) -> DispatchHandle<any Sendable> {
    core.anySend(dispatchable)
  }

  public var anyDependencies: any SideEffectDependencyContainer {
    dependencies
  }

  public func getAnyState() -> any State {
    getState()
  }
}

/// Access to store internals for the package's store features, whatever the store's types.
package protocol StoreContextInternals {
  /// Registers `handler` to run once when the store shuts down (at once if it already has).
  func addShutdownHandler(_ handler: @escaping @Sendable () -> Void)

  /// The per-store object of type `T`, created on first use; nil once the store has shut down.
  func attachment<T: AnyObject & Sendable>(_ type: T.Type, make: () -> T) -> T?

  /// Whether the calling thread is running one of the store's state updaters (and holds its lock).
  var isInsideUpdater: Bool { get }

  /// Reports a misuse once per store, on standard error.
  func runtimeWarning(_ message: String)

  /// Returns the side effects sent before an item (all of them for nil) that have not finished; it does not
  /// keep the store alive.
  func sentItemsQuery() -> @Sendable (SentItemOrigin?) -> [SentItemOrigin]

  /// How the effect tools tell the store which task does the work another task waits for; nil unless the
  /// store tracks activity (``StoreConfiguration/tracksActivity``). It does not keep the store alive.
  func carrierLinks() -> CarrierLinks?
}

/// Tells a store, which tracks activity, that a task waits for work done in another task (a run of an effect
/// tool): the test store then sees that work as the waiting task's, and can tell when all of it sleeps on a
/// test clock.
package struct CarrierLinks: Sendable {
  /// `waiter` waits for the task that binds `token` (nil: no longer waits).
  package let handOff: @Sendable (_ waiter: TaskIdentity, _ token: UInt64?) -> Void
  /// `token` is run by `task` (nil: no longer).
  package let bind: @Sendable (_ token: UInt64, _ task: TaskIdentity?) -> Void
}

extension SideEffectContext: StoreContextInternals {
  package func addShutdownHandler(_ handler: @escaping @Sendable () -> Void) {
    core.addShutdownHandler(handler)
  }

  package func attachment<T: AnyObject & Sendable>(_ type: T.Type, make: () -> T) -> T? {
    core.attachment(type, make: make)
  }

  package var isInsideUpdater: Bool { core.isInsideUpdater }

  package func runtimeWarning(_ message: String) {
    core.runtimeWarning(message)
  }

  package func sentItemsQuery() -> @Sendable (SentItemOrigin?) -> [SentItemOrigin] {
    core.sentItemsQuery()
  }

  package func carrierLinks() -> CarrierLinks? {
    core.carrierLinks()
  }
}

extension AnySideEffectContext {
  /// The store internals behind this context (every context the store creates provides them).
  package var storeInternals: (any StoreContextInternals)? {
    self as? any StoreContextInternals
  }
}
