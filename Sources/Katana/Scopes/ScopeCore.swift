@_spi(Reflection) import Swift

/// The engine behind ``ScopedStore`` and a feature's ``SideEffectContext``, with the root store's types
/// erased: a feature's code knows its own state `S`, not the app's.
///
/// State updaters, the hot path, go through ``routes``: closures made in the app's code (``Store`` and
/// ``ScopedStore`` inline the scope functions), so they run specialised for the app's and the feature's types.
/// Everything else (side effects, type-erased items, observers, child scopes) is declared here and done by
/// the one subclass, ``RootedScope``, which knows the root store's types. (A class with overridable generic
/// methods rather than a protocol: the feature's items keep their static types all the way to the root
/// store.)
@usableFromInline
class ScopeCore<S: FeatureState>: @unchecked Sendable {
  // Sendable: immutable; subclasses add only immutable stored properties.

  /// Which scope this is.
  @usableFromInline
  let id: ScopeID
  /// How state updaters dispatched or sent through this scope reach the root store.
  @usableFromInline
  let routes: ScopeRoutes<S>
  /// The observers that a commit made through this scope concerns.
  @usableFromInline
  let commitFilter: ScopeCommitFilter
  /// The root store's dispatch observers, which see the feature's items as the feature dispatches them.
  @usableFromInline
  let dispatchObservers: DispatchObservers?

  @usableFromInline
  init(id: ScopeID, routes: ScopeRoutes<S>, dispatchObservers: DispatchObservers?) {
    self.id = id
    self.routes = routes
    self.commitFilter = ScopeCommitFilter(location: id.location)
    self.dispatchObservers = dispatchObservers
  }

  // MARK: - State updaters

  /// Dispatches a state updater of the feature; its fast path is inlined into ``ScopedStore``.
  @inlinable @inline(__always)
  final nonisolated(nonsending) func dispatch<U: StateUpdater>(_ updater: U) async throws where U.StateType == S {
    if let dispatchObservers {
      return try await dispatchObservers.observe(updater) { try await dispatchUnobserved(updater) }
    }
    try await dispatchUnobserved(updater)
  }

  @inlinable @inline(__always)
  final nonisolated(nonsending) func dispatchUnobserved<U: StateUpdater>(_ updater: U) async throws
  where U.StateType == S {
    if try applyWithoutWaiting(updater) { return }
    try await routes.dispatch(updater, id) { updater.updateState(&$0) }
  }

  /// The fast path of a dispatch through the scope: applies `updater` at once if the root store can.
  ///
  /// Never inlined into the async caller on purpose: inside an async function, temporaries live in memory taken
  /// from the task allocator; in this synchronous function they live on the thread's stack (as for the root's
  /// ``StoreCore/dispatchWithoutWaiting(_:)``).
  @inlinable @inline(never)
  final func applyWithoutWaiting<U: StateUpdater>(_ updater: U) throws -> Bool where U.StateType == S {
    try routes.applyIfIdle(commitFilter) { updater.updateState(&$0) }
  }

  /// Dispatches a returning state updater of the feature and returns the value its commit computed; see
  /// ``StoreCore/dispatchReturning(_:)``. The same routes as ``dispatch(_:)``, with a mutation that keeps the value.
  @inlinable @inline(__always)
  final nonisolated(nonsending) func dispatchReturning<U: ReturningStateUpdater>(_ updater: U) async throws
    -> U.ReturnValue where U.StateType == S
  {
    if let dispatchObservers {
      return try await dispatchObservers.observe(updater) { try await dispatchReturningUnobserved(updater) }
    }
    return try await dispatchReturningUnobserved(updater)
  }

  @inlinable @inline(__always)
  final nonisolated(nonsending) func dispatchReturningUnobserved<U: ReturningStateUpdater>(_ updater: U) async throws
    -> U.ReturnValue where U.StateType == S
  {
    if let value = try applyReturningWithoutWaiting(updater) { return value.value }
    let returned = ReturnedValue<U.ReturnValue>()
    try await routes.dispatch(updater, id) { returned.keep(updater.updateState(&$0)) }
    return try returned.value(of: U.self)
  }

  /// ``applyWithoutWaiting(_:)`` for a returning updater: the value, if the fast path committed it; nil when the
  /// caller must wait for its turn.
  @inlinable @inline(never)
  final func applyReturningWithoutWaiting<U: ReturningStateUpdater>(_ updater: U) throws -> Returned<U.ReturnValue>?
  where U.StateType == S {
    var value: U.ReturnValue?
    let applied = try routes.applyIfIdle(commitFilter) { value = updater.updateState(&$0) }
    return try Returned(applied: applied, value, of: U.self)
  }

  /// Sends a state updater of the feature.
  @inlinable
  final func send<U: StateUpdater>(_ updater: U) -> DispatchHandle<Void> where U.StateType == S {
    if let dispatchObservers {
      return dispatchObservers.observe(updater) { sendUnobserved(updater) }
    }
    return sendUnobserved(updater)
  }

