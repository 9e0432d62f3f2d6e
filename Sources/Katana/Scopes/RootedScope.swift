/// A scope of a store with state `Root` and dependencies `RootDependencies`: the root store's operations,
/// applied at the scope's slice.
///
/// Everything goes through the root store's core: state updaters take their place in its one mailbox and
/// go through its interceptors (as ``ScopedStateUpdater``s, which apply at the slice), side effects run with
/// the feature's context, observers are the root store's, filtered to the slice.
@usableFromInline
final class RootedScope<Root: FeatureState, RootDependencies: SideEffectDependencyContainer, S: FeatureState>:
  ScopeCore<S>,
  @unchecked Sendable
{
  // Sendable: immutable.

  let core: StoreCore<Root, RootDependencies>
  let path: ScopePath<Root, S>

  init(core: StoreCore<Root, RootDependencies>, id: ScopeID, path: ScopePath<Root, S>, routes: ScopeRoutes<S>) {
    self.core = core
    self.path = path
    super.init(id: id, routes: routes, dispatchObservers: core.dispatchObservers)
  }

  override var rootInternals: any StoreContextInternals { core }
  override var clock: any Clock<Duration> { core.configuration.clock }

  override nonisolated(nonsending) func waitUntilReady() async throws {
    try await core.waitUntilReady()
  }

  override func slice(of root: Any) -> S? {
    (root as? Root).flatMap(path.read)
  }

  override var rootIdentity: ObjectIdentifier { ObjectIdentifier(core) }

  override var stateIfPresent: S? {
    guard !core.owner.isCurrentThread else {
      core.runtimeWarning(
        "The state of scope \(id) was read from inside a StateUpdater; this returns nil (ScopedStore.state: "
          + "\(String(reflecting: S.self))()). Updaters must only use their inout parameter.")
      return nil
    }
    return path.read(core.state)
  }

  override var unhandledOutputReceiver: (@Sendable (any FeatureOutput) async throws -> Void)? {
    core.configuration.unhandledOutputReceiver
  }

  override var rootState: any State {
    // The root is a store's state, and a store's state is a `State` (`Store<S: State, D>`).
    core.state as! any State
  }

  // MARK: - Side effects

  override nonisolated(nonsending) func dispatch<E: SideEffect, D>(_ effect: E, context: SideEffectContext<S, D>)
    async throws
  where E.StateType == S, E.Dependencies == D {
    if let dispatchObservers {
      return try await dispatchObservers.observe(effect) { try await dispatchUnobserved(effect, context: context) }
    }
    try await dispatchUnobserved(effect, context: context)
  }

  nonisolated(nonsending) func dispatchUnobserved<E: SideEffect, D>(_ effect: E, context: SideEffectContext<S, D>)
    async throws
  where E.StateType == S, E.Dependencies == D {
    if core.tracksActivity {
      return try await core.withActivity { try await dispatchUntracked(effect, context: context) }
    }
    try await dispatchUntracked(effect, context: context)
  }

  nonisolated(nonsending) func dispatchUntracked<E: SideEffect, D>(_ effect: E, context: SideEffectContext<S, D>)
    async throws
  where E.StateType == S, E.Dependencies == D {
    guard !core.sideEffectsStartDirectly, let chain = try await core.chainOnceSideEffectsMayStart(effect) else {
      try await core.recordingSideEffect(ScopedSideEffect(scope: id, effect: effect, context: context)) {
        try await core.runBody { try await effect.sideEffect(context) }
      }
      return
    }
    let item = ScopedSideEffect(scope: id, effect: effect, context: context)
    let frame = TypedSideEffectFrame<ScopedSideEffect<E>>(
      storeID: core.id, context: context, runner: core.sideEffectRunner)
    try await core.recordingSideEffect(item) { try await DispatchFrame.withFrame(frame) { try await chain(item) } }
    try await core.dispatchRedirects(frame.close().redirects, depth: 0)
  }

  override nonisolated(nonsending) func dispatch<R: ReturningSideEffect, D>(
    _ effect: R, context: SideEffectContext<S, D>
  ) async throws
    -> R.ReturnValue
  {
    if let dispatchObservers {
      return try await dispatchObservers.observe(effect) { try await dispatchUnobserved(effect, context: context) }
    }
    return try await dispatchUnobserved(effect, context: context)
  }

  nonisolated(nonsending) func dispatchUnobserved<R: ReturningSideEffect, D>(
    _ effect: R, context: SideEffectContext<S, D>
  ) async throws
    -> R.ReturnValue
  {
    if core.tracksActivity {
      return try await core.withActivity { try await dispatchUntracked(effect, context: context) }
    }
    return try await dispatchUntracked(effect, context: context)
  }

  nonisolated(nonsending) func dispatchUntracked<R: ReturningSideEffect, D>(
    _ effect: R, context: SideEffectContext<S, D>
  ) async throws
    -> R.ReturnValue
  {
    guard !core.sideEffectsStartDirectly, let chain = try await core.chainOnceSideEffectsMayStart(effect) else {
      return try await core.recordingSideEffect(ScopedReturningSideEffect(scope: id, effect: effect, context: context))
      {
        try await core.runBody { try await effect.sideEffect(context) }
      }
    }
    let item = ScopedReturningSideEffect(scope: id, effect: effect, context: context)
    let frame = ReturningSideEffectFrame<ScopedReturningSideEffect<R, S, D>>(
      storeID: core.id, context: context, runner: core.sideEffectRunner)
    try await core.recordingSideEffect(item) { try await DispatchFrame.withFrame(frame) { try await chain(item) } }
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
    guard let dispatchObservers else { return sendUnobserved(effect, context: context) }
    return dispatchObservers.observe(effect) { sendUnobserved(effect, context: context) }
  }

  func sendUnobserved<E: SideEffect, D>(_ effect: E, context: SideEffectContext<S, D>) -> DispatchHandle<Void>
  where E.StateType == S, E.Dependencies == D {
    core.enqueueSideEffect(ScopedSideEffect(scope: id, effect: effect, context: context)) { [self] in
      try await dispatchUnobserved(effect, context: context)
    }
  }

  override func send<R: ReturningSideEffect, D>(_ effect: R, context: SideEffectContext<S, D>) -> DispatchHandle<
    R.ReturnValue
  > {
    guard let dispatchObservers else { return sendUnobserved(effect, context: context) }
    return dispatchObservers.observe(effect) { sendUnobserved(effect, context: context) }
  }

  func sendUnobserved<R: ReturningSideEffect, D>(_ effect: R, context: SideEffectContext<S, D>) -> DispatchHandle<
    R.ReturnValue
  > {
    core.enqueueSideEffect(ScopedReturningSideEffect(scope: id, effect: effect, context: context)) { [self] in
      try await dispatchUnobserved(effect, context: context)
    }
  }

  // MARK: - Type-erased dispatch

  override nonisolated(nonsending) func anyDispatch<D>(_ item: any Dispatchable, context: SideEffectContext<S, D>)
    async throws
    -> any Sendable
  {
    // An item that already came through a scope keeps its own.
    if item is any ScopedDispatchable {
      return try await core.anyDispatch(item)
    }
    guard let dispatchObservers else { return try await anyDispatchUnobserved(item, context: context) }
    return try await dispatchObservers.observe(item) { try await anyDispatchUnobserved(item, context: context) }
  }

  nonisolated(nonsending) func anyDispatchUnobserved<D>(_ item: any Dispatchable, context: SideEffectContext<S, D>)
    async throws
    -> any Sendable
  {
    switch try StoreCore<S, D>.classify(item) {
    case .updater(let updater):
      let apply: @Sendable (inout S) throws -> Void = { try StoreCore<S, D>.applyErased(updater, to: &$0) }
      if try routes.applyIfIdle(commitFilter, apply) { return () }
      try await routes.dispatch(item, id, apply)
      return ()
    case .sideEffect(let effect):
      return try await core.anyDispatchUnobserved(ScopedAnySideEffect(scope: id, effect: effect, context: context))
    }
  }

  override func anySend<D>(_ item: any Dispatchable, context: SideEffectContext<S, D>) -> DispatchHandle<any Sendable> {
    if item is any ScopedDispatchable {
      return core.anySend(item)
    }
    guard let dispatchObservers else { return anySendUnobserved(item, context: context) }
    return dispatchObservers.observe(item) { anySendUnobserved(item, context: context) }
  }

  func anySendUnobserved<D>(_ item: any Dispatchable, context: SideEffectContext<S, D>) -> DispatchHandle<any Sendable>
  {
    let kind: StoreCore<S, D>.ItemKind
    do {
      kind = try StoreCore<S, D>.classify(item)
    } catch {
      return .failed(error)
    }
    switch kind {
    case .updater(let updater):
      // The typed route (``ScopeCore/sendUnobserved(_:)``), whose handle is read as `any Sendable`: one job, one
      // storage, so the handle cancels the job and sees a deadlock as the typed one does.
      let apply: @Sendable (inout S) throws -> Void = { try StoreCore<S, D>.applyErased(updater, to: &$0) }
      do {
        if try routes.applyIfIdle(commitFilter, apply) { return DispatchHandle(erasing: succeededHandle) }
      } catch {
        return .failed(error)
      }
      return DispatchHandle(erasing: routes.enqueue(item, id, apply))
    case .sideEffect(let effect):
      return core.anySendUnobserved(ScopedAnySideEffect(scope: id, effect: effect, context: context))
    }
  }

  // MARK: - Observation

  override func observe(
    initial: @escaping (S?) -> Void, receive: @escaping @Sendable (S?) -> Void,
    startupState: @escaping @Sendable (S?) -> Void,
    finish: @escaping @Sendable () -> Void
  ) -> @Sendable () -> Void {
    let path = self.path
    // The path may run key-path getters: `observe` calls these closures outside the lock.
    let unsubscribe = core.observe(
      location: id.location, needsOldState: false, start: .afterRegistration { initial(path.read($0)) },
      receive: { _, new in receive(path.read(new)) }, startupState: { startupState(path.read($0)) }, finish: finish)
    return unsubscribe ?? {}
  }

  override func observeChanges(_ change: @escaping @Sendable (S, S) -> Void, finish: @escaping @Sendable () -> Void)
    -> @Sendable () -> Void
  {
    let memory = SliceChanges(path: path, equality: Self.equality())
    // Registered live, with the root state kept for later: the slice at registration is read (a key path's
    // getter may run) by the first delivery, which every later one follows under the store's turn.
    let unsubscribe = core.observe(
      location: id.location, needsOldState: false, start: .underLock { memory.start(at: $0) },
      receive: { _, new in
        if let (old, new) = memory.change(to: new) { change(old, new) }
      }, startupState: { memory.start(at: $0) }, finish: finish)
    return unsubscribe ?? {}
  }

  // MARK: - Child scopes

  override func child<C: FeatureState>(_ keyPath: WritableKeyPath<S, C>, id: ScopeID, routes: ScopeRoutes<C>)
    -> ScopeCore<C>
  {
    RootedScope<Root, RootDependencies, C>(
      core: core, id: id, path: path.appending(keyPath, offset: MemoryLayout<S>.offset(of: keyPath)), routes: routes)
  }

  override func child<C: FeatureState>(optional keyPath: WritableKeyPath<S, C?>, id: ScopeID, routes: ScopeRoutes<C>)
    -> ScopeCore<C>
  {
    RootedScope<Root, RootDependencies, C>(
      core: core, id: id, path: path.appending(optional: keyPath, offset: MemoryLayout<S>.offset(of: keyPath)),
      routes: routes)
  }

  override func element<Elements: MutableCollection>(
    _ keyPath: WritableKeyPath<S, Elements>, id elementID: Elements.Element.ID, scopeID: ScopeID,
    routes: ScopeRoutes<Elements.Element>
  ) -> ScopeCore<Elements.Element> where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable {
    RootedScope<Root, RootDependencies, Elements.Element>(
      core: core, id: scopeID,
      path: path.appending(keyPath, offset: MemoryLayout<S>.offset(of: keyPath), id: elementID), routes: routes)
  }
}

