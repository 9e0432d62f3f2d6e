#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The engine behind ``Store``: the state, the mailbox, observers and store-owned tasks, behind one lock.
///
/// ``Store`` (the actor) and ``SideEffectContext`` are thin façades over it. Dispatch never hops onto an
/// actor: the order of state updaters comes from the mailbox, which is decided under the lock when a
/// dispatch arrives, so task priorities cannot reorder it, and an updater with no interceptor costs one
/// lock acquisition.
///
/// Rules kept throughout:
/// - the lock is never held while user code runs, except a state updater's pure `updateState` (SPEC 4.5);
///   re-entry from it is detected through ``ThreadOwner`` and answered without deadlocking;
/// - listeners, stream deliveries, interceptors and side effects run outside the lock;
/// - an updater's commit and its delivery to observers happen while it holds the turn, so observers see
///   changes one at a time, in commit order.
///
/// The hot paths are `@inlinable`, so that they are specialised for the client's state type: run
/// unspecialised, generic code spends most of its time looking up type metadata (measured by
/// `katana-benchmarks`: an awaited updater dispatch went from about 735 ns to a few tens of ns).
@usableFromInline
final class StoreCore<S: State, D: SideEffectDependencyContainer>: @unchecked Sendable {
  // Sendable: mutable state lives in `storage`, only touched under its lock; the rest is immutable or atomic.

  @usableFromInline let storage: LockedBuffer<CoreState<S, D>>
  @usableFromInline let owner = ThreadOwner()
  /// Set once the store is ready (and cleared at shutdown): lets side effects start without the lock.
  @usableFromInline let readyFlag = AtomicFlag()
  private let warnings = Locked(Set<String>())
  /// Whether a caller may go on, must wait in the mailbox (with this entry identifier), or fails.
  @usableFromInline
  enum Admission<Proceed> {
    case proceed(Proceed)
    case wait(UInt64)
    case fail(any Error)
  }

  /// What the final `next` of an updater chain found under the lock.
  @usableFromInline
  enum ChainAttempt {
    case done(Commit<S>?)
    case notDispatchedType(UpdaterFrame<S>)
  }

  /// What `send` does with a new job.
  @usableFromInline
  enum EnqueueDecision {
    case queued(waitingCount: Int)
    case startPump
    case startSideEffect
    case fail(any Error)
  }

  /// What shutdown collects under the lock, to act on outside it.
  private struct ShutdownWork {
    var entries: [MailboxEntry]
    var waiters: [UnsafeContinuation<Void, any Error>]
    var subscribers: [StateSubscriber<S>]
    var tasks: [Task<Void, Never>]
    var handlers: [@Sendable () -> Void]
    var chain: StoreInterceptorNext
  }

  /// Whether the store has interceptors; fixed at initialisation.
  @usableFromInline let hasInterceptors: Bool
  @usableFromInline let configuration: StoreConfiguration
  /// ``StoreConfiguration/tracksActivity``, fixed at initialisation.
  @usableFromInline let tracksActivity: Bool
  /// `StoreConfiguration.sideEffectRunner`, fixed at initialisation.
  @usableFromInline let sideEffectRunner: (any SideEffectRunner)?

  @usableFromInline
  init(initialState: S, hasInterceptors: Bool, configuration: StoreConfiguration) {
    storage = LockedBuffer.make(CoreState(state: initialState))
    self.hasInterceptors = hasInterceptors
    self.configuration = configuration
    self.tracksActivity = configuration.tracksActivity
    self.sideEffectRunner = configuration.sideEffectRunner
  }

  /// Runs a side-effect body, through the configured runner if there is one.
  @inlinable @inline(__always)
  nonisolated(nonsending) func runBody<T: Sendable>(_ body: sending nonisolated(nonsending) () async throws -> T)
    async throws -> T
  {
    guard let sideEffectRunner else { return try await body() }
    return try await sideEffectRunner.run(body)
  }

  @inlinable
  var id: ObjectIdentifier { ObjectIdentifier(self) }

  @inlinable @inline(__always)
  func withLock<Result>(_ body: (inout CoreState<S, D>) throws -> Result) rethrows -> Result {
    try storage.withLock(body)
  }

  /// Runs `body` under the lock with the calling thread marked as running a state updater, so that a
  /// re-entrant call from the updater is detected instead of deadlocking.
  @inlinable @inline(__always)
  func withLockRunningUpdater<Result>(_ body: (inout CoreState<S, D>) throws -> Result) rethrows
    -> Result
  {
    try storage.withLock { core in
      owner.markCurrentThread()
      defer { owner.clear() }
      return try body(&core)
    }
  }

  // MARK: - Reading state

  /// The latest committed state.
  @inlinable
  var state: S {
    guard !owner.isCurrentThread else { return reentrantStateRead() }
    return withLock { $0.state }
  }

  @usableFromInline
  func reentrantStateRead() -> S {
    runtimeWarning(
      "store.state was read from inside a StateUpdater of \(String(reflecting: S.self)); this returns "
        + "\(String(reflecting: S.self))(). Updaters must only use their inout parameter.")
    return S()
  }

  @inlinable
  var isReady: Bool {
    withLock { $0.phase.isReady }
  }

  // MARK: - Typed dispatch

  /// The fast path of an updater dispatch: applies `updater` synchronously, and returns true, if the store
  /// is ready, nothing is ahead in the mailbox and there is no interceptor. Listeners are called before it
  /// returns. Returns false when the caller must take ``dispatchWaitingForTurn(_:)``.
  ///
  /// - Throws: `CancellationError` if the calling task is already cancelled (the updater is withdrawn).
  ///
  /// Never inlined into the async caller on purpose: inside an async function, temporaries live in memory
  /// taken from the task allocator; in this synchronous function they live on the thread's stack.
  @inlinable @inline(never)
  func dispatchWithoutWaiting<U: StateUpdater>(_ updater: U) throws -> Bool where U.StateType == S {
    if Task.isCancelled { throw CancellationError() }
    guard !hasInterceptors else { return false }
    return applyIfIdle { updater.updateState(&$0) }
  }

