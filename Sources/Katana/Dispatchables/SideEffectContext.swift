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
  public func typed<S: FeatureState, D: SideEffectDependencyContainer>(_ state: S.Type, _ dependencies: D.Type) throws
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
/// A side effect of a feature mounted with `store.scope(_:dependencies:)` gets a context of the feature's own
/// types: `getState()` reads the feature's slice, `dispatch` and `send` go through the scope to the root store's
/// mailbox, and ids of the effect tools are the scope's own (see <doc:BuildingFeatures>).
///
/// The context does not keep the store alive: once the store has shut down, dispatching through it throws
/// ``StoreError/storeShutDown``.
public struct SideEffectContext<S: FeatureState, D: SideEffectDependencyContainer>: AnySideEffectContext {
  /// What the context dispatches to: a store of state `S`, or a scope whose slice is an `S`.
  @usableFromInline
  enum Backing: Sendable {
    case store(StoreCore<S, D>)
    case scope(ScopeCore<S>)
  }

  @usableFromInline let backing: Backing

  /// The store's dependency container (a feature's context: the feature's container).
  public let dependencies: D

  /// Where ``emit(_:)`` hands the feature's outputs: the handler given where the feature was mounted; nil for
  /// a store's own context and a scope mounted without one.
  @usableFromInline let outputs: FeatureOutputRoute?

  @inlinable
  init(core: StoreCore<S, D>, dependencies: D) {
    self.backing = .store(core)
    self.dependencies = dependencies
    self.outputs = nil
  }

  @inlinable
  init(scope: ScopeCore<S>, dependencies: D, outputs: FeatureOutputRoute? = nil) {
    self.backing = .scope(scope)
    self.dependencies = dependencies
    self.outputs = outputs
  }

  /// Tells the code that mounted this feature that something happened: hands `output` to the handler given
  /// to `scope` where the feature was mounted, and waits for it. See ``FeatureOutput``.
  ///
  /// ```swift
  /// try await context.emit(CatalogOutput.addToCart(product))
  /// ```
  ///
  /// - Important: The handler runs in the calling task, after everything this task committed before, and
  ///   `emit` returns once the handler has (with what it awaited committed). Cancelling the calling task
  ///   cancels the handler. Outputs do not go through the store's mailbox or interceptors. With no handler
  ///   for the output's type (the scope was mounted without one, or this is a store's own context), `emit`
  ///   returns at once; a test store records the output for `receiveOutput`.
  /// - Throws: What the handler throws, unchanged.
  public nonisolated(nonsending) func emit<Output: FeatureOutput>(_ output: Output) async throws
  where Output.StateType == S {
    if let outputs, try await outputs.deliver(output) { return }
    let receiver: (@Sendable (any FeatureOutput) async throws -> Void)?
    switch backing {
    case .store(let core): receiver = core.configuration.unhandledOutputReceiver
    case .scope(let scope): receiver = scope.unhandledOutputReceiver
    }
    try await receiver?(output)
  }

  /// The latest committed state (a feature's context: the feature's slice of it), or nil in a feature's
  /// context whose element or optional child is missing. After an awaited `dispatch` of a state updater
  /// returns, it includes that updater's change.
  ///
  /// Available for every feature state; ``getState()``, which answers `S()` for a missing slice, needs a
  /// ``State``.
  @inlinable
  public func getStateIfPresent() -> S? {
    switch backing {
    case .store(let core): core.state
    case .scope(let scope): scope.stateIfPresent
    }
  }

  /// The store's clock (``StoreConfiguration/clock``): sleep on it rather than on a clock of your own, so
  /// that tests can control time.
  public var clock: any Clock<Duration> {
    switch backing {
    case .store(let core): core.configuration.clock
    case .scope(let scope): scope.clock
    }
  }