extension RootedScope where S == Root {
  /// The scope of a store's whole state, from which the app mounts its features. Inlined into the app's code,
  /// so that the routes of every scope mounted from it run specialised for the app's state.
  @inlinable
  convenience init(root core: StoreCore<Root, RootDependencies>) {
    let applyToRoot: RawScopeApplier = { [core] filter, body in
      guard core.sendsApplyDirectly else { return false }
      return try core.applyIfIdle(touching: filter) { root in
        // Read under the store's lock: see ``StoreCore/checkCancellationAtArrival()``.
        try StoreCore<Root, RootDependencies>.checkCancellationAtArrival()
        try withUnsafeMutablePointer(to: &root) { try body(UnsafeMutableRawPointer($0)) }
      }
    }
    self.init(
      root: core,
      routes: ScopeRoutes(
        // Slices at a fixed offset apply through `applyToRoot` directly; this serves the root's own scope and the
        // slices beneath an optional or an element.
        applyIfIdle: { filter, body in
          try applyToRoot(filter) { root in try body(&root.assumingMemoryBound(to: Root.self).pointee) }
        },
        dispatch: { [core] base, scope, apply in
          if core.tracksActivity {
            try await core.withActivity { try await core.dispatchScopedUpdater(base, scope: scope, apply: apply) }
          } else {
            try await core.dispatchScopedUpdater(base, scope: scope, apply: apply)
          }
        },
        enqueue: { [core] base, scope, apply in
          core.enqueueUpdater(
            ScopedStateUpdater(scope: scope, base: base, apply: apply), apply: apply,
            frame: { [id = core.id] in UpdaterFrame<Root>(storeID: id, scoped: ()) })
        },
        fixedPlace: (applyToRoot, 0)))
  }

