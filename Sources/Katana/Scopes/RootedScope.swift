/// A scope of a store with state `Root` and dependencies `RootDependencies`: the root store's operations,
/// applied at the scope's slice.
///
/// Everything goes through the root store's core: state updaters take their place in its one mailbox and
/// go through its interceptors (as ``ScopedStateUpdater``s, which apply at the slice), side effects run with
/// the feature's context, observers are the root store's, filtered to the slice.
@usableFromInline
final class RootedScope<Root: State, RootDependencies: SideEffectDependencyContainer, S: State>: ScopeCore<S>,
  @unchecked Sendable
{
  // Sendable: immutable.

  let core: StoreCore<Root, RootDependencies>
  let path: ScopePath<Root, S>

  init(
    core: StoreCore<Root, RootDependencies>, id: ScopeID, path: ScopePath<Root, S>,
    applyIfIdle: @escaping ScopeApplier<S>
  ) {
    self.core = core
    self.path = path
    super.init(id: id, applyIfIdle: applyIfIdle)
  }

  override var rootInternals: any StoreContextInternals { core }
  override var clock: any Clock<Duration> { core.configuration.clock }

  override func waitUntilReady() async throws {
    try await core.waitUntilReady()
  }

  override var stateIfPresent: S? {
    guard !core.owner.isCurrentThread else {
      core.runtimeWarning(
        "The state of scope \(id) was read from inside a StateUpdater; this returns nil (ScopedStore.state: "
          + "\(String(reflecting: S.self))()). Updaters must only use their inout parameter.")
      return nil
    }
    return path.read(core.state)
  }

  // MARK: - State updaters

  override func dispatch<U: StateUpdater>(_ updater: U) async throws where U.StateType == S {
    if core.tracksActivity {
      return try await core.withActivity { try await dispatchUpdater(updater, apply: { updater.updateState(&$0) }) }
    }
    try await dispatchUpdater(updater, apply: { updater.updateState(&$0) })
  }

  /// Applies `apply` at the slice: at once if the store is idle and has no interceptors, otherwise when the
  /// updater's turn comes, through the interceptors (which see a ``ScopedStateUpdater``).
  func dispatchUpdater(_ updater: any Dispatchable, apply: @escaping @Sendable (inout S) throws -> Void)
    async throws
  {
    let path = self.path
    if try applyIfIdle(commitFilter, apply) { return }
    try await core.dispatchUpdaterWaitingForTurn(
      ScopedStateUpdater(scope: id, base: updater, path: path, apply: apply),
      frame: UpdaterFrame<Root>(storeID: core.id), apply: { root in try path.modify(&root, apply) }, depth: 0)
  }

  override func send<U: StateUpdater>(_ updater: U) -> DispatchHandle<Void> where U.StateType == S {
    sendUpdater(updater, apply: { updater.updateState(&$0) })
  }

  func sendUpdater(_ updater: any Dispatchable, apply: @escaping @Sendable (inout S) throws -> Void)
    -> DispatchHandle<Void>
  {
    let path = self.path
    let mutate: @Sendable (inout Root) throws -> Void = { root in try path.modify(&root, apply) }
    do {
      if try applyIfIdle(commitFilter, apply) { return succeededHandle }
    } catch {
      return .failed(error)
    }
    return core.enqueueUpdater(
      ScopedStateUpdater(scope: id, base: updater, path: path, apply: apply), value: (), apply: mutate,
      frame: { [id = core.id] in UpdaterFrame<Root>(storeID: id) })
  }

  // MARK: - Side effects

  override func dispatch<E: SideEffect, D>(_ effect: E, context: SideEffectContext<S, D>) async throws
  where E.StateType == S, E.Dependencies == D {
    if core.tracksActivity {
      return try await core.withActivity { try await dispatchUntracked(effect, context: context) }
    }
    try await dispatchUntracked(effect, context: context)
  }

  func dispatchUntracked<E: SideEffect, D>(_ effect: E, context: SideEffectContext<S, D>) async throws
  where E.StateType == S, E.Dependencies == D {
    guard !core.sideEffectsStartDirectly, let chain = try await core.chainOnceSideEffectsMayStart() else {
      try await core.runBody { try await effect.sideEffect(context) }
      return
    }
    let item = ScopedSideEffect(scope: id, effect: effect, context: context)
    let frame = TypedSideEffectFrame<ScopedSideEffect<E>>(
      storeID: core.id, context: context, runner: core.sideEffectRunner)
    try await DispatchFrame.withFrame(frame) { try await chain(item) }
    try await core.dispatchRedirects(frame.close().redirects, depth: 0)
  }

  override func dispatch<R: ReturningSideEffect, D>(_ effect: R, context: SideEffectContext<S, D>) async throws
    -> R.ReturnValue
  {
    if core.tracksActivity {
      return try await core.withActivity { try await dispatchUntracked(effect, context: context) }
    }
    return try await dispatchUntracked(effect, context: context)
  }

  func dispatchUntracked<R: ReturningSideEffect, D>(_ effect: R, context: SideEffectContext<S, D>) async throws
    -> R.ReturnValue
  {
    guard !core.sideEffectsStartDirectly, let chain = try await core.chainOnceSideEffectsMayStart() else {
      return try await core.runBody { try await effect.sideEffect(context) }
    }
    let item = ScopedReturningSideEffect(scope: id, effect: effect, context: context)
    let frame = ReturningSideEffectFrame<ScopedReturningSideEffect<R, S, D>>(
      storeID: core.id, context: context, runner: core.sideEffectRunner)
    try await DispatchFrame.withFrame(frame) { try await chain(item) }
    let record = frame.close()
    try await core.dispatchRedirects(record.redirects, depth: 0)
    guard let value = record.value else {
      throw StoreError.returnValueUnavailable(String(reflecting: R.self))
    }
    guard let typed = value as? R.ReturnValue else {
      throw StoreError.returnValueTypeMismatch(
        expected: String(reflecting: R.ReturnValue.self), actual: typeName(of: value))
    }
    return typed
  }

  override func send<E: SideEffect, D>(_ effect: E, context: SideEffectContext<S, D>) -> DispatchHandle<Void>
  where E.StateType == S, E.Dependencies == D {
    core.enqueueSideEffect(ScopedSideEffect(scope: id, effect: effect, context: context)) { [self] in
      try await dispatch(effect, context: context)
    }
  }

  override func send<R: ReturningSideEffect, D>(_ effect: R, context: SideEffectContext<S, D>) -> DispatchHandle<
    R.ReturnValue
  > {
    core.enqueueSideEffect(ScopedReturningSideEffect(scope: id, effect: effect, context: context)) { [self] in
      try await dispatch(effect, context: context)
    }
  }

  // MARK: - Type-erased dispatch

  override func anyDispatch<D>(_ item: any Dispatchable, context: SideEffectContext<S, D>) async throws
    -> any Sendable
  {
    // An item that already came through a scope keeps its own.
    if item is any ScopedDispatchable {
      return try await core.anyDispatch(item)
    }
    switch try StoreCore<S, D>.classify(item) {
    case .updater(let updater):
      let apply: @Sendable (inout S) throws -> Void = { try StoreCore<S, D>.applyErased(updater, to: &$0) }
      if core.tracksActivity {
        try await core.withActivity { try await dispatchUpdater(item, apply: apply) }
      } else {
        try await dispatchUpdater(item, apply: apply)
      }
      return ()
    case .sideEffect(let effect):
      return try await core.anyDispatch(ScopedAnySideEffect(scope: id, effect: effect, context: context))
    }
  }

  override func anySend<D>(_ item: any Dispatchable, context: SideEffectContext<S, D>) -> DispatchHandle<any Sendable> {
    if item is any ScopedDispatchable {
      return core.anySend(item)
    }
    let kind: StoreCore<S, D>.ItemKind
    do {
      kind = try StoreCore<S, D>.classify(item)
    } catch {
      return .failed(error)
    }
    switch kind {
    case .updater(let updater):
      let handle = sendUpdater(item, apply: { try StoreCore<S, D>.applyErased(updater, to: &$0) })
      let erased = DispatchHandle(storage: HandleStorage<any Sendable>.make())
      handle.whenComplete { result in erased.storage.complete(result.map { () as any Sendable }) }
      return erased
    case .sideEffect(let effect):
      return core.anySend(ScopedAnySideEffect(scope: id, effect: effect, context: context))
    }
  }

  // MARK: - Observation

  override func observe(
    initial: (S?) -> Void, receive: @escaping @Sendable (S?) -> Void, finish: @escaping @Sendable () -> Void
  ) -> @Sendable () -> Void {
    guard !core.owner.isCurrentThread else {
      core.runtimeWarning("A scope was observed from inside a StateUpdater; the observer was not added.")
      finish()
      return {}
    }
    let path = self.path
    let registered = core.withLock { state -> (UInt64, Root)? in
      if case .shutDown = state.lifecycle.phase { return nil }
      let id = state.makeID()
      state.observers.add(
        StateSubscriber<Root>(
          id: id, needsOldState: false, location: self.id.location, receive: { _, new in receive(path.read(new)) },
          finish: finish))
      return (id, state.state)
    }
    guard let (id, root) = registered else {
      finish()
      return {}
    }
    // The path may run key-path getters: read the first value outside the lock.
    initial(path.read(root))
    return { [weak core] in
      let removed = core?.withLock { $0.observers.removeSubscriber(id) }
      withExtendedLifetime(removed) {}
    }
  }

  // MARK: - Child scopes

  override func child<C: State>(_ keyPath: WritableKeyPath<S, C>, id: ScopeID, applyIfIdle: @escaping ScopeApplier<C>)
    -> ScopeCore<C>
  {
    RootedScope<Root, RootDependencies, C>(
      core: core, id: id, path: path.appending(keyPath), applyIfIdle: applyIfIdle)
  }

  override func child<C: State>(
    optional keyPath: WritableKeyPath<S, C?>, id: ScopeID, applyIfIdle: @escaping ScopeApplier<C>
  ) -> ScopeCore<C> {
    RootedScope<Root, RootDependencies, C>(
      core: core, id: id, path: path.appending(optional: keyPath, scope: id), applyIfIdle: applyIfIdle)
  }

  override func element<Elements: MutableCollection>(
    _ keyPath: WritableKeyPath<S, Elements>, id elementID: Elements.Element.ID, scopeID: ScopeID,
    applyIfIdle: @escaping ScopeApplier<Elements.Element>
  ) -> ScopeCore<Elements.Element> where Elements.Element: State & Identifiable, Elements.Element.ID: Sendable {
    RootedScope<Root, RootDependencies, Elements.Element>(
      core: core, id: scopeID, path: path.appending(keyPath, id: elementID, scope: scopeID),
      applyIfIdle: applyIfIdle)
  }
}

extension RootedScope where S == Root {
  /// The scope of a store's whole state, from which the app mounts its features. Inlined into the app's code,
  /// so that the fast path of every scope mounted from it runs specialised for the app's state.
  @inlinable
  convenience init(root core: StoreCore<Root, RootDependencies>) {
    self.init(
      root: core,
      applyIfIdle: { [core] filter, body in
        guard core.sendsApplyDirectly else { return false }
        return try core.applyIfIdle(touching: filter) { root in
          // Read under the store's lock: see ``StoreCore/checkCancellationAtArrival()``.
          try StoreCore<Root, RootDependencies>.checkCancellationAtArrival()
          try body(&root)
        }
      })
  }

  @usableFromInline
  convenience init(root core: StoreCore<Root, RootDependencies>, applyIfIdle: @escaping ScopeApplier<Root>) {
    self.init(
      core: core, id: ScopeID(location: .root, description: String(describing: Root.self)),
      path: ScopePath<Root, Root>.identity(), applyIfIdle: applyIfIdle)
  }
}
