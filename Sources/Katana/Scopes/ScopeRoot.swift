/// A mutation of the root state, given its address: how a scope's code, which does not know the root state's
/// type, reaches its slice in place.
@usableFromInline typealias RawMutation = (UnsafeMutableRawPointer) throws -> Void

/// The root store as its scopes see it: its operations, with the root state's type erased.
///
/// A feature's code knows its own state and the items it dispatches, not the root state; the root store
/// knows the root state, not the feature's items. This class is where the two meet without giving up
/// specialised code on either side: it is made where the first scope is made (in code that knows the root
/// state's type, so its closures are specialised for it), and the scope's code hands it mutations of the
/// root state's address, specialised for the item. Nothing is allocated per dispatch on the way.
///
/// One per scope made on a store (a nested scope shares its parent's). It keeps the store's core alive, not
/// the store (like a side-effect context).
@usableFromInline
final class ScopeRoot: Sendable {
  @usableFromInline let storeID: ObjectIdentifier
  /// The root state's type, which routed items check before applying (``ScopeRoutedUpdater``).
  @usableFromInline let stateType: ObjectIdentifier
  let stateTypeName: String
  @usableFromInline let hasInterceptors: Bool
  @usableFromInline let tracksActivity: Bool
  @usableFromInline let owner: ThreadOwner
  @usableFromInline let readyFlag: AtomicFlag
  @usableFromInline let sideEffectRunner: (any SideEffectRunner)?
  let clock: any Clock<Duration>
  /// The store core, for the effect registry, attachments and warnings.
  let internals: any StoreContextInternals

  // Hot paths, specialised for the root state.

  /// Applies `mutate` right away if the store is idle (``StoreCore/applyIfIdle(at:_:)``).
  @usableFromInline let applyIfIdle: @Sendable (_ scope: ScopeNode, _ mutate: RawMutation) throws -> Bool
  /// Waits for the turn and applies `mutate`, through the interceptors with `item`
  /// (``StoreCore/dispatchUpdaterWaitingForTurn(_:frame:apply:depth:at:)``).
  @usableFromInline let dispatchWaitingForTurn:
    nonisolated(nonsending) @Sendable (_ item: any Dispatchable, _ scope: ScopeNode, _ mutate: RawMutation)
      async throws -> Void
  /// Enqueues a sent updater (``StoreCore/enqueueUpdater(_:value:apply:frame:at:)``).
  @usableFromInline let enqueueUpdater:
    @Sendable (_ item: any Dispatchable, _ scope: ScopeNode, _ mutate: @escaping @Sendable RawMutation) ->
      DispatchHandle<Void>
  /// Runs `read` with the address of the latest committed state, under the store's lock; returns false
  /// (without running it) when called from inside a state updater.
  @usableFromInline let readUnderLock: @Sendable (_ read: (UnsafeRawPointer) -> Void) -> Bool

  // The rest: start-up waits, side effects, observation set-up.

  let operations: Operations

  /// What scopes need from the store besides the hot paths.
  struct Operations: Sendable {
    var anyDispatch: nonisolated(nonsending) @Sendable (any Dispatchable) async throws -> any Sendable
    var anySend: @Sendable (any Dispatchable) -> DispatchHandle<any Sendable>
    var enqueue: @Sendable (_ item: any Dispatchable, _ handle: any HandleCompletion, _ work: MailboxJob.Work) -> Void
    var chainOnceSideEffectsMayStart: nonisolated(nonsending) @Sendable () async throws -> StoreInterceptorNext?
    var dispatchRedirects: nonisolated(nonsending) @Sendable ([any Dispatchable]) async throws -> Void
    var beginActivity: @Sendable () -> Void
    var endActivity: @Sendable () -> Void
    var copyState: @Sendable (_ read: (UnsafeRawPointer) -> Void) -> Void
    var subscribe:
      @Sendable (
        _ location: ScopeLocation, _ isSubscribed: AtomicFlag,
        _ make: (_ id: UInt64, _ state: UnsafeRawPointer) -> SliceObserverParts
      ) -> UInt64?
    var unsubscribe: @Sendable (UInt64) -> Void
    var isReady: @Sendable () -> Bool
    var waitUntilReady: nonisolated(nonsending) @Sendable () async throws -> Void
  }