  @usableFromInline
  convenience init(root core: StoreCore<Root, RootDependencies>, routes: ScopeRoutes<Root>) {
    self.init(
      core: core, id: ScopeID(identity: .root, location: .root, description: String(describing: Root.self)),
      path: ScopePath<Root, Root>.identity(), routes: routes)
  }
}

extension StoreCore {
  /// Dispatches a state updater that came through a scope, when its turn comes, through the interceptors
  /// (which see it as a ``ScopedStateUpdater``); `apply` applies it at the scope's place.
  @inlinable
  nonisolated(nonsending) func dispatchScopedUpdater(
    _ base: any Dispatchable, scope: ScopeID, apply: @escaping @Sendable (inout S) throws -> Void
  ) async throws {
    try await dispatchUpdaterWaitingForTurn(
      ScopedStateUpdater(scope: scope, base: base, apply: apply), applying: UpdaterFrame<S>.applyingScoped,
      apply: apply, depth: 0)
  }
}

/// What a scope's listener or stream of changes saw last, read lazily from root states: the state at
/// registration is kept as it is (registration runs no user code under the store's lock) and its slice read by
/// the first delivery.
final class SliceChanges<Root, S: FeatureState>: @unchecked Sendable {
  // Sendable: `seen` is only touched by deliveries, which the store's turn serialises, and by `start(at:)`, under
  // the store's lock before any delivery or while the store starts (before any commit); the lock hands it over.