  /// ``dispatchWithoutWaiting(_:)`` for a type-erased updater.
  @inlinable @inline(never)
  func dispatchWithoutWaiting(erased updater: any AnyStateUpdater) throws -> Bool {
    if Task.isCancelled { throw CancellationError() }
    guard !hasInterceptors else { return false }
    return try applyIfIdle { try Self.applyErased(updater, to: &$0) }
  }

  /// The slow path of an updater dispatch: waits for the turn, runs the interceptor chain.
  @inlinable
  nonisolated(nonsending) func dispatchWaitingForTurn<U: StateUpdater>(_ updater: U) async throws
  where U.StateType == S {
    try await dispatchUpdaterWaitingForTurn(
      updater, frame: TypedUpdaterFrame<S, U>(), apply: { updater.updateState(&$0) }, depth: 0)
  }

  /// Dispatches a state updater and returns once it is committed and observers have seen it.
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatch<U: StateUpdater>(_ updater: U) async throws where U.StateType == S {
    if tracksActivity, !isTrackedHere {
      return try await withActivity { try await dispatch(updater) }
    }
    if try dispatchWithoutWaiting(updater) { return }
    try await dispatchWaitingForTurn(updater)
  }

  /// Whether side effects may start right away, in the caller's task, without the lock: the store is
  /// ready and has no interceptor.
  @inlinable
  var sideEffectsStartDirectly: Bool {
    !hasInterceptors && readyFlag.isSet
  }

  /// Dispatches a side effect in the calling task and returns when its body returns.
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatch<E: SideEffect>(_ effect: E, context: SideEffectContext<S, D>)
    async throws where E.StateType == S, E.Dependencies == D
  {
    if tracksActivity, !isTrackedHere {
      return try await withActivity { try await dispatch(effect, context: context) }
    }
    if sideEffectsStartDirectly {
      try await runBody { try await effect.sideEffect(context) }
    } else {
      try await dispatchThroughChain(effect, context: context)
    }
  }

  @inlinable
  nonisolated(nonsending) func dispatchThroughChain<E: SideEffect>(
    _ effect: E, context: SideEffectContext<S, D>
  ) async throws where E.StateType == S, E.Dependencies == D {
    guard let chain = try await chainOnceSideEffectsMayStart() else {
      try await runBody { try await effect.sideEffect(context) }
      return
    }
    let frame = TypedSideEffectFrame<E>(storeID: id, context: context, runner: sideEffectRunner)
    try await SideEffectFrame.withFrame(frame) { try await chain(effect) }
    try await dispatchRedirects(frame.close().redirects, depth: 0)
  }

  /// Dispatches a returning side effect in the calling task and returns its value.
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatch<R: ReturningSideEffect>(
    _ effect: R, context: any AnySideEffectContext
  ) async throws -> R.ReturnValue {
    if tracksActivity, !isTrackedHere {
      return try await withActivity { try await dispatch(effect, context: context) }
    }
    if sideEffectsStartDirectly {
      return try await runBody { try await effect.sideEffect(context) }
    }
    return try await dispatchThroughChain(effect, context: context)
  }

  @inlinable
  nonisolated(nonsending) func dispatchThroughChain<R: ReturningSideEffect>(
    _ effect: R, context: any AnySideEffectContext
  ) async throws -> R.ReturnValue {
    guard let chain = try await chainOnceSideEffectsMayStart() else {
      return try await runBody { try await effect.sideEffect(context) }
    }
    let frame = ReturningSideEffectFrame<R>(storeID: id, context: context, runner: sideEffectRunner)
    try await SideEffectFrame.withFrame(frame) { try await chain(effect) }
    let record = frame.close()
    try await dispatchRedirects(record.redirects, depth: 0)
    guard let value = record.value else {
      throw StoreError.returnValueUnavailable(String(reflecting: R.self))
    }
    guard let typed = value as? R.ReturnValue else {
      throw StoreError.returnValueTypeMismatch(
        expected: String(reflecting: R.ReturnValue.self), actual: typeName(of: value))
    }
    return typed
  }

  // MARK: - Type-erased dispatch

  /// What kind of item something is, checked at run time.
  @usableFromInline
  enum ItemKind {
    case updater(any AnyStateUpdater)
    case sideEffect(any AnySideEffect)
  }

  @inlinable
  static func classify(_ item: any Dispatchable) throws -> ItemKind {
    switch (item as? any AnyStateUpdater, item as? any AnySideEffect) {
    case (.some, .some): throw StoreError.ambiguousDispatchable(typeName(of: item))
    case (.some(let updater), nil): return .updater(updater)
    case (nil, .some(let effect)): return .sideEffect(effect)
    case (nil, nil): throw StoreError.unsupportedDispatchable(typeName(of: item))
    }
  }

  /// Applies a type-erased state updater to `state`, in place when it is a ``StateUpdater`` of the right
  /// state type.
  @inlinable
  static func applyErased(_ updater: any AnyStateUpdater, to state: inout S) throws {
    if let typed = updater as? any StateUpdater {
      try applyOpened(typed, to: &state)
      return
    }
    let updated = try updater.updatedState(currentState: state)
    guard let typedState = updated as? S else {
      throw StoreError.wrongStateType(expected: String(reflecting: S.self), actual: typeName(of: updated))
    }
    state = typedState
  }

  @inlinable
  static func applyOpened<U: StateUpdater>(_ updater: U, to state: inout S) throws {
    guard U.StateType.self == S.self else {
      throw StoreError.wrongStateType(
        expected: String(reflecting: U.StateType.self), actual: String(reflecting: S.self))
    }
    // `U.StateType` and `S` are the same type, so viewing the state through a pointer to `U.StateType`
    // is sound, and keeps the mutation in place.
    withUnsafeMutablePointer(to: &state) { pointer in
      pointer.withMemoryRebound(to: U.StateType.self, capacity: 1) { updater.updateState(&$0.pointee) }
    }
  }

