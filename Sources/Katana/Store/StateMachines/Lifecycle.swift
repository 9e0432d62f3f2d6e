/// Where a store is in its life. Every entry point decides what it does in each phase.
@usableFromInline
enum StorePhase {
  /// The state initializer has not finished: dispatches wait in the mailbox.
  case starting
  /// Dispatches run.
  case ready
  /// The state initializer threw: every dispatch fails with ``StoreError/startupFailed(_:)``.
  case failed(any Error)
  /// ``Store/shutdown()`` ran or the store was released: every dispatch fails with
  /// ``StoreError/storeShutDown``.
  case shutDown

  @inlinable
  var isReady: Bool {
    if case .ready = self { return true }
    return false
  }

  /// The error a new dispatch gets in this phase, or nil if it may proceed (possibly after waiting).
  @inlinable
  var dispatchError: StoreError? {
    switch self {
    case .starting, .ready: nil
    case .failed(let error): .startupFailed(error)
    case .shutDown: .storeShutDown
    }
  }
}

/// A store's life and the work it owns, as a pure state machine: the phase, the tasks the store started
/// (reserved, running, cancel requested), the in-flight work count that tests wait on, and the tasks waiting
/// for readiness, idleness or the end of the store's tasks.
///
/// ``StoreCore`` keeps it inside its lock, calls a transition, and performs what the transition returns
/// (resumptions, tasks to cancel) after unlocking. Generic over the continuation and task types so that the
/// tests can explore it exhaustively with doubles (`LifecycleStateMachineTests`).
@usableFromInline
struct Lifecycle<C: Resumable, TaskHandle> where C.Value == Void {
  /// A task the store started.
  @usableFromInline
  struct OwnedTask {
    /// The task, once created and attached (nil while the identifier is only reserved).
    var task: TaskHandle?
    /// The task's identity, once it has started running.
    var identity: TaskIdentity?
    /// Whether a cancellation was asked for; one that arrives before the task is attached is applied then.
    var cancelRequested = false

    init() {}
  }

  /// What a transition asks the core to do, after unlocking.
  @usableFromInline
  struct Actions {
    var resumptions: [Resumption<C>] = []
    var cancellations: [TaskHandle] = []

    init() {}

    var isEmpty: Bool { resumptions.isEmpty && cancellations.isEmpty }
  }

  /// What shutting down asks the core to do, after unlocking.
  @usableFromInline
  struct Shutdown {
    var actions = Actions()
    /// Whether the calling task is one of the store's own tasks: it is cancelled last, by itself.
    var callerIsOwned = false
  }

  @usableFromInline private(set) var phase = StorePhase.starting
  /// Whether tasks the store owns count as in-flight work (``StoreConfiguration/tracksActivity``).
  let tracksActivity: Bool
  private(set) var ownedTasks: [UInt64: OwnedTask] = [:]
  /// The task running the state initializer, for deadlock detection.
  @usableFromInline private(set) var startupTask: TaskIdentity?
  /// In-flight work, with activity tracking on: awaited dispatches in progress, sent items not yet finished,
  /// tasks the store owns; each with the task that carries it, once known.
  private(set) var activity: [ActivityKey: Carrier] = [:]
  /// Tasks that wait for work done in another task (a run of an effect tool), by the token that task binds.
  private(set) var handOffs: [TaskIdentity: UInt64] = [:]
  /// The task running each bound token.
  private(set) var tokenCarriers: [UInt64: TaskIdentity] = [:]
  private(set) var readinessWaiters = Waiters<C>()
  private(set) var idleWaiters = Waiters<C>()
  /// Waiters for the end of the store's tasks, each with the owned task it does not wait for (its own).
  private(set) var drainWaiters = Waiters<C>()
  private(set) var drainExceptions: [UInt64: UInt64] = [:]

  init(tracksActivity: Bool) {
    self.tracksActivity = tracksActivity
  }

  var isReady: Bool { phase.isReady }

  // MARK: - Start-up

  /// The start-up task has started running.
  mutating func startupBegan(_ task: TaskIdentity?) {
    if case .starting = phase { startupTask = task }
  }

  /// The state initializer returned: the store becomes ready. Returns nil if start-up was already over
  /// (the store shut down meanwhile).
  mutating func finishStartup() -> Actions? {
    guard case .starting = phase else { return nil }
    phase = .ready
    startupTask = nil
    var actions = Actions()
    actions.resumptions = readinessWaiters.resolveAll(with: .success(()))
    return actions
  }