  @inlinable
  init<S: State, D: SideEffectDependencyContainer>(core: StoreCore<S, D>) {
    storeID = core.id
    stateType = ObjectIdentifier(S.self)
    hasInterceptors = core.hasInterceptors
    tracksActivity = core.tracksActivity
    owner = core.owner
    readyFlag = core.readyFlag
    sideEffectRunner = core.sideEffectRunner
    applyIfIdle = { scope, mutate in
      try core.applyIfIdle(at: scope) { state in
        try withUnsafeMutablePointer(to: &state) { try mutate(UnsafeMutableRawPointer($0)) }
      }
    }
    dispatchWaitingForTurn = { item, scope, mutate in
      try await core.dispatchUpdaterWaitingForTurn(
        item, frame: UpdaterFrame<S>(storeID: core.id),
        apply: { state in try withUnsafeMutablePointer(to: &state) { try mutate(UnsafeMutableRawPointer($0)) } },
        depth: 0, at: scope)
    }
    enqueueUpdater = { item, scope, mutate in
      core.enqueueUpdater(
        item, value: (),
        apply: { state in try withUnsafeMutablePointer(to: &state) { try mutate(UnsafeMutableRawPointer($0)) } },
        frame: { UpdaterFrame<S>(storeID: core.id) }, at: scope)
    }
    readUnderLock = { read in
      guard !core.owner.isCurrentThread else { return false }
      core.withLock { withUnsafePointer(to: &$0.state) { read(UnsafeRawPointer($0)) } }
      return true
    }
    (stateTypeName, clock, internals, operations) = core.scopeOperations()
  }
}

/// What a slice observer hands the root store when it registers.
struct SliceObserverParts: Sendable {
  /// Called with the address of each committed state the observer's slice may have changed in.
  var receive: @Sendable (UnsafeRawPointer) -> Void
  /// Called when the store shuts down.
  var finish: @Sendable () -> Void
}

extension StoreCore {
  /// The parts of a ``ScopeRoot`` off the hot paths; plain internal code, specialised or not.
  @usableFromInline func scopeOperations() -> (String, any Clock<Duration>, any StoreContextInternals, ScopeRoot.Operations)
  {
    let operations = ScopeRoot.Operations(
      anyDispatch: { [self] item in try await anyDispatch(item) },
      anySend: { [self] item in anySend(item) },
      enqueue: { [self] item, handle, work in enqueue(item, isUpdater: false, handle: handle, work: work) },
      chainOnceSideEffectsMayStart: { [self] in try await chainOnceSideEffectsMayStart() },
      dispatchRedirects: { [self] items in try await dispatchRedirects(items, depth: 0) },
      beginActivity: { [self] in withLock { $0.lifecycle.beginActivity() } },
      endActivity: { [self] in endActivity() },
      copyState: { [self] read in
        let state = self.state
        withUnsafePointer(to: state) { read(UnsafeRawPointer($0)) }
      },
      subscribe: { [self] location, isSubscribed, make in
        subscribeSlice(at: location, isSubscribed: isSubscribed, make: make)
      },
      unsubscribe: { [self] id in unsubscribeSlice(id) },
      isReady: { [self] in isReady },
      waitUntilReady: { [self] in try await waitUntilReady() })
    return (String(reflecting: S.self), configuration.clock, self, operations)
  }

  /// Registers an observer of a scope's slice. `make` runs under the lock with the current state (it reads
  /// the slice there, running only the scope's path, as an updater through the scope would).
  ///
  /// - Returns: The observer's identifier, or nil if it was not registered (the store has shut down, or the
  ///   call comes from inside a state updater).
  func subscribeSlice(
    at location: ScopeLocation, isSubscribed: AtomicFlag, make: (UInt64, UnsafeRawPointer) -> SliceObserverParts
  ) -> UInt64? {
    guard !owner.isCurrentThread else {
      runtimeWarning("A scope was observed from inside a StateUpdater; the observer was not added.")
      return nil
    }
    let registered = withLock { core -> (UInt64, ReleasedSlices<S>)? in
      if case .shutDown = core.lifecycle.phase { return nil }
      let id = core.makeID()
      let parts = withUnsafePointer(to: &core.state) { make(id, UnsafeRawPointer($0)) }
      let subscriber = StateSubscriber<S>(
        id: id, needsOldState: false,
        receive: { _, new in withUnsafePointer(to: new) { parts.receive(UnsafeRawPointer($0)) } },
        finish: parts.finish)
      let released = core.observers.add(
        slice: SliceEntry(location: location, subscriber: subscriber, isSubscribed: isSubscribed))
      return (id, released)
    }
    guard let (id, released) = registered else { return nil }
    withExtendedLifetime(released) {}
    return id
  }

  /// Removes slice observer `id`, releasing it outside the lock. From inside a state updater it only stays
  /// unsubscribed (its flag is cleared), and is dropped at the next change of observers.
  func unsubscribeSlice(_ id: UInt64) {
    guard !owner.isCurrentThread else { return }
    let released = withLock { $0.observers.removeSlice(id) }
    withExtendedLifetime(released) {}
  }
}