  /// Dispatches a state updater; see ``Store/dispatch(_:)-(U)``.
  ///
  /// - Throws: In a feature's context, also ``ScopeError`` if the feature's element or child is missing
  ///   when the updater's turn comes (the updater is then not applied).
  @inlinable
  public nonisolated(nonsending) func dispatch<U: StateUpdater>(_ dispatchable: U) async throws
  where U.StateType == S {
    switch backing {
    case .store(let core): try await core.dispatch(dispatchable)
    case .scope(let scope): try await scope.dispatch(dispatchable)
    }
  }

  /// Dispatches a returning state updater and returns the value it computed from the state it produced; see
  /// ``Store/dispatch(_:)-(Updater)``.
  ///
  /// ```swift
  /// let wentNegative = try await context.dispatch(Decrement())
  /// if wentNegative { try await context.dispatch(ShowAlert()) }
  /// ```
  ///
  /// A side effect mutates and decides on the new state in one step: reading ``getState()`` after a plain
  /// dispatch could see items that landed in between.
  ///
  /// - Throws: What ``dispatch(_:)-(U)`` throws; ``StoreError/returnValueUnavailable(_:)`` if the dispatch returned
  ///   normally without committing the updater (an interceptor dropped or replaced it).
  @inlinable
  public nonisolated(nonsending) func dispatch<Updater: ReturningStateUpdater>(_ dispatchable: Updater) async throws
    -> Updater.ReturnValue where Updater.StateType == S
  {
    switch backing {
    case .store(let core): try await core.dispatchReturning(dispatchable)
    case .scope(let scope): try await scope.dispatchReturning(dispatchable)
    }
  }

  /// Dispatches a side effect and waits for it; see ``Store/dispatch(_:)-(E)``.
  @inlinable
  public nonisolated(nonsending) func dispatch<E: SideEffect>(_ dispatchable: E) async throws
  where E.StateType == S, E.Dependencies == D {
    switch backing {
    case .store(let core): try await core.dispatch(dispatchable, context: self)
    case .scope(let scope): try await scope.dispatch(dispatchable, context: self)
    }
  }

  /// Dispatches a returning side effect and returns its value; see
  /// ``Store/dispatch(_:)-(R)``.
  @inlinable
  public nonisolated(nonsending) func dispatch<R: ReturningSideEffect>(_ dispatchable: R) async throws
    -> R.ReturnValue
  {
    switch backing {
    case .store(let core): try await core.dispatch(dispatchable, context: self)
    case .scope(let scope): try await scope.dispatch(dispatchable, context: self)
    }
  }

  /// Dispatches any item, checking its kind and types at run time; see ``Store/anyDispatch(_:)``.
  @discardableResult
  public nonisolated(nonsending) func anyDispatch(_ dispatchable: any Dispatchable) async throws -> any Sendable {
    switch backing {
    case .store(let core): try await core.anyDispatch(dispatchable)
    case .scope(let scope): try await scope.anyDispatch(dispatchable, context: self)
    }
  }

  /// Hands a state updater to the store now; see ``Store/send(_:)-(U)``.
  @discardableResult
  public func send<U: StateUpdater>(_ dispatchable: U) -> DispatchHandle<Void> where U.StateType == S {
    switch backing {
    case .store(let core): core.send(dispatchable)
    case .scope(let scope): scope.send(dispatchable)
    }
  }

  /// Hands a side effect to the store now; see ``Store/send(_:)-(E)``.
  @discardableResult
  public func send<E: SideEffect>(_ dispatchable: E) -> DispatchHandle<Void>
  where E.StateType == S, E.Dependencies == D {
    switch backing {
    case .store(let core): core.send(dispatchable, context: self)
    case .scope(let scope): scope.send(dispatchable, context: self)
    }
  }

  /// Hands a returning side effect to the store now; see ``Store/send(_:)->DispatchHandle<R.ReturnValue>``.
  @discardableResult
  public func send<R: ReturningSideEffect>(_ dispatchable: R) -> DispatchHandle<R.ReturnValue> {
    switch backing {
    case .store(let core): core.send(dispatchable, context: self)
    case .scope(let scope): scope.send(dispatchable, context: self)
    }
  }