  /// The state initializer threw. Returns nil if start-up was already over.
  mutating func failStartup(_ error: any Error) -> Actions? {
    guard case .starting = phase else { return nil }
    phase = .failed(error)
    startupTask = nil
    var actions = Actions()
    actions.resumptions = readinessWaiters.resolveAll(with: .failure(StoreError.startupFailed(error)))
    return actions
  }

  /// What a caller of `waitUntilReady()` does: proceed, fail, or wait as the returned waiter.
  mutating func waitUntilReady() -> Admission<Void> {
    switch phase {
    case .ready: return .proceed(())
    case .failed, .shutDown: return .fail(phase.dispatchError ?? .storeShutDown)
    case .starting: return .wait(readinessWaiters.add())
    }
  }

  mutating func suspendReadinessWaiter(_ id: UInt64, on continuation: C) -> Resumption<C>? {
    readinessWaiters.suspend(id, on: continuation)
  }

  mutating func cancelReadinessWaiter(_ id: UInt64) -> Resumption<C>? {
    readinessWaiters.resolve(id, with: .failure(CancellationError()))
  }

  // MARK: - Owned tasks

  /// Takes identifier `id` for a task about to be created. Returns false once the store has shut down.
  mutating func reserveTask(_ id: UInt64) -> Bool {
    if case .shutDown = phase { return false }
    ownedTasks[id] = OwnedTask()
    if tracksActivity { activity[.task(id)] = Carrier(nil) }
    return true
  }

  /// Attaches the created task to its reservation. Returns the task if it must be cancelled at once: a
  /// cancellation arrived while it was reserved, or the store shut down meanwhile.
  mutating func attachTask(_ id: UInt64, _ task: TaskHandle) -> TaskHandle? {
    // Nil: the task already finished.
    guard ownedTasks[id] != nil else { return nil }
    ownedTasks[id]?.task = task
    if case .shutDown = phase { return task }
    return ownedTasks[id]?.cancelRequested == true ? task : nil
  }

  /// Owned task `id` has started running, as `identity` (possibly before it is attached).
  mutating func taskStarted(_ id: UInt64, identity: TaskIdentity?) {
    ownedTasks[id]?.identity = identity
    setCarrier(of: .task(id), to: identity)
  }

  /// Owned task `id` has finished.
  mutating func taskFinished(_ id: UInt64) -> Actions {
    var actions = Actions()
    guard ownedTasks.removeValue(forKey: id) != nil else { return actions }
    if tracksActivity { endActivity(.task(id), &actions) }
    resolveDrainWaiters(&actions)
    return actions
  }

  /// Cancels owned task `id`: returns it if it is attached; otherwise records the request, which
  /// ``attachTask(_:_:)`` applies.
  mutating func cancelTask(_ id: UInt64) -> TaskHandle? {
    guard ownedTasks[id] != nil else { return nil }
    ownedTasks[id]?.cancelRequested = true
    return ownedTasks[id]?.task
  }

  /// The owned task that `task` is, if any.
  func ownedID(of task: TaskIdentity?) -> UInt64? {
    guard let task else { return nil }
    return ownedTasks.first { $0.value.identity == task }?.key
  }

  /// The number of tasks the store owns and has not seen finish.
  var ownedTaskCount: Int { ownedTasks.count }

  // MARK: - Shutdown

  /// Shuts the store down: fails readiness waiters, cancels every owned task but the caller's, and records
  /// cancellation for reserved ones. Returns nil if the store had already shut down.
  mutating func shutdown(caller: TaskIdentity?) -> Shutdown? {
    if case .shutDown = phase { return nil }
    phase = .shutDown
    startupTask = nil
    var shutdown = Shutdown()
    shutdown.actions.resumptions = readinessWaiters.resolveAll(with: .failure(StoreError.storeShutDown))
    let callerID = ownedID(of: caller)
    for id in Array(ownedTasks.keys) {
      if id == callerID {
        shutdown.callerIsOwned = true
      } else if let task = cancelTask(id) {
        shutdown.actions.cancellations.append(task)
      }
    }
    return shutdown
  }

  /// What a caller waiting for the store's tasks to end does: proceed if none is left (except its own), or
  /// wait as the returned waiter.
  mutating func waitUntilDrained(caller: TaskIdentity?) -> Admission<Void> {
    let except = ownedID(of: caller)
    if ownedTasks.keys.allSatisfy({ $0 == except }) { return .proceed(()) }
    let id = drainWaiters.add()
    if let except { drainExceptions[id] = except }
    return .wait(id)
  }