  @inlinable
  final func sendUnobserved<U: StateUpdater>(_ updater: U) -> DispatchHandle<Void> where U.StateType == S {
    do {
      if try routes.applyIfIdle(commitFilter, { updater.updateState(&$0) }) { return succeededHandle }
    } catch {
      return .failed(error)
    }
    return routes.enqueue(updater, id) { updater.updateState(&$0) }
  }

  /// The registry identifier of work this scope runs under `id`: the id within the scope's namespace.
  final func effectID(for id: some Hashable & Sendable) -> EffectID {
    EffectID(ScopedEffectKey(scope: self.id.identity, id: AnyHashable(id)))
  }

  // MARK: - Overridden by RootedScope

  /// The root store's internals: a feature's context shares its store's effect registry and attachments.
  var rootInternals: any StoreContextInternals { abstract() }
  /// The root store's clock.
  @usableFromInline
  var clock: any Clock<Duration> { abstract() }
  /// Returns once the root store is ready; see ``Store/waitUntilReady()``.
  nonisolated(nonsending) func waitUntilReady() async throws { abstract() }
  /// The slice in the latest committed state, or nil if it is missing.
  @usableFromInline
  var stateIfPresent: S? { abstract() }

  /// The root store's whole state (what a feature's context answers to `getAnyState()` when the feature's
  /// state is not a `State`).
  var rootState: any State { abstract() }

  /// Where the outputs that no handler takes go: the root store's
  /// `StoreConfiguration.unhandledOutputReceiver`.
  var unhandledOutputReceiver: (@Sendable (any FeatureOutput) async throws -> Void)? { abstract() }

  /// This scope's slice of `root`, a state of the root store (nil if it is missing, or `root` is of another type).
  func slice(of root: Any) -> S? { abstract() }

  /// The root store's identity.
  var rootIdentity: ObjectIdentifier { abstract() }

  @usableFromInline
  nonisolated(nonsending) func dispatch<E: SideEffect, D>(_ effect: E, context: SideEffectContext<S, D>) async throws
  where E.StateType == S, E.Dependencies == D { abstract() }
  @usableFromInline
  nonisolated(nonsending) func dispatch<R: ReturningSideEffect, D>(_ effect: R, context: SideEffectContext<S, D>)
    async throws
    -> R.ReturnValue
  { abstract() }
  @usableFromInline
  func send<E: SideEffect, D>(_ effect: E, context: SideEffectContext<S, D>) -> DispatchHandle<Void>
  where E.StateType == S, E.Dependencies == D { abstract() }
  @usableFromInline
  func send<R: ReturningSideEffect, D>(_ effect: R, context: SideEffectContext<S, D>) -> DispatchHandle<
    R.ReturnValue
  > { abstract() }
  @usableFromInline
  nonisolated(nonsending) func anyDispatch<D>(_ item: any Dispatchable, context: SideEffectContext<S, D>) async throws
    -> any Sendable
  {
    abstract()
  }
  @usableFromInline
  func anySend<D>(_ item: any Dispatchable, context: SideEffectContext<S, D>) -> DispatchHandle<any Sendable> {
    abstract()
  }

  /// Registers an observer of the slice: the root store's observer (``StoreCore/observe(location:needsOldState:start:receive:startupState:finish:)``)
  /// with the slice read from each state (nil where it is missing). `initial` gets the slice at registration,
  /// first; `receive` then gets the slice of each committed state after it, in commit order, one at a time,
  /// outside the store's lock; `startupState` gets the slice of the initial state of a store that became ready
  /// after registration, in the same order; `finish` runs when the store shuts down (at once if the observer
  /// is not registered). Returns a function that unregisters it, safe to call from anywhere.
  func observe(
    initial: @escaping (S?) -> Void, receive: @escaping @Sendable (S?) -> Void,
    startupState: @escaping @Sendable (S?) -> Void,
    finish: @escaping @Sendable () -> Void
  ) -> @Sendable () -> Void { abstract() }

  /// Registers an observer of the slice's changes (a listener, a stream of changes): `change` gets the slice
  /// before and after each committed change of it, in commit order, one call at a time across the whole store
  /// (each delivery is made under the committing dispatch's turn), never for the initial state; nothing while
  /// the slice is missing, and when it comes back the next call compares with the slice as last seen. A commit
  /// that leaves an `Equatable` slice equal is skipped. Returns a function that unregisters it.
  func observeChanges(_ change: @escaping @Sendable (S, S) -> Void, finish: @escaping @Sendable () -> Void)
    -> @Sendable () -> Void
  { abstract() }

  /// The scope of the field at `keyPath`, with id `id` (``childID(_:)``) and the fast path `applyIfIdle`.
  @usableFromInline
  func child<C: FeatureState>(_ keyPath: WritableKeyPath<S, C>, id: ScopeID, routes: ScopeRoutes<C>) -> ScopeCore<C> {
    abstract()
  }
  /// The scope of the value of the optional field at `keyPath` (id: ``optionalChildID(_:)``).
  @usableFromInline
  func child<C: FeatureState>(optional keyPath: WritableKeyPath<S, C?>, id: ScopeID, routes: ScopeRoutes<C>)
    -> ScopeCore<C>
  {
    abstract()
  }
  /// The scope of the element with identifier `elementID` of the collection at `keyPath` (id:
  /// ``elementID(_:id:)``).
  @usableFromInline
  func element<Elements: MutableCollection>(
    _ keyPath: WritableKeyPath<S, Elements>, id elementID: Elements.Element.ID, scopeID: ScopeID,
    routes: ScopeRoutes<Elements.Element>
  ) -> ScopeCore<Elements.Element> where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable {
    abstract()
  }