  /// Dispatches any item, checking its kind and types at run time, and returns its outcome (`()` for state
  /// updaters and side effects that return nothing).
  ///
  /// - Parameter depth: How many items of the other kind interceptors substituted on the way here.
  @inlinable
  nonisolated(nonsending) func anyDispatch(_ item: any Dispatchable, depth: Int = 0) async throws
    -> any Sendable
  {
    if tracksActivity, !isTrackedHere {
      return try await withActivity { try await anyDispatch(item, depth: depth) }
    }
    switch try Self.classify(item) {
    case .updater(let updater):
      if try dispatchWithoutWaiting(erased: updater) {
        return ()
      }
      try await dispatchUpdaterWaitingForTurn(
        item, frame: UpdaterFrame<S>(), apply: { try Self.applyErased(updater, to: &$0) }, depth: depth)
      return ()
    case .sideEffect(let effect):
      let chain = try await chainOnceSideEffectsMayStart()
      let context = try makeContext()
      guard let chain else {
        return try await runBody { try await effect.anySideEffect(context) }
      }
      let frame = SideEffectFrame(storeID: id, runner: sideEffectRunner)
      try await SideEffectFrame.withFrame(frame) { try await chain(item) }
      let record = frame.close()
      try await dispatchRedirects(record.redirects, depth: depth)
      if let value = record.value { return value }
      if effect is any ReturningSideEffect {
        throw StoreError.returnValueUnavailable(typeName(of: item))
      }
      return ()
    }
  }

  /// Dispatches the items interceptors substituted with items of the other kind, in order, as new items.
  @inlinable
  nonisolated(nonsending) func dispatchRedirects(_ items: [any Dispatchable], depth: Int) async throws {
    for item in items {
      guard depth < StoreError.redirectLimit else {
        throw StoreError.redirectLimitExceeded(typeName(of: item))
      }
      _ = try await anyDispatch(item, depth: depth + 1)
    }
  }

  // MARK: - The turn

  @usableFromInline
  enum InlineOutcome {
    /// Applied; nobody observes the store.
    case applied
    /// Applied; the caller holds the turn and must deliver the commit, then release the turn.
    case appliedHoldingTurn(Commit<S>)
    /// The store is busy, not ready, or gone: take the slow path.
    case mustWait
  }

  /// Applies `mutate` right away if the store is ready and nothing is ahead in the mailbox, delivers the
  /// change to observers, and returns true: the hot path, one lock acquisition without observers. Returns
  /// false if the caller must wait.
  @inlinable @inline(__always)
  func applyIfIdle(_ mutate: (inout S) throws -> Void) rethrows -> Bool {
    let outcome = try withLockRunningUpdater { core -> InlineOutcome in
      guard core.canTakeTurnNow else { return .mustWait }
      guard let commit = try core.commit(mutate) else { return .applied }
      core.mailbox.takeTurn(holder: nil)
      return .appliedHoldingTurn(commit)
    }
    switch outcome {
    case .applied:
      return true
    case .appliedHoldingTurn(let commit):
      commit.deliver()
      releaseTurn()
      return true
    case .mustWait:
      return false
    }
  }

  /// The slow path of an updater dispatch: takes the turn (waiting for it if needed), applies the updater
  /// (through the interceptor chain if there is one), releases the turn, then dispatches any substituted
  /// items. Only waiting and the chain itself are asynchronous.
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatchUpdaterWaitingForTurn(
    _ item: any Dispatchable, frame: UpdaterFrame<S>, apply: (inout S) throws -> Void, depth: Int
  ) async throws {
    let holder = TaskIdentity.current
    // With interceptors, taking the turn also installs the frame (one critical section instead of two).
    let frameInstalled = try await acquireTurn(holder: holder, installing: hasInterceptors ? frame : nil)
    guard hasInterceptors else {
      do {
        try commitHoldingTurn(apply)
      } catch {
        releaseTurn()
        throw error
      }
      releaseTurn()
      return
    }
    do {
      try await runChainHoldingTurn(item, frame: frame, holder: holder, frameInstalled: frameInstalled)
    } catch {
      releaseTurn()
      throw error
    }
    // Reading the redirects and releasing the turn in one critical section closes the frame: a `next`
    // called later fails instead of being lost.
    let (redirects, actions) = withLock { core in (frame.redirects, core.releaseTurn(byPump: false)) }
    if !actions.isEmpty {
      perform(actions)
    }
    if !redirects.isEmpty {
      try await dispatchRedirects(redirects, depth: depth)
    }
  }

  /// Runs the interceptor chain for an updater while holding the turn; the chain's final `next` finds
  /// `frame` in the locked state. Does not release the turn.
  @inlinable @inline(__always)
  nonisolated(nonsending) func runChainHoldingTurn(
    _ item: any Dispatchable, frame: UpdaterFrame<S>, holder: TaskIdentity?, frameInstalled: Bool = false
  ) async throws {
    let chain = try withLock { core -> StoreInterceptorNext in
      if let error = core.phase.dispatchError { throw error }
      if !frameInstalled {
        core.turnFrame = frame
        core.mailbox.turnHolder = holder
      }
      return core.chain
    }
    if SideEffectFrame.current == nil {
      try await chain(item)
    } else {
      // Dispatched from an interceptor running for a side effect: the side effect's frame, inherited
      // through the task-local, must not capture this updater's `next`.
      try await SideEffectFrame.withoutFrame { try await chain(item) }
    }
  }

  /// Commits `mutate` while holding the turn, and delivers the change to observers.
  @inlinable
  func commitHoldingTurn(_ mutate: (inout S) throws -> Void) throws {
    let commit = try withLockRunningUpdater { core in
      if let error = core.phase.dispatchError { throw error }
      return try core.commit(mutate)
    }
    commit?.deliver()
  }