  private struct Seen {
    /// The root state at registration (or start-up), whose slice is not read yet.
    var pending: Root?
    /// The last slice seen, nil until one was present.
    var slice: S?
  }

  private let path: ScopePath<Root, S>
  private let equality: (@Sendable (S, S) -> Bool)?
  private let seen = Locked(Seen())

  init(path: ScopePath<Root, S>, equality: (@Sendable (S, S) -> Bool)?) {
    self.path = path
    self.equality = equality
  }

  /// Takes `root` as the state to compare the next change with.
  func start(at root: Root) {
    let replaced = seen.withLock { seen -> Seen in
      defer { seen = Seen(pending: root, slice: nil) }
      return seen
    }
    // The previous value (a state) is released outside the lock.
    withExtendedLifetime(replaced) {}
  }

  /// Records the slice of `root`; returns the change from the last slice seen, or nil if there is none to report
  /// (the slice is missing, was never seen, or is equal).
  func change(to root: Root) -> (old: S, new: S)? {
    let new = path.read(root)
    // One critical section per delivery; the first one also takes the state at registration.
    let (pending, last) = seen.withLock { seen -> (Root?, S?) in
      let taken = (seen.pending, seen.slice)
      seen.pending = nil
      if let new { seen.slice = new }
      return taken
    }
    var old = last
    if let pending {
      // The slice at registration is read outside the lock (a key path's getter may run); missing now, the
      // slice keeps it as the last one seen.
      old = path.read(pending)
      if new == nil { seen.withLock { $0.slice = old } }
    }
    guard let old, let new else { return nil }
    if let equality, equality(old, new) { return nil }
    return (old, new)
  }
}