  // MARK: - Routes of child scopes

  /// The routes of the field at `keyPath`: this scope's, one step further.
  @inlinable
  final func fieldRoutes<C>(_ keyPath: WritableKeyPath<S, C>) -> ScopeRoutes<C> {
    routes.appending(FieldStep(keyPath))
  }

  /// The routes of the value of the optional field at `keyPath`, a scope with id `scope`.
  @inlinable
  final func childRoutes<C>(_ keyPath: WritableKeyPath<S, C?>, scope: ScopeID) -> ScopeRoutes<C> {
    routes.appending(OptionalChildStep(keyPath, scope: scope))
  }

  /// The routes of the element with identifier `id` of the collection at `keyPath`, a scope with id `scope`.
  @inlinable
  final func elementRoutes<Elements: MutableCollection & Sendable>(
    _ keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, scope: ScopeID
  ) -> ScopeRoutes<Elements.Element>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable {
    routes.appending(ElementStep(keyPath, id: id, scope: scope))
  }

  private func abstract(_ function: StaticString = #function) -> Never {
    // Broken internal invariant: every ScopeCore is a RootedScope.
    fatalError("ScopeCore.\(function) is implemented by RootedScope")
  }

  // MARK: - Describing child scopes

  /// A description of `keyPath` relative to this scope's, for example `AppState.cart`.
  final func describe(_ keyPath: AnyKeyPath) -> String {
    Self.describe(keyPath, from: id.description)
  }

  /// A description of `keyPath` of `S`, after `base` (the description of the scope whose state is `S`).
  package static func describe(_ keyPath: AnyKeyPath, from base: String) -> String {
    let id = (description: base, ())
    // A key path's own description names a stored property by its offset on Linux, which fields of zero
    // size share: a property of this scope's state is named by the runtime's field list instead.
    if let name = Self.fieldName(of: keyPath) { return id.description + "." + name }
    var text = String(describing: keyPath)
    if text.hasPrefix("\\") { text.removeFirst() }
    let prefix = String(describing: S.self)
    if text.hasPrefix(prefix) { text.removeFirst(prefix.count) }
    if !text.hasPrefix(".") && !text.hasPrefix("[") { text = "." + text }
    return id.description + text
  }

  /// The name of the stored property of `S` that `keyPath` is, if it is one.
  static func fieldName(of keyPath: AnyKeyPath) -> String? {
    var name: String?
    _ = _forEachFieldWithKeyPath(of: S.self) { field, fieldPath in
      guard fieldPath == keyPath else { return true }
      name = String(cString: field)
      return false
    }
    return name
  }

  /// The location of the field at `keyPath` of this scope's slice (which observers its commits concern).
  final func location<F>(of keyPath: WritableKeyPath<S, F>) -> ScopeLocation {
    if let offset = MemoryLayout<S>.offset(of: keyPath) {
      return id.location.appendingBytes(offset: offset, size: MemoryLayout<F>.size)
    }
    return id.location.appending(.computed)
  }

  /// The ids of this scope's children.
  @usableFromInline
  final func childID<C>(_ keyPath: WritableKeyPath<S, C>) -> ScopeID {
    ScopeID(
      identity: id.identity.appending(keyPath), location: location(of: keyPath), description: describe(keyPath))
  }

  @usableFromInline
  final func optionalChildID<C>(_ keyPath: WritableKeyPath<S, C?>) -> ScopeID {
    ScopeID(
      identity: id.identity.appending(keyPath).appending(.some), location: location(of: keyPath).appending(.some),
      description: describe(keyPath) + "?")
  }

  @usableFromInline
  final func elementID<Elements: Collection>(_ keyPath: WritableKeyPath<S, Elements>, id: some Hashable & Sendable)
    -> ScopeID
  {
    ScopeID(
      identity: self.id.identity.appending(keyPath).appending(.element(AnyHashable(id))),
      location: location(of: keyPath).appending(.element(hash: id.hashValue)),
      description: describe(keyPath) + "[id: \(id)]")
  }

  // MARK: - Equality

  /// `S`'s `==`, if `S` is `Equatable` (opened at run time): observers skip commits that leave the slice
  /// equal.
  static func equality() -> (@Sendable (S, S) -> Bool)? {
    guard S.self is any Equatable.Type else { return nil }
    // `S` is `Equatable`: the cast always succeeds.
    return { a, b in (a as! any Equatable).isEqual(to: b) }
  }
}

extension Equatable {
  /// Whether `other` is a `Self` equal to this value.
  fileprivate func isEqual(to other: some Any) -> Bool {
    guard let other = other as? Self else { return false }
    return self == other
  }
}