  /// Waits until the calling task holds the turn.
  ///
  /// - Parameter frame: A chain frame to install if the turn is granted at once, in the same critical
  ///   section.
  /// - Returns: Whether `frame` was installed.
  /// - Throws: `CancellationError` if the caller is cancelled before its turn comes (the updater is then
  ///   withdrawn), ``StoreError/deadlock(_:)`` if the caller is the one holding the turn or running the
  ///   state initializer, the phase's error once the store has failed or shut down.
  @inlinable @inline(__always)
  nonisolated(nonsending) func acquireTurn(holder: TaskIdentity?, installing frame: UpdaterFrame<S>? = nil)
    async throws -> Bool
  {
    let decision = withLock { core -> Admission<Void> in
      if let error = core.phase.dispatchError { return .fail(error) }
      if core.canTakeTurnNow {
        core.mailbox.takeTurn(holder: holder)
        core.turnFrame = frame
        return .proceed(())
      }
      if let error = deadlock(for: holder, in: core) { return .fail(error) }
      return .wait(core.makeID())
    }
    switch decision {
    case .proceed:
      return frame != nil
    case .fail(let error):
      throw error
    case .wait(let id):
      try await waitInMailbox(id: id) { core, continuation in
        if core.canTakeTurnNow {
          core.mailbox.takeTurn(holder: holder)
          return true
        }
        core.mailbox.enqueue(.updater(id: id, task: holder, continuation: continuation))
        return false
      }
      return false
    }
  }

  /// The error to throw instead of waiting for the turn, if waiting from `task` could never end.
  @inlinable
  func deadlock(for task: TaskIdentity?, in core: CoreState<S, D>) -> StoreError? {
    guard let task else { return nil }
    if task == core.mailbox.turnHolder {
      return .deadlock(
        "this task holds the updater turn (it is running an interceptor for a state updater) and waited for "
          + "another state updater of the same store, which can only run after the turn is released.")
    }
    if task == core.startupTask {
      return .deadlock(
        "the store's state initializer dispatched to its own store and waited; dispatches wait until the "
          + "initializer has returned.")
    }
    return nil
  }

