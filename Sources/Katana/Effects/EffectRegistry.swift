/// One store's effects running under an id: what ``AnySideEffectContext/cancel(id:)`` and
/// `cancelInFlight` reach, and what shutdown cancels.
///
/// Each store has its own registry (a store attachment, created on first use and dropped at shutdown), so
/// equal ids in two stores never meet. Entries live exactly as long as their work: a run is removed when
/// its task returns, a throttle window when it closes. The bookkeeping is ``EffectRegistryState``; this
/// class performs what its transitions return, outside the lock.
///
/// Program order: a cancellation by id reaches the runs registered under that id, and also the runs that
/// items handed over with `send` *before* the cancellation register later: the cancellation marks those
/// items (``SentItemOrigin``), and a run that such an item's work registers under the id (with any tool:
/// `run`, debounce, throttle, timers, `forEach`) is cancelled before its operation starts. The state machine
/// decides it: each of its transitions that can start a run takes an ``EffectProgramOrder``, which this
/// class reads from the calling task's item (``SentItemOrigin/current``) under the lock, in the critical
/// section of the transition. A run never cancels the runs it is nested in through `cancelInFlight`.
final class EffectRegistry: Sendable {
  typealias State = EffectRegistryState<
    UnsafeContinuation<ThrottleTurn, any Error>, UnsafeContinuation<Void, any Error>
  >

  private let state = Locked(State())
  /// The side effects a cancellation by id marks (see ``SentItemOrigin``).
  private let sentItems: @Sendable (SentItemOrigin?) -> [SentItemOrigin]
  /// Set when the store tracks activity: each task that waits for a run (or a throttle window) says so.
  let links: CarrierLinks?
  /// Starts the tasks of runs and throttle windows, when the store says how.
  private let taskStarter: (any EffectTaskStarter)?

  private init(
    sentItems: @escaping @Sendable (SentItemOrigin?) -> [SentItemOrigin], links: CarrierLinks?,
    taskStarter: (any EffectTaskStarter)?
  ) {
    self.sentItems = sentItems
    self.links = links
    self.taskStarter = taskStarter
  }

  /// Starts an unstructured task for a run or a throttle window: `Task {}` (the caller's priority and
  /// task-local values), or the store's ``StoreConfiguration/effectTaskStarter``.
  func startTask<T: Sendable>(_ operation: sending @escaping () async -> T) -> Task<T, Never> {
    if let taskStarter { return taskStarter.start(operation) }
    return Task(operation: operation)
  }

  /// The registry of the store behind `internals`, installing its shutdown handler on first use; nil once
  /// the store has shut down.
  static func of(_ internals: any StoreContextInternals) -> EffectRegistry? {
    let made = internals.attachment(EffectRegistry.self) {
      EffectRegistry(
        sentItems: internals.sentItemsQuery(), links: internals.carrierLinks(), taskStarter: internals.effectTaskStarter
      )
    }
    guard let registry = made else { return nil }
    if registry.state.withLock({ $0.claimShutdownHandler() }) {
      // Runs at once if the store shut down after handing out the registry: the registry then cancels
      // whatever was registered meanwhile and refuses new work.
      internals.addShutdownHandler { registry.shutDown() }
    }
    return registry
  }

  /// Runs plus throttled calls waiting for their window.
  var entryCount: Int {
    state.withLock { $0.entryCount }
  }

  // MARK: - Runs

  /// Runs `operation` in a task of its own registered under `id`, and returns its outcome.
  ///
  /// - Throws: `CancellationError` if the run was cancelled before `operation` finished (by id, by a
  ///   newer run with `cancelInFlight`, by shutdown, or because the calling task was cancelled), whatever
  ///   `operation` returned or threw, and without starting `operation` if a cancellation by id reached the
  ///   sent item it belongs to first; otherwise what `operation` throws. ``StoreError/storeShutDown`` if the
  ///   store has shut down.
  nonisolated(nonsending) func run<T: Sendable>(
    id: EffectID, cancelInFlight: Bool, operation: sending @escaping () async throws -> T
  ) async throws -> T {
    // A caller cancelled already neither starts the operation nor cancels the runs in flight.
    try Task.checkCancellation()
    let token = try reserve(id, cancelInFlight: cancelInFlight)
    return try await run(reserved: token, operation: operation)
  }