  /// Hands any item to the store now; see ``Store/anySend(_:)``.
  @discardableResult
  public func anySend(_ dispatchable: any Dispatchable) -> DispatchHandle<any Sendable> {
    switch backing {
    case .store(let core): core.anySend(dispatchable)
    case .scope(let scope): scope.anySend(dispatchable, context: self)
    }
  }

  public var anyDependencies: any SideEffectDependencyContainer {
    dependencies
  }

  /// The latest committed state as a ``State``: the store's, or in a feature's context the feature's slice
  /// (`S()` if it is missing); for a feature state that is not a ``State`` (it has no `init()`), the root
  /// store's whole state.
  public func getAnyState() -> any State {
    switch backing {
    case .store(let core): return core.state as! any State  // A store's state is a `State` (`Store<S: State, D>`).
    case .scope(let scope):
      guard S.self is any State.Type else { return scope.rootState }
      return scope.stateIfPresent as? any State ?? (S.self as! any State.Type).init()
    }
  }
}

extension SideEffectContext where S: State {
  /// The latest committed state (a feature's context: the feature's slice of it). After an awaited
  /// `dispatch` of a state updater returns, it includes that updater's change.
  ///
  /// In a feature's context whose element or child is missing, this is `S()` (see
  /// ``ScopedStore/state``). A feature state without `init()` (a ``FeatureState`` that is not a ``State``)
  /// reads its slice with ``getStateIfPresent()``.
  @inlinable
  public func getState() -> S {
    switch backing {
    case .store(let core): core.state
    case .scope(let scope): scope.stateIfPresent ?? S()
    }
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

  /// Starts the effect tools' tasks, when the store's configuration says how (``StoreConfiguration/effectTaskStarter``).
  var effectTaskStarter: (any EffectTaskStarter)? { get }
}

/// A context whose effect ids live in a namespace of their own (a feature's context).
protocol EffectNamespacing {
  /// The identifier, in the store's effect registry, of work run under `id` through this context: the id
  /// itself for the store, the id within the scope's namespace for a feature's context.
  func effectID(for id: some Hashable & Sendable) -> EffectID
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
  /// The root store's internals: a feature's context shares its store's registry and attachments.
  var rootInternals: any StoreContextInternals {
    switch backing {
    case .store(let core): core
    case .scope(let scope): scope.rootInternals
    }
  }

  package func addShutdownHandler(_ handler: @escaping @Sendable () -> Void) {
    rootInternals.addShutdownHandler(handler)
  }

  package func attachment<T: AnyObject & Sendable>(_ type: T.Type, make: () -> T) -> T? {
    rootInternals.attachment(type, make: make)
  }

  package var isInsideUpdater: Bool { rootInternals.isInsideUpdater }

  package func runtimeWarning(_ message: String) {
    rootInternals.runtimeWarning(message)
  }

  package func sentItemsQuery() -> @Sendable (SentItemOrigin?) -> [SentItemOrigin] {
    rootInternals.sentItemsQuery()
  }

  package func carrierLinks() -> CarrierLinks? {
    rootInternals.carrierLinks()
  }

  package var effectTaskStarter: (any EffectTaskStarter)? { rootInternals.effectTaskStarter }
}

extension AnySideEffectContext {
  /// The store internals behind this context (every context the store creates provides them).
  package var storeInternals: (any StoreContextInternals)? {
    self as? any StoreContextInternals
  }

  /// The registry identifier of work this context runs under `id` (see ``EffectNamespacing``).
  func effectID(_ id: some Hashable & Sendable) -> EffectID {
    (self as? any EffectNamespacing)?.effectID(for: id) ?? EffectID(id)
  }
}

extension SideEffectContext: EffectNamespacing {
  func effectID(for id: some Hashable & Sendable) -> EffectID {
    switch backing {
    case .store: EffectID(id)
    case .scope(let scope): scope.effectID(for: id)
    }
  }
}