  /// Suspends until the mailbox resumes the caller.
  ///
  /// - Parameter enqueue: Runs under the lock once the caller is ready to suspend. Returns true to resume
  ///   the caller right away (the situation changed since the caller decided to wait), or enqueues an entry
  ///   holding the continuation and returns false.
  @inlinable
  nonisolated(nonsending) func waitInMailbox(
    id: UInt64,
    enqueue: @escaping (inout CoreState<S, D>, UnsafeContinuation<Void, any Error>) -> Bool
  ) async throws {
    try await withTaskCancellationHandler {
      try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
        var waitingCount = 0
        let immediate: Result<Void, any Error>? = withLock { core in
          if let error = core.phase.dispatchError { return .failure(error) }
          if Task.isCancelled { return .failure(CancellationError()) }
          if enqueue(&core, continuation) { return .success(()) }
          waitingCount = core.mailbox.entries.count
          return nil
        }
        if let immediate {
          continuation.resume(with: immediate)
        } else {
          configuration.onMailboxEnqueue?(waitingCount)
        }
      }
    } onCancel: {
      withdraw(id)
    }
  }

  /// Withdraws the mailbox entry `id` if it has not started, failing its dispatcher with
  /// `CancellationError`.
  @inlinable
  func withdraw(_ id: UInt64) {
    let entry = withLock { $0.mailbox.withdraw(id) }
    entry?.fail(CancellationError())
  }

  /// Releases the turn held by an awaited dispatch.
  @inlinable
  func releaseTurn() {
    let actions = withLock { $0.releaseTurn(byPump: false) }
    if !actions.isEmpty {
      perform(actions)
    }
  }

  @inlinable
  func perform(_ actions: MailboxActions) {
    for continuation in actions.resumptions {
      continuation.resume()
    }
    if let job = actions.startPump {
      startPump(with: job)
    }
    for job in actions.startSideEffects {
      if !startOwnedTask(id: job.id, job.run) {
        job.fail(StoreError.storeShutDown)
      }
    }
  }

  /// Waits, if the store is still starting, until side effects may start; returns the interceptor chain.
  @inlinable
  nonisolated(nonsending) func chainOnceSideEffectsMayStart() async throws -> StoreInterceptorNext? {
    let holder = TaskIdentity.current
    let decision = withLock { core -> Admission<StoreInterceptorNext?> in
      switch core.phase {
      case .ready: return .proceed(hasInterceptors ? core.chain : nil)
      case .failed, .shutDown: return .fail(core.phase.dispatchError ?? .storeShutDown)
      case .starting:
        if let error = deadlock(for: holder, in: core) { return .fail(error) }
        return .wait(core.makeID())
      }
    }
    switch decision {
    case .proceed(let chain):
      return chain
    case .fail(let error):
      throw error
    case .wait(let id):
      try await waitInMailbox(id: id) { core, continuation in
        // Start right away only if nothing dispatched earlier is still waiting.
        if core.canTakeTurnNow { return true }
        core.mailbox.enqueue(.sideEffect(id: id, continuation: continuation))
        return false
      }
      return hasInterceptors ? withLock { $0.chain } : nil
    }
  }

  // MARK: - The chain's final `next`

  /// The end of the interceptor chain: handles what interceptors hand to `next`.
  @inlinable @inline(__always)
  nonisolated(nonsending) func handleFromChain(_ item: any Dispatchable) async throws {
    if let frame = SideEffectFrame.current, frame.storeID == id {
      try await handleInSideEffectChain(item, frame: frame)
    } else {
      try handleInUpdaterChain(item)
    }
  }

  @inlinable
  nonisolated(nonsending) func handleInSideEffectChain(_ item: any Dispatchable, frame: SideEffectFrame)
    async throws
  {
    try frame.checkOpen(for: item)
    if let value = try await frame.runIfDispatchedType(item) {
      frame.setValue(value)
      return
    }
    switch try Self.classify(item) {
    case .updater:
      frame.addRedirect(item)
    case .sideEffect(let effect):
      let context = try makeContext()
      let value = try await SideEffectFrame.withoutFrame {
        try await runBody { try await effect.anySideEffect(context) }
      }
      frame.setValue(value)
    }
  }

  @inlinable
  func handleInUpdaterChain(_ item: any Dispatchable) throws {
    let attempt = try withLockRunningUpdater { core -> ChainAttempt in
      guard let frame = core.turnFrame else { throw StoreError.nextCalledOutOfScope(typeName(of: item)) }
      if let error = core.phase.dispatchError { throw error }
      var applied = false
      let commit = core.commitIfApplies { state in
        applied = frame.applyIfDispatchedType(item, to: &state)
        return applied
      }
      return applied ? .done(commit) : .notDispatchedType(frame)
    }
    switch attempt {
    case .done(let commit):
      commit?.deliver()
    case .notDispatchedType(let frame):
      // Substituted items are rare: classify them outside the lock, then apply or record them.
      switch try Self.classify(item) {
      case .sideEffect:
        try withLock { core in
          guard core.turnFrame === frame else { throw StoreError.nextCalledOutOfScope(typeName(of: item)) }
          frame.redirects.append(item)
        }
      case .updater(let updater):
        let commit = try withLockRunningUpdater { core in
          guard core.turnFrame === frame else { throw StoreError.nextCalledOutOfScope(typeName(of: item)) }
          if let error = core.phase.dispatchError { throw error }
          return try core.commit { try Self.applyErased(updater, to: &$0) }
        }
        commit?.deliver()
      }
    }
  }

  // MARK: - Sending

  /// Enqueues a state updater now and returns its handle. Without interceptors, on an idle store, it is
  /// applied right here, as an awaited dispatch would be, and the handle has already succeeded.
  @inlinable
  func send<U: StateUpdater>(_ updater: U) -> DispatchHandle<Void> where U.StateType == S {
    if sendsApplyDirectly, applyIfIdle({ updater.updateState(&$0) }) {
      return succeededHandle
    }
    return enqueueUpdater(
      updater, value: (), apply: { updater.updateState(&$0) }, frame: { TypedUpdaterFrame<S, U>() })
  }

  /// Whether a sent updater may be applied on the sending thread if the store is idle: no interceptor
  /// (their chain is async), no activity tracking, and not called from inside an updater (the lock is
  /// held there).
  @inlinable
  var sendsApplyDirectly: Bool {
    !hasInterceptors && !tracksActivity && !owner.isCurrentThread
  }

  /// Enqueues a side effect now and returns its handle.
  @inlinable
  func send<E: SideEffect>(_ effect: E, context: SideEffectContext<S, D>) -> DispatchHandle<Void>
  where E.StateType == S, E.Dependencies == D {
    enqueueSideEffect(effect) { [self] in try await dispatch(effect, context: context) }
  }

  /// Enqueues a returning side effect now and returns its handle.
  @inlinable
  func send<R: ReturningSideEffect>(_ effect: R, context: any AnySideEffectContext) -> DispatchHandle<
    R.ReturnValue
  > {
    enqueueSideEffect(effect) { [self] in try await dispatch(effect, context: context) }
  }

  /// Enqueues any item now and returns its handle.
  @inlinable
  func anySend(_ item: any Dispatchable) -> DispatchHandle<any Sendable> {
    let kind: ItemKind
    do {
      kind = try Self.classify(item)
    } catch {
      return .failed(error)
    }
    switch kind {
    case .updater(let updater):
      if sendsApplyDirectly {
        do {
          if try applyIfIdle({ try Self.applyErased(updater, to: &$0) }) { return succeededAnyHandle }
        } catch {
          return .failed(error)
        }
      }
      return enqueueUpdater(
        item, value: () as any Sendable, apply: { try Self.applyErased(updater, to: &$0) },
        frame: { UpdaterFrame<S>() })
    case .sideEffect:
      return enqueueSideEffect(item) { [self] in try await anyDispatch(item) }
    }
  }

  /// Runs a sent updater's interceptor chain while the pump holds the turn; returns the items interceptors
  /// substituted.
  @inlinable
  func applySentUpdater(_ item: any Dispatchable, frame: UpdaterFrame<S>) async throws -> [any Dispatchable] {
    do {
      try await runChainHoldingTurn(item, frame: frame, holder: TaskIdentity.current)
    } catch {
      withLock { $0.turnFrame = nil }
      throw error
    }
    return withLock { core in
      core.turnFrame = nil
      return frame.redirects
    }
  }

  /// Enqueues a sent updater. Without interceptors it is committed synchronously (`apply`); with them,
  /// `applyThroughChain` runs while the pump holds the turn and returns the items of the other kind that
  /// interceptors substituted.
  @inlinable
  func enqueueUpdater<Value: Sendable>(
    _ item: any Dispatchable, value: Value, apply: @escaping @Sendable (inout S) throws -> Void,
    frame: @escaping @Sendable () -> UpdaterFrame<S>
  ) -> DispatchHandle<Value> {
    let handle = DispatchHandle(storage: HandleStorage<Value>.make())
    guard hasInterceptors else {
      enqueue(
        item, isUpdater: true, handle: handle.storage,
        work: .synchronous({ [self] in
          do {
            try commitHoldingTurn(apply)
            handle.storage.complete(.success(value))
          } catch {
            handle.storage.complete(.failure(error))
          }
        }))
      return handle
    }
    enqueue(
      item, isUpdater: true, handle: handle.storage,
      work: .asynchronous({ [self] in
        let redirects: [any Dispatchable]
        do {
          redirects = try await applySentUpdater(item, frame: frame())
        } catch {
          handle.storage.complete(.failure(error))
          return
        }
        guard !redirects.isEmpty else {
          handle.storage.complete(.success(value))
          return
        }
        // This task holds the turn, so the substituted items run in a task of their own, after it is released.
        let started = startOwnedTask(id: makeID()) { [self] in
          do {
            try await dispatchRedirects(redirects, depth: 0)
            handle.storage.complete(.success(value))
          } catch {
            handle.storage.complete(.failure(error))
          }
        }
        if !started {
          handle.storage.complete(.failure(StoreError.storeShutDown))
        }
      }))
    return handle
  }

  /// Enqueues a sent side effect, which runs `work` in a store-owned task.
  @inlinable
  func enqueueSideEffect<Value: Sendable>(
    _ item: any Dispatchable, run work: @escaping @Sendable () async throws -> Value
  ) -> DispatchHandle<Value> {
    let handle = DispatchHandle(storage: HandleStorage<Value>.make())
    enqueue(
      item, isUpdater: false, handle: handle.storage,
      work: .asynchronous({
        do {
          handle.storage.complete(.success(try await work()))
        } catch {
          handle.storage.complete(.failure(error))
        }
      }))
    return handle
  }

  /// Puts a job into the mailbox, or starts it right away if nothing is ahead of it.
  @inlinable
  func enqueue<Value: Sendable>(
    _ item: any Dispatchable, isUpdater: Bool, handle: HandleStorage<Value>, work: MailboxJob.Work
  ) {
    guard !owner.isCurrentThread else {
      handle.fail(StoreError.dispatchFromStateUpdater(typeName(of: item)))
      return
    }
    let (job, decision) = withLock { core -> (MailboxJob, EnqueueDecision) in
      let job = MailboxJob(
        id: core.makeID(), isUpdater: isUpdater, store: self, handle: handle, work: work,
        tracksActivity: tracksActivity)
      if tracksActivity { core.activeWork += 1 }
      if let error = core.phase.dispatchError { return (job, .fail(error)) }
      // Set under the store lock, before anyone can cancel or complete the job.
      handle.setControl(job)
      if core.canTakeTurnNow {
        if isUpdater {
          core.mailbox.takeTurn(holder: nil)
          return (job, .startPump)
        }
        return (job, .startSideEffect)
      }
      core.mailbox.enqueue(.job(job))
      return (job, .queued(waitingCount: core.mailbox.entries.count))
    }
    switch decision {
    case .queued(let waitingCount):
      configuration.onMailboxEnqueue?(waitingCount)
    case .startPump:
      startPump(with: job)
    case .startSideEffect:
      if !startOwnedTask(id: job.id, { await job.run() }) {
        job.fail(StoreError.storeShutDown)
      }
    case .fail(let error):
      job.fail(error)
    }
  }

  /// Cancels a sent job: withdraws it if it is still queued, cancels its task if it is a running side
  /// effect. A running updater completes.
  @usableFromInline
  func cancelJob(_ id: UInt64) {
    let (entry, task) = withLock { core -> (MailboxEntry?, Task<Void, Never>?) in
      if let entry = core.mailbox.withdraw(id) { return (entry, nil) }
      if case .running(let task) = core.ownedTasks[id] { return (nil, task) }
      return (nil, nil)
    }
    entry?.fail(CancellationError())
    task?.cancel()
  }

  /// The error to return instead of waiting for the sent job `id`, if the waiting task holds the turn
  /// while the job still waits behind it: in the mailbox, or, for a state updater that has not started,
  /// in the pump's current batch.
  @usableFromInline
  func deadlockIfWaiting(forJob id: UInt64, isUpdaterNotStarted: Bool) -> StoreError? {
    guard let task = TaskIdentity.current else { return nil }
    return withLock { core in
      guard task == core.mailbox.turnHolder, isUpdaterNotStarted || core.mailbox.isPending(id) else { return nil }
      return .deadlock(
        "this task holds the updater turn and waited for an item it sent, which is queued behind that turn.")
    }
  }

  // MARK: - The pump

  /// Starts a store-owned task that runs sent updaters while holding the turn, until the next entry is
  /// not one.
  @inlinable
  func startPump(with job: MailboxJob) {
    // Registered under an identifier of its own, not the first job's: cancelling that job's handle must not
    // cancel the pump, which goes on to run the jobs after it (a running updater completes anyway).
    let started = startOwnedTask(id: withLock { $0.makeID() }) { [self] in
      var batch = [job]
      let pump = TaskIdentity.current
      withLock { $0.mailbox.turnHolder = pump }
      while !batch.isEmpty {
        for job in batch {
          await job.run()
        }
        let actions = withLock { core in
          let actions = core.releaseTurn(byPump: true)
          if !actions.continuePump.isEmpty {
            core.mailbox.turnHolder = pump
          }
          return actions
        }
        batch = actions.continuePump
        if !actions.resumptions.isEmpty || actions.startPump != nil || !actions.startSideEffects.isEmpty {
          perform(actions)
        }
      }
    }
    if !started {
      job.fail(StoreError.storeShutDown)
      releaseTurn()
    }
  }

  // MARK: - Store-owned tasks

  /// Starts a detached task the store owns: shutdown cancels it. Returns false if the store has shut down.
  ///
  /// Detached, so that it inherits neither the caller's actor nor its task-locals (in particular no
  /// side-effect frame).
  @inlinable
  @discardableResult
  func startOwnedTask(id: UInt64, _ body: @escaping @Sendable () async -> Void) -> Bool {
    let reserved = withLock { core -> Bool in
      if case .shutDown = core.phase { return false }
      core.ownedTasks[id] = .reserved
      if tracksActivity { core.activeWork += 1 }
      return true
    }
    guard reserved else { return false }
    let task = Task.detached(priority: Task.currentPriority) { [self] in
      let identity = TaskIdentity.current
      withLock { core in core.ownedTaskIdentities[id] = identity }
      await body()
      withLock { core in
        core.ownedTasks.removeValue(forKey: id)
        core.ownedTaskIdentities.removeValue(forKey: id)
      }
      if tracksActivity { endActivity() }
    }
    let cancelNow = withLock { core -> Bool in
      if case .shutDown = core.phase { return true }
      if core.ownedTasks[id] != nil {
        core.ownedTasks[id] = .running(task)
      }
      return false
    }
    if cancelNow {
      task.cancel()
    }
    return true
  }

  /// The number of store-owned tasks still registered (tests check that none leak).
  var ownedTaskCount: Int {
    withLock { $0.ownedTasks.count }
  }

  // MARK: - Lifecycle

  @inlinable
  func makeID() -> UInt64 {
    withLock { $0.makeID() }
  }

  @usableFromInline
  func setDependencies(_ dependencies: D) {
    withLock { $0.dependencies = dependencies }
  }

  /// A context for side effects and interceptors.
  @inlinable
  func makeContext() throws -> SideEffectContext<S, D> {
    let dependencies = withLock { $0.dependencies }
    guard let dependencies else { throw StoreError.storeShutDown }
    return SideEffectContext(core: self, dependencies: dependencies)
  }

  /// Runs the state initializer in a store-owned task, then initialises the interceptors and opens the
  /// mailbox.
  @inlinable
  func start(stateInitializer: @escaping Store<S, D>.StateInitializer, interceptors: [StoreInterceptor]) {
    startOwnedTask(id: makeID()) { [self, runner = configuration.stateInitializerRunner] in
      withLock { $0.startupTask = TaskIdentity.current }
      do {
        let state: S
        if let runner {
          // Start-up then waits for the runner's executor (Katana 6's main queue), as Katana 6's did.
          state = try await runner.run { try await stateInitializer() }
        } else {
          state = try await stateInitializer()
        }
        finishStartup(state: state, interceptors: interceptors)
      } catch {
        failStartup(error)
      }
    }
  }

  @inlinable
  func finishStartup(state: S, interceptors: [StoreInterceptor]) {
    let dependencies = withLock { core -> D? in
      guard case .starting = core.phase else { return nil }
      core.state = state
      return core.dependencies
    }
    guard let dependencies else { return }
    var chain: StoreInterceptorNext = CoreState<S, D>.noChain
    if !interceptors.isEmpty {
      // User code (the interceptors' outer and middle closures) runs here, outside the lock.
      let context = SideEffectContext(core: self, dependencies: dependencies)
      chain = composeInterceptors(interceptors, context: context) { [self] item in
        try await handleFromChain(item)
      }
    }
    let opened = withLock { core -> (MailboxActions, [UnsafeContinuation<Void, any Error>])? in
      guard case .starting = core.phase else { return nil }
      core.chain = chain
      core.phase = .ready
      readyFlag.set(true)
      core.startupTask = nil
      let waiters = Array(core.readinessWaiters.values)
      core.readinessWaiters = [:]
      return (core.mailbox.advance(byPump: false), waiters)
    }
    guard let (actions, waiters) = opened else { return }
    for waiter in waiters {
      waiter.resume()
    }
    perform(actions)
  }

  @usableFromInline
  func failStartup(_ error: any Error) {
    let failed = withLock { core -> ([MailboxEntry], [UnsafeContinuation<Void, any Error>])? in
      guard case .starting = core.phase else { return nil }
      core.phase = .failed(error)
      core.startupTask = nil
      let waiters = Array(core.readinessWaiters.values)
      core.readinessWaiters = [:]
      return (core.mailbox.removeAll(), waiters)
    }
    guard let (entries, waiters) = failed else { return }
    let storeError = StoreError.startupFailed(error)
    for entry in entries {
      entry.fail(storeError)
    }
    for waiter in waiters {
      waiter.resume(throwing: storeError)
    }
  }

  /// Waits until the store is ready.
  @inlinable
  nonisolated(nonsending) func waitUntilReady() async throws {
    let decision = withLock { core -> Admission<Void> in
      switch core.phase {
      case .ready: return .proceed(())
      case .starting: return .wait(core.makeID())
      case .failed, .shutDown: return .fail(core.phase.dispatchError ?? .storeShutDown)
      }
    }
    switch decision {
    case .proceed:
      return
    case .fail(let error):
      throw error
    case .wait(let id):
      try await withTaskCancellationHandler {
        try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
          let immediate: Result<Void, any Error>? = withLock { core in
            switch core.phase {
            case .ready: return .success(())
            case .failed, .shutDown: return .failure(core.phase.dispatchError ?? .storeShutDown)
            case .starting:
              if Task.isCancelled { return .failure(CancellationError()) }
              core.readinessWaiters[id] = continuation
              return nil
            }
          }
          if let immediate {
            continuation.resume(with: immediate)
          }
        }
      } onCancel: {
        let waiter = withLock { $0.readinessWaiters.removeValue(forKey: id) }
        waiter?.resume(throwing: CancellationError())
      }
    }
  }

  /// Registers `handler` to run once when the store shuts down (immediately if it already has).
  func addShutdownHandler(_ handler: @escaping @Sendable () -> Void) {
    let runNow = withLock { core -> Bool in
      if case .shutDown = core.phase { return true }
      core.shutdownHandlers.append(handler)
      return false
    }
    if runNow {
      handler()
    }
  }

  /// Shuts the store down: fails everything waiting, finishes streams, drops listeners and interceptors,
  /// cancels store-owned tasks. Idempotent. Returns the cancelled tasks, except the calling task if it is
  /// one of them, so that an explicit shutdown can wait for them without waiting for itself.
  @usableFromInline @discardableResult
  func shutdown() -> [Task<Void, Never>] {
    let work = withLock { core -> ShutdownWork? in
      if case .shutDown = core.phase { return nil }
      core.phase = .shutDown
      readyFlag.set(false)
      core.startupTask = nil
      defer {
        core.readinessWaiters = [:]
        core.shutdownHandlers = []
        core.chain = CoreState<S, D>.noChain
        core.attachments = [:]
      }
      let caller = TaskIdentity.current
      return ShutdownWork(
        entries: core.mailbox.removeAll(),
        waiters: Array(core.readinessWaiters.values),
        subscribers: core.observers.removeAll(),
        tasks: core.ownedTasks.compactMap { id, task in
          guard case .running(let task) = task else { return nil }
          return caller != nil && core.ownedTaskIdentities[id] == caller ? nil : task
        },
        handlers: core.shutdownHandlers,
        chain: core.chain)
    }
    guard let work else { return [] }
    for entry in work.entries {
      entry.fail(StoreError.storeShutDown)
    }
    for waiter in work.waiters {
      waiter.resume(throwing: StoreError.storeShutDown)
    }
    for subscriber in work.subscribers {
      subscriber.finish()
    }
    // The calling task, if it is a store-owned one, is left out of `tasks`: cancel everything else.
    for task in work.tasks {
      task.cancel()
    }
    if let caller = TaskIdentity.current, withLock({ $0.ownedTaskIdentities.values.contains(caller) }) {
      withUnsafeCurrentTask { $0?.cancel() }
    }
    for handler in work.handlers {
      handler()
    }
    // The chain (and the interceptors it captures) is released here, outside the lock: their deinit may
    // run user code.
    _ = work.chain
    return work.tasks
  }

  // MARK: - Observation

  /// Adds a listener; see ``Store/addListener(_:)``.
  @usableFromInline
  func addListener(_ listener: @escaping StoreListener<S>) -> StoreUnsubscribe {
    guard !owner.isCurrentThread else {
      runtimeWarning("addListener was called from inside a StateUpdater; the listener was not added.")
      return {}
    }
    var listener = listener
    // With an executor, a call handed over before removal runs later: it checks that the listener is still
    // subscribed when it runs, so that removing a listener on its executor (Katana 6's main queue) stops
    // every call that has not started, as in Katana 6.
    var subscribed: AtomicFlag?
    if let execute = configuration.listenerExecutor {
      let flag = AtomicFlag()
      flag.set(true)
      subscribed = flag
      listener = { [listener] old, new in
        execute {
          if flag.isSet { listener(old, new) }
        }
      }
    }
    let id = withLock { core -> UInt64? in
      if case .shutDown = core.phase { return nil }
      let id = core.makeID()
      core.observers.add(ListenerEntry(id: id, listener: listener))
      return id
    }
    guard let id else { return {} }
    return { [weak self, subscribed] in
      subscribed?.set(false)
      self?.withLock { $0.observers.removeListener(id) }
    }
  }

  /// Registers a stream subscriber. `makeSubscriber` runs under the lock (with the thread marked as
  /// running an updater, since it may evaluate a projection) and gets the current state.
  @usableFromInline
  func subscribe<Element: Sendable>(
    buffer: StreamBuffer<Element>, makeSubscriber: (UInt64, S) -> StateSubscriber<S>
  ) -> StreamBuffer<Element> {
    guard !owner.isCurrentThread else {
      runtimeWarning("A store stream was created inside a StateUpdater; it finishes immediately.")
      buffer.finish()
      return buffer
    }
    let id = withLockRunningUpdater { core -> UInt64? in
      if case .shutDown = core.phase { return nil }
      let id = core.makeID()
      core.observers.add(makeSubscriber(id, core.state))
      return id
    }
    guard let id else {
      buffer.finish()
      return buffer
    }
    buffer.setOnTermination { [weak self] in
      self?.withLock { $0.observers.removeSubscriber(id) }
    }
    return buffer
  }

  /// The number of registered listeners and stream subscribers (tests check unregistration).
  var observerCount: Int {
    withLock { $0.observers.listeners.count + $0.observers.subscribers.count }
  }

  // MARK: - Activity (opt-in, for tests)

  /// Whether a tracked dispatch already counts the work running in this task.
  @inlinable
  var isTrackedHere: Bool { ActivityScope.isTracking }

  /// Counts `body` as in-flight work.
  @inlinable
  nonisolated(nonsending) func withActivity<T>(_ body: () async throws -> T) async rethrows -> T {
    withLock { $0.activeWork += 1 }
    defer { endActivity() }
    return try await ActivityScope.tracking(body)
  }

  /// Marks one unit of in-flight work finished, waking whoever waits for the store to be idle.
  @usableFromInline
  func endActivity() {
    let waiters = withLock { core -> [UnsafeContinuation<Void, any Error>] in
      core.activeWork -= 1
      guard core.activeWork == 0 else { return [] }
      defer { core.idleWaiters = [:] }
      return Array(core.idleWaiters.values)
    }
    for waiter in waiters {
      waiter.resume()
    }
  }

  /// The amount of in-flight work (with activity tracking on).
  var activeWork: Int {
    withLock { $0.activeWork }
  }

  /// Returns once nothing is in flight: no awaited dispatch in progress, no sent item unfinished, no
  /// store-owned task running. Requires ``StoreConfiguration/tracksActivity``.
  ///
  /// - Throws: `CancellationError` if the calling task is cancelled while waiting.
  nonisolated(nonsending) func waitUntilIdle() async throws {
    let id = withLock { core -> UInt64? in core.activeWork == 0 ? nil : core.makeID() }
    guard let id else { return }
    try await withTaskCancellationHandler {
      try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
        let idle = withLock { core -> Bool in
          if core.activeWork == 0 { return true }
          if Task.isCancelled { return false }
          core.idleWaiters[id] = continuation
          return false
        }
        if idle {
          continuation.resume()
        } else if Task.isCancelled, withLock({ $0.idleWaiters[id] == nil }) {
          continuation.resume(throwing: CancellationError())
        }
      }
    } onCancel: {
      let waiter = withLock { $0.idleWaiters.removeValue(forKey: id) }
      waiter?.resume(throwing: CancellationError())
    }
  }

  // MARK: - Attachments

  /// The object of type `T` attached to this store, created with `make` on first use; nil once the store
  /// has shut down. Store features (the effect registry, built-in interceptors) keep per-store state here.
  func attachment<T: AnyObject & Sendable>(_ type: T.Type, make: () -> T) -> T? {
    withLock { core in
      if case .shutDown = core.phase { return nil }
      if let existing = core.attachments[ObjectIdentifier(type)] as? T { return existing }
      let created = make()
      core.attachments[ObjectIdentifier(type)] = created
      return created
    }
  }

  // MARK: - Diagnostics

  /// Prints `message` to standard error, once per store and message.
  func runtimeWarning(_ message: String) {
    let isNew = warnings.withLock { $0.insert(message).inserted }
    guard isNew else { return }
    var line = "[Katana] warning: \(message)\n"
    line.withUTF8 { bytes in
      _ = write(2, bytes.baseAddress, bytes.count)
    }
  }
}

extension CoreState {
  /// Like ``commit(_:)``, for a mutation that may decline (returns false): nothing is committed then.
  @inlinable
  mutating func commitIfApplies(_ mutate: (inout S) -> Bool) -> Commit<S>? {
    if observers.isEmpty {
      _ = mutate(&state)
      return nil
    }
    let old: S? = observers.needsOldState ? state : nil
    guard mutate(&state) else { return nil }
    return Commit(old: old, new: state, listeners: observers.listeners, subscribers: observers.subscribers)
  }
}

extension StoreCore: JobStore {}

/// Marks the work a tracked dispatch runs in its task, so that the nested calls it makes (the fast path
/// calling the slow path, redirects, nested dispatches) are not counted twice.
@usableFromInline
enum ActivityScope {
  @TaskLocal @usableFromInline static var isTracking = false

  @usableFromInline
  nonisolated(nonsending) static func tracking<T>(_ body: () async throws -> T) async rethrows -> T {
    try await $isTracking.withValue(true) { try await body() }
  }
}