  /// Runs `operation` as the run `token`, already registered; see ``run(id:cancelInFlight:operation:)``.
  nonisolated(nonsending) func run<T: Sendable>(
    reserved token: UInt64, operation: sending @escaping () async throws -> T
  ) async throws -> T {
    // A task of its own, so that the run can be cancelled by id; the caller's cancellation is forwarded
    // below. `Task` (not detached) keeps the caller's priority and task-local values, and the run's nested
    // runs know it as an ancestor.
    let scope = EffectRunScope(registry: ObjectIdentifier(self), token: token, parent: EffectRunScope.current)
    // The task is created and attached in one critical section, and reads its entry before it starts the
    // operation: a cancellation by id that has returned always stops an operation that had not started.
    // (Attached after its creation, the task would run uncancelled until the attach, and the operation
    // could dispatch after the cancellation returned.) Creating a task runs none of the operation.
    let operation = SentOnce(operation)
    let links = self.links
    let (task, attached) = state.withLock { state -> (Task<Result<T, any Error>, Never>, Bool) in
      let task = startTask { () -> Result<T, any Error> in
        if let links { links.bind(token, TaskIdentity.current) }
        defer { if let links { links.bind(token, nil) } }
        let result: Result<T, any Error>
        if self.state.withLock({ $0.isCancelled(token) }) {
          result = .failure(CancellationError())
        } else {
          do {
            result = .success(try await EffectRunScope.$current.withValue(scope) { try await operation.value() })
          } catch {
            result = .failure(error)
          }
        }
        // Cancelled before the operation returned: by the caller (the task's flag) or through the registry
        // (the entry's flag, read as the entry is removed).
        let taskCancelled = Task.isCancelled
        let entryCancelled = self.finish(token)
        return taskCancelled || entryCancelled ? .failure(CancellationError()) : result
      }
      return (task, state.attach(token, cancel: { task.cancel() }))
    }
    if !attached {
      task.cancel()
    }
    let waiter = links == nil ? nil : TaskIdentity.current
    if let links, let waiter { links.handOff(waiter, token) }
    defer { if let links, let waiter { links.handOff(waiter, nil) } }
    return try await withTaskCancellationHandler {
      try await task.value.get()
    } onCancel: {
      task.cancel()
    }
  }

  /// Registers a run under `id` and cancels what `cancelInFlight` replaces (never the calling run's
  /// ancestors).
  func reserve(_ id: EffectID, cancelInFlight: Bool) throws -> UInt64 {
    let ancestors = EffectRunScope.current?.tokens(in: ObjectIdentifier(self)) ?? []
    let origin = SentItemOrigin.current
    var actions = State.Actions()
    let reservation = state.withLock { state in
      state.reserve(
        id, cancelInFlight: cancelInFlight, ancestors: ancestors, order: EffectProgramOrder(of: origin),
        actions: &actions)
    }
    perform(actions)
    switch reservation {
    case .reserved(let token): return token
    case .cancelled: throw CancellationError()
    case .storeShutDown: throw StoreError.storeShutDown
    }
  }

  /// Attaches the task of a reserved run; cancels it at once if the run was cancelled meanwhile.
  func attach(_ token: UInt64, task: Task<Void, Never>) {
    if !state.withLock({ $0.attach(token, cancel: { task.cancel() }) }) {
      task.cancel()
    }
  }

  /// Removes a finished run; returns whether it had been cancelled.
  @discardableResult
  func finish(_ token: UInt64) -> Bool {
    var actions = State.Actions()
    let wasCancelled = state.withLock { $0.finish(token, actions: &actions) }
    perform(actions)
    return wasCancelled
  }

  /// Cancels `id` in the store behind `internals`; see ``cancel(_:)``. From inside a state updater (whose
  /// thread holds the store's lock, which cancelled tasks' handlers may need) it only warns.
  static func cancel(_ id: EffectID, in internals: any StoreContextInternals) {
    guard !internals.isInsideUpdater else {
      internals.runtimeWarning(
        "cancel(id:) was called from inside a StateUpdater; nothing was cancelled. Updaters must be pure: "
          + "cancel from a side effect, a listener or an interceptor.")
      return
    }
    of(internals)?.cancel(id)
  }

  /// Cancels everything running under `id`, and the runs under `id` that items sent before this call
  /// register later. From a sent item's work, the items sent before this call are those that entered the
  /// mailbox before that item, and those that item sent itself.
  func cancel(_ id: EffectID) {
    let origins = sentItems(SentItemOrigin.current)
    var actions = State.Actions()
    state.withLock { state in
      for origin in origins {
        origin.cancelledIDs.insert(id)
      }
      state.cancelAll(id, actions: &actions)
    }
    perform(actions)
  }

  /// Cancels everything and refuses new work; the store calls it when it shuts down.
  func shutDown() {
    var actions = State.Actions()
    state.withLock { $0.shutDown(actions: &actions) }
    perform(actions)
  }

  // MARK: - Throttle