  mutating func suspendDrainWaiter(_ id: UInt64, on continuation: C) -> Resumption<C>? {
    drainWaiters.suspend(id, on: continuation)
  }

  private mutating func resolveDrainWaiters(_ actions: inout Actions) {
    guard !drainWaiters.isEmpty else { return }
    for id in Array(drainWaiters.slots.keys) {
      let except = drainExceptions[id]
      guard ownedTasks.keys.allSatisfy({ $0 == except }) else { continue }
      drainExceptions[id] = nil
      if let resumption = drainWaiters.resolve(id, with: .success(())) {
        actions.resumptions.append(resumption)
      }
    }
  }

  // MARK: - Activity

  /// A unit of in-flight work.
  enum ActivityKey: Hashable {
    /// An awaited dispatch (any number per task, nested ones included).
    case dispatch(UInt64)
    /// A sent item, from `send` until it has finished.
    case job(UInt64)
    /// A task the store owns.
    case task(UInt64)
  }

  /// The task that carries a unit of work; nil until known (a sent item still queued, a task not yet
  /// running).
  struct Carrier {
    var task: TaskIdentity?

    init(_ task: TaskIdentity?) {
      self.task = task
    }
  }

  /// The amount of in-flight work.
  var activeWork: Int { activity.count }

  /// One more unit of in-flight work, carried by `carrier` if known.
  mutating func beginActivity(_ key: ActivityKey, carrier: TaskIdentity?) {
    activity[key] = Carrier(carrier)
  }

  /// Unit `key` is now carried by `carrier` (a sent item started running in its task).
  mutating func setCarrier(of key: ActivityKey, to carrier: TaskIdentity?) {
    if activity[key] != nil { activity[key] = Carrier(carrier) }
  }

  /// One unit of in-flight work finished: wakes idle waiters if it was the last.
  mutating func endActivity(_ key: ActivityKey) -> Actions {
    var actions = Actions()
    endActivity(key, &actions)
    return actions
  }

  private mutating func endActivity(_ key: ActivityKey, _ actions: inout Actions) {
    // Internal invariant: every end matches a begin.
    assert(activity[key] != nil, "Katana internal error: activity ended twice")
    activity[key] = nil
    if activity.isEmpty {
      actions.resumptions += idleWaiters.resolveAll(with: .success(()))
    }
  }

  /// `waiter` waits for the work of the task that binds `token` (nil: no longer waits).
  mutating func handOff(from waiter: TaskIdentity, to token: UInt64?) {
    handOffs[waiter] = token
  }

  /// `token` is run by `task` (nil: no longer).
  mutating func bind(_ token: UInt64, to task: TaskIdentity?) {
    tokenCarriers[token] = task
  }

  /// The tasks that carry the in-flight work, each followed through the hand-offs to the task doing the
  /// work, without duplicates; nil if some unit has no known carrier, or a hand-off leads to a token no task
  /// has bound yet.
  func carriers() -> [TaskIdentity]? {
    var found: Set<TaskIdentity> = []
    for carrier in activity.values {
      guard var task = carrier.task else { return nil }
      var steps = 0
      while let token = handOffs[task] {
        guard let next = tokenCarriers[token], steps < 64 else { return nil }
        task = next
        steps += 1
      }
      found.insert(task)
    }
    return Array(found)
  }

  /// ``carriers()``, or nil also when one of `tasks` carries no unit of work itself. A test store passes the
  /// tasks of its own items that have reached the store and not finished: one that carries nothing has left
  /// the store (its dispatch returned, and it is about to report) and is busy, not parked, whatever the store's
  /// other work does.
  func carriers(inside tasks: [TaskIdentity]) -> [TaskIdentity]? {
    for task in tasks where !activity.values.contains(where: { $0.task == task }) {
      return nil
    }
    return carriers()
  }

  /// What a caller of `waitUntilIdle()` does: proceed if nothing is in flight, or wait as the returned waiter.
  mutating func waitUntilIdle() -> Admission<Void> {
    activity.isEmpty ? .proceed(()) : .wait(idleWaiters.add())
  }

  mutating func suspendIdleWaiter(_ id: UInt64, on continuation: C) -> Resumption<C>? {
    idleWaiters.suspend(id, on: continuation)
  }

  mutating func cancelIdleWaiter(_ id: UInt64) -> Resumption<C>? {
    idleWaiters.resolve(id, with: .failure(CancellationError()))
  }
}

/// Whether a caller may go on, must wait (as this waiter), or fails.
@usableFromInline
enum Admission<Proceed> {
  case proceed(Proceed)
  case wait(UInt64)
  case fail(any Error)
}