  /// Waits, if `throttle` says so, for the throttled call's turn; see
  /// ``EffectRegistryState/throttle(_:latest:token:order:caller:actions:)``.
  ///
  /// - Throws: `CancellationError` if the call is dropped, or if a cancellation of `id` reached the sent item
  ///   it belongs to first (program order); ``StoreError/storeShutDown``.
  nonisolated(nonsending) func throttleTurn(_ id: EffectID, latest: Bool, token: UInt64) async throws -> ThrottleTurn {
    try Task.checkCancellation()
    let origin = SentItemOrigin.current
    var actions = State.Actions()
    let caller = links == nil ? nil : TaskIdentity.current
    let decision = state.withLock {
      $0.throttle(
        id, latest: latest, token: token, order: EffectProgramOrder(of: origin), caller: caller, actions: &actions)
    }
    perform(actions)
    switch decision {
    case .runNow(let windowToken):
      return .openedWindow(windowToken)
    case .drop, .cancelled:
      throw CancellationError()
    case .storeShutDown:
      throw StoreError.storeShutDown
    case .hold(let waiter, let windowToken):
      // Held, the call waits for the task that closes the window. Whoever releases, drops or cancels the
      // held call ends this hand-off before resuming it (the window's task may sleep again at once, and this
      // task, awake, must not look asleep meanwhile); if that happened before the hand-off was made, the
      // call is no longer held, and the hand-off ends here.
      if let links, let caller {
        links.handOff(caller, windowToken)
        if !state.withLock({ $0.isHeld(id, waiter: waiter) }) { links.handOff(caller, nil) }
      }
      defer { if let links, let caller { links.handOff(caller, nil) } }
      return try await state.suspend(
        install: { state, continuation in state.suspendHeld(waiter, on: continuation) },
        cancel: { [self] state in cancelHeld(id, waiter: waiter, in: &state) })
    }
  }

  /// Takes back the held throttled call `waiter`, whose caller is cancelled; returns what to do after
  /// unlocking.
  private func cancelHeld(_ id: EffectID, waiter: UInt64, in state: inout State) -> (@Sendable () -> Void)? {
    var actions = State.Actions()
    if let resumption = state.cancelHeld(id, waiter: waiter, actions: &actions) {
      actions.turnResumptions.append(resumption)
    }
    guard !actions.isEmpty else { return nil }
    let pending = PendingActions(actions)
    return { [self] in perform(pending.actions) }
  }

  /// A `sending` value on its way into the one task that uses it, through a closure the compiler cannot see
  /// is called once.
  private struct SentOnce<Value>: @unchecked Sendable {  // Sendable: handed over once, never used by the sender.
    let value: Value
    init(_ value: sending Value) { self.value = value }
  }

  /// Registry actions carried to after unlocking.
  private struct PendingActions: @unchecked Sendable {
    // Sendable: the continuations and closures inside are Sendable; the value is only moved, then used once.
    let actions: State.Actions
    init(_ actions: State.Actions) { self.actions = actions }
  }

  /// The window whose closing task has run token `token` has reached its end.
  func windowElapsed(_ id: EffectID, _ token: UInt64) -> State.WindowStep {
    var actions = State.Actions()
    let step = state.withLock { $0.windowElapsed(id, token, actions: &actions) }
    perform(actions)
    return step
  }

  func makeToken() -> UInt64 {
    state.withLock { $0.makeToken() }
  }

  // MARK: - Waiting for a count

  /// Returns once ``entryCount`` equals `count` (at once if it does): tests synchronise on it, for
  /// example to know that a throttled call is waiting, or that everything has finished.
  ///
  /// - Throws: `CancellationError` if the calling task is cancelled first.
  nonisolated(nonsending) func waitForEntryCount(_ count: Int) async throws {
    guard let waiter = state.withLock({ $0.addCountWaiter(count: count) }) else { return }
    try await state.suspend(
      install: { state, continuation in state.suspendCountWaiter(waiter, on: continuation) },
      cancel: { state in state.cancelCountWaiter(waiter)?.afterUnlock })
  }

  // MARK: - Performing

  private func perform(_ actions: State.Actions) {
    guard !actions.isEmpty else { return }
    if let links {
      for caller in actions.endedHandOffs { links.handOff(caller, nil) }
    }
    for cancel in actions.cancels {
      cancel()
    }
    for resumption in actions.turnResumptions {
      resumption.perform()
    }
    for resumption in actions.countResumptions {
      resumption.perform()
    }
  }
}

/// The runs the current task is nested in, innermost first, across registries.
struct EffectRunScope: Sendable {
  @TaskLocal static var current: EffectRunScope?

  let registry: ObjectIdentifier
  let token: UInt64
  /// The enclosing runs, in a box so that the scope stays a small value.
  private let parentBox: ParentBox?

  private final class ParentBox: Sendable {
    let scope: EffectRunScope
    init(_ scope: EffectRunScope) { self.scope = scope }
  }

  init(registry: ObjectIdentifier, token: UInt64, parent: EffectRunScope?) {
    self.registry = registry
    self.token = token
    self.parentBox = parent.map(ParentBox.init)
  }

  /// The tokens of the enclosing runs (this one included) that belong to `registry`.
  func tokens(in registry: ObjectIdentifier) -> Set<UInt64> {
    var tokens: Set<UInt64> = []
    var scope: EffectRunScope? = self
    while let current = scope {
      if current.registry == registry { tokens.insert(current.token) }
      scope = current.parentBox?.scope
    }
    return tokens
  }
}
