import Katana
import Testing

/// One item the test store's interceptor saw: what it was, who dispatched it, and the state around it.
final class RecordedStep<S: State>: @unchecked Sendable {
  // Sendable: the `var`s are only touched under the recorder's lock.
  let id: UInt64
  let item: any Dispatchable
  let isUpdater: Bool
  let origin: DispatchRecord.Origin
  /// The state when the item reached the interceptor. For a state updater, which holds the store's turn
  /// while its chain runs, that is the state it was applied to.
  let before: S?
  /// Whether a task the store owns dispatched the item, outside the work of any item and outside the
  /// test: an item handed to the store with `send` by a side effect (or an interceptor, a listener). Its
  /// outcome goes to a handle that nobody may look at, so the test store reports its error.
  let isSent: Bool
  /// For a state updater, the state when its chain returned, still holding the turn: its committed change.
  var after: S?
  /// Whether the step can be asserted: a state updater's chain has returned; a side effect at once.
  var isReady: Bool
  /// Whether the chain has returned (for a side effect, its body too).
  var hasEnded = false
  /// What the chain threw.
  var error: (any Error)?
  /// Whether an issue has named this received item already (a `receive` that matched a later one): it is
  /// not reported again as unasserted.
  var isReported = false
  /// Whether the store rejected the item for its type (an `anyDispatch` of an updater of another state):
  /// it was never handled, so it is not a received item.
  var isDiscarded = false
  /// Whether the item's chain runs in a task that does not run on the test store's executor (a task of the
  /// test's, an unstructured task of a side effect, another store's work): the executor cannot tell whether
  /// it can run, so until it returns the store's work is busy.
  var isForeign = false
  /// The token bound around the item's chain, while unstructured tasks it started hold it.
  weak var watch: UnstructuredWatch?
  /// For a foreign item, the task its chain runs in.
  var foreignTask: TaskIdentity?

  init(
    id: UInt64, item: any Dispatchable, isUpdater: Bool, origin: DispatchRecord.Origin, before: S?, isSent: Bool
  ) {
    self.id = id
    self.item = item
    self.isUpdater = isUpdater
    self.origin = origin
    self.before = before
    self.isSent = isSent
    self.isReady = !isUpdater
  }
}

/// Everything the recorder's lock protects.
struct RecorderState<S: State> {
  var lastID: UInt64 = 0
  /// Set when the store initialises its interceptors, right after its state initializer returned.
  var hasStarted = false
  var exhaustivity: Exhaustivity
  /// Received items not asserted yet, in the order the interceptor saw them.
  var received: [RecordedStep<S>] = []
  /// Items whose interceptor chain is running (for a side effect, until its body has returned).
  var running: [UInt64: RecordedStep<S>] = [:]
  /// Sent side effects (see ``RecordedStep/isSent``) that threw, not asserted with `receiveError`.
  var unhandledErrors: [RecordedStep<S>] = []
  /// Feature outputs that nothing handled, not asserted with `receiveOutput` yet, in the order they were
  /// emitted.
  var outputs: [any FeatureOutput] = []
  /// The test's answers to outputs (`handleOutputs`), tried in order: each returns false for another type.
  var outputHandlers: [@Sendable (any FeatureOutput) async throws -> Bool] = []
  var log: [DispatchRecord] = []
  /// Tasks the test store started for the test's items, until they finish.
  var ownWork: [UInt64: any OwnWork] = [:]
  /// The test's last item: the next one goes to the store once this one has (program order).
  var lastOwn: (any OwnWork)?
  /// The test's items that ended with an error nobody looked at, kept for the end of the test.
  var failedOwnWork: [any OwnWork] = []
  /// Set by `finish()` or when the test store is released: the end-of-test checks have run.
  var isFinished = false
  /// Items whose chain has returned while unstructured tasks their work started still run.
  var watched: [WatchedWork] = []
  /// The test's items that a wait gave up on and cancelled, after recording the issue that explains why: their
  /// work still unwinding at the end of the test is not reported again.
  /// Identifiers of their tasks and recorded steps (both from ``makeID()``).
  var abandoned: Set<UInt64> = []

  mutating func makeID() -> UInt64 {
    lastID &+= 1
    return lastID
  }
}

/// What the end of a test found: returned once, by whichever of `finish()` and the test store's release
/// comes first.
struct EndOfTestReport<S: State> {
  let exhaustivity: Exhaustivity
  let unasserted: [RecordedStep<S>]
  let running: [String]
  /// Errors nobody looked at: the test's sent items (with the line that sent them) and sent side effects.
  let unhandledErrors: [(item: any Dispatchable, error: any Error, location: SourceLocation?)]
  /// Feature outputs that nothing asserted.
  let unassertedOutputs: [any FeatureOutput]
}

/// How the recorder reaches the store it records: set once, right after the store is created (the store
/// holds the recorder's interceptor, so the recorder must not hold the store strongly).
struct StoreAccess: Sendable {
  let activeWork: @Sendable () -> Int
  /// The tasks that carry the store's work, or nil if one of the given tasks (the test's items in flight)
  /// carries none itself (see `Store.activityCarriers(inside:)`).
  let activityCarriers: @Sendable ([TaskIdentity]) -> [TaskIdentity]?
  let waitUntilIdle: @Sendable () async throws -> Void
}

/// The test store's bookkeeping: the interceptor it installs first in the store's chain, the items it saw,
/// the tasks it started, and the events its waits wait for. One per test store; nothing is shared.
final class TestStoreRecorder<S: State>: ClockObserving, Sendable {
  let state: TestLock<RecorderState<S>>
  let recordsDispatches: Bool
  let failsafeBound: Duration
  let failsafeClock: any Clock<Duration>
  /// The store's clock, when it is a ``TestClock``: its sleepers tell whether the store's work is parked.
  let clock: TestClock?
  /// ``TestStoreConfiguration/skippedAssertionHandler``.
  let skippedAssertionHandler: (@Sendable (String) -> Void)?
  /// Bumped on every event (an item intercepted or done, a task of the test done, a failsafe fired, the
  /// test clock changed, the executor quiet, an unstructured task of the store's work ended); waiters wait
  /// for it to move.
  let signal: ChangeSignal
  /// The serial executor the store's work runs on; nil where task executors are not available (or a test of
  /// the fallback turned it off): settlement is then inferred from the store's activity.
  let execution: TestExecution?
  /// The sleeps on a real clock (see ``RealTimeClock``) that the store's work has in progress.
  let realTimeSleeps = RealTimeSleeps()
  private let storeAccess = TestLock<StoreAccess?>(nil)
  /// The task that created the test store: the test's own. Only its waits may conclude at once that nothing
  /// can happen until the test clock moves (see ``isTestTask()``). Nil when the test store was created
  /// outside any task: every wait is then taken for the test's.
  let testTask: TaskIdentity?

  init(configuration: TestStoreConfiguration) {
    let signal = ChangeSignal()
    self.signal = signal
    execution = configuration.usesSerialExecutor ? TestExecution.make(signal: signal) : nil
    testTask = TaskIdentity.current
    state = TestLock(RecorderState(exhaustivity: configuration.exhaustivity))
    recordsDispatches = configuration.recordsDispatches
    failsafeBound = configuration.failsafe
    failsafeClock = configuration.failsafeClock
    clock = configuration.store.clock as? TestClock
    skippedAssertionHandler = configuration.skippedAssertionHandler
  }

  /// Connects the recorder to its store and to the store's test clock.
  func connect(_ access: StoreAccess) {
    storeAccess.withLock { $0 = access }
    clock?.attach(self)
  }

  var id: ObjectIdentifier { ObjectIdentifier(self) }

  // MARK: - The interceptor

  /// The interceptor the test store puts first in the chain: it sees every item before the others do.
  var interceptor: StoreInterceptor {
    { [self] context in
      state.withLock { $0.hasStarted = true }
      return { next in
        { item in try await self.intercept(item, context: context, next: next) }
      }
    }
  }

  /// Records `item`, runs the rest of the chain (outside the test's claim, labelled as the item's work),
  /// and records the outcome.
  ///
  /// For a state updater this runs while the updater holds the store's turn: no other updater commits until
  /// it returns, so the states read before and after are exactly the updater's change. Nothing here waits
  /// on the store.
  func intercept(_ item: any Dispatchable, context: any AnySideEffectContext, next: StoreInterceptorNext)
    async throws
  {
    let claim = DispatchClaim.current
    let isOwn = claim?.claim(by: id) ?? false
    let isUpdater = item is any AnyStateUpdater
    let before = context.getAnyState() as? S
    let origin: DispatchRecord.Origin = isOwn ? .test : .received
    // A task the store owns is detached: it has neither the test's task-locals nor an item's label.
    let isSent = !isOwn && WorkLabel.current == nil && Test.current == nil
    let isForeign = execution.map { !$0.isCurrent() } ?? false
    let foreignTask = isForeign ? TaskIdentity.current : nil
    // An unstructured task of an item's work dispatches: now its task is known (it may sleep on the clock).
    if let foreignTask { UnstructuredWatch.current?.note(foreignTask) }
    let step = state.withLock { state in
      let step = RecordedStep(
        id: state.makeID(), item: item, isUpdater: isUpdater, origin: origin, before: before, isSent: isSent)
      step.isForeign = isForeign
      step.foreignTask = foreignTask
      state.running[step.id] = step
      if !isOwn { state.received.append(step) }
      if recordsDispatches { state.log.append(DispatchRecord(item: item, origin: origin)) }
      return step
    }
    if isOwn, let claim { claim.step = step }
    signal.bump()
    do {
      try await runChain(of: step, next: next)
    } catch {
      finish(step, after: isUpdater ? context.getAnyState() as? S : nil, error: error)
      throw error
    }
    finish(step, after: isUpdater ? context.getAnyState() as? S : nil, error: nil)
  }

  /// Runs the rest of the chain outside the test's claim, labelled as the item's work, watching the
  /// unstructured tasks it starts (see ``UnstructuredWatch``). The watch is only referenced from here and
  /// from those tasks: once this returns, it is alive exactly while they run.
  private func runChain(of step: RecordedStep<S>, next: StoreInterceptorNext) async throws {
    let item = step.item
    let watch = UnstructuredWatch(item: item, signal: signal)
    state.withLock { _ in step.watch = watch }
    try await DispatchClaim.$current.withValue(nil) {
      try await UnstructuredWatch.$current.withValue(watch) {
        try await WorkLabel.$current.withValue(WorkLabel(item: item)) { try await next(item) }
      }
    }
  }

  private func finish(_ step: RecordedStep<S>, after: S?, error: (any Error)?) {
    state.withLock { state in
      step.after = after
      step.isReady = true
      step.hasEnded = true
      step.error = error
      state.running[step.id] = nil
      if step.watch != nil { state.watched.append(WatchedWork(watch: step.watch, item: step.item)) }
      guard let error else { return }
      if step.origin == .received, Self.isTypeCheckFailure(error) {
        step.isDiscarded = true
        state.received.removeAll { $0 === step }
      }
      if step.isSent, !(error is CancellationError) {
        state.unhandledErrors.append(step)
      }
    }
    signal.bump()
  }

  /// Whether the store rejected an item for its type before handling it.
  static func isTypeCheckFailure(_ error: any Error) -> Bool {
    switch error as? StoreError {
    case .wrongStateType, .wrongContextType: true
    default: false
    }
  }

  // MARK: - The test's own items

  /// Starts a task that dispatches the test's item under a claim, and registers it until it is done.
  ///
  /// The task is unstructured so that a failsafe can stop waiting for it; it inherits the test's priority
  /// and task-locals (Swift Testing's current test among them), and the caller forwards its cancellation.
  /// It goes to the store once the test's previous item has reached it, so the test's items keep the order
  /// the test wrote them in.
  func startOwnTask<Value: Sendable>(
    _ item: any Dispatchable, at location: SourceLocation, _ operation: @escaping @Sendable () async throws -> Value
  ) -> OwnTask<Value> {
    let claim = DispatchClaim(owner: id)
    let (own, previous) = state.withLock { state in
      let own = OwnTask<Value>(id: state.makeID(), item: item, claim: claim, location: location)
      state.ownWork[own.id] = own
      defer { state.lastOwn = own }
      return (own, state.lastOwn)
    }
    let body: @Sendable () async -> Void = { [self] in
      own.setIdentity(TaskIdentity.current)
      if let previous {
        await waitUntilAdmitted(previous)
      } else {
        await waitUntilStartupEnded()
      }
      let result: Result<Value, any Error>
      do {
        result = .success(try await DispatchClaim.$current.withValue(claim) { try await operation() })
      } catch {
        result = .failure(error)
      }
      own.complete(result)
      state.withLock { state in
        state.ownWork[own.id] = nil
        if case .failure(let error) = result, !(error is CancellationError) {
          state.failedOwnWork.append(own)
        }
      }
      signal.bump()
    }
    // On the test store's executor when there is one: the item's work, and the side effect it may run, is
    // the store's work.
    let task = execution?.startTask(body) ?? Task(operation: body)
    own.setTask(task)
    return own
  }

  /// Before the test's first item: returns once the store's start-up has ended (the store counts it as work
  /// in flight, and it ends without an event the recorder sees: a store whose only other work is asleep on
  /// the test clock would not look parked until the next event), or as soon as anything reaches the
  /// interceptor (work of the dependency container, which may run for long), or when the calling task is
  /// cancelled.
  private nonisolated(nonsending) func waitUntilStartupEnded() async {
    guard let access = storeAccess.withLock({ $0 }) else { return }
    let generation = signal.generation
    let signal = self.signal
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await signal.wait(after: generation) }
      group.addTask { try? await access.waitUntilIdle() }
      await group.next()
      group.cancelAll()
    }
  }

  /// Returns once `previous` has reached the store or finished without reaching it, or when the calling
  /// task is cancelled.
  private nonisolated(nonsending) func waitUntilAdmitted(_ previous: any OwnWork) async {
    while !Task.isCancelled {
      let generation = signal.generation
      if previous.isAdmitted { return }
      await signal.wait(after: generation)
    }
  }

  /// Waits for a task of the test to finish and returns its outcome. If it cannot finish (everything in
  /// flight is asleep on the test clock) or the failsafe expires first, the task is cancelled, an issue
  /// recorded, and the outcome is a ``TestStoreError``.
  ///
  /// Cancelling the waiting task cancels the item, and the wait goes on until the item returns (or the
  /// failsafe expires), like awaiting the store's `dispatch` itself.
  nonisolated(nonsending) func outcome<Value: Sendable>(
    of own: OwnTask<Value>, waiting: @autoclosure () -> String, at location: SourceLocation
  ) async -> Result<Value, any Error> {
    own.acknowledge()
    var failsafe: Failsafe?
    defer { failsafe?.cancel() }
    return await withTaskCancellationHandler {
      while true {
        let generation = signal.generation
        if let result = own.result { return result }
        if case .parked(let sleepers) = settlementForWait() {
          // The item may have finished while the store was being looked at: its result is set before it
          // leaves the test's work, so a settlement that no longer counted it finds the result here.
          if let result = own.result { return result }
          abandon(own)
          let message =
            "\(waiting()) cannot return until \(Parking.until(sleepers)). Advance the "
            + "clock (`clock.advance(by:)`) before waiting for it, or start it with `send` and drive the clock "
            + "from the test."
          return .failure(
            recordIssueStoppingTest(
              message, at: location, otherwise: TestStoreError.waitsForTestClock(waiting())))
        }
        if failsafe == nil { failsafe = startFailsafe() }
        if let failsafe, failsafe.isExpired {
          let running = runningDescription()
          abandon(own)
          let message =
            "\(waiting()) did not return within \(describe(failsafe.bound)) (the test store's hang failsafe). "
            + "Still in flight: \(running). If the item waits for a clock or another event that the test drives, "
            + "start it with `send` and drive it from the test."
          return .failure(
            recordIssueStoppingTest(message, at: location, otherwise: TestStoreError.failsafeExpired(waiting())))
        }
        await signal.wait(after: generation, cancellable: false)
      }
    } onCancel: {
      own.cancel()
    }
  }

  /// Cancels the test's item `own`, which a wait gave up on: its work still unwinding later is not reported
  /// again.
  private func abandon<Value: Sendable>(_ own: OwnTask<Value>) {
    state.withLock { state in
      state.abandoned.insert(own.id)
      if let step = own.claim.step as? RecordedStep<S> { state.abandoned.insert(step.id) }
    }
    own.cancel()
  }

  // MARK: - Received items

  /// The received items not asserted yet, those of them that an issue has named already, and the generation
  /// they were read at.
  var pendingReceived:
    (
      steps: [RecordedStep<S>], reported: Set<UInt64>, generation: UInt64, exhaustivity: Exhaustivity
    )
  {
    let generation = signal.generation
    return state.withLock { state in
      (state.received, Set(state.received.filter(\.isReported).map(\.id)), generation, state.exhaustivity)
    }
  }

  /// Removes the received items with these identifiers: they have been asserted or skipped.
  func removeReceived(_ ids: Set<UInt64>) {
    state.withLock { state in state.received.removeAll { ids.contains($0.id) } }
  }

  /// Marks received items as named by an issue: they are not reported again as unasserted.
  func markReported(_ steps: [RecordedStep<S>]) {
    state.withLock { _ in
      for step in steps { step.isReported = true }
    }
  }

  /// Removes every received item not asserted yet, and returns those that no issue has named.
  func takeReceived() -> [RecordedStep<S>] {
    state.withLock { state in
      defer { state.received = [] }
      return state.received.filter { !$0.isReported }
    }
  }

  /// Whether `step` can be asserted (or was discarded), and the generation it was read at.
  func readiness(of step: RecordedStep<S>) -> (isReady: Bool, isDiscarded: Bool, generation: UInt64) {
    let generation = signal.generation
    return state.withLock { _ in (step.isReady, step.isDiscarded, generation) }
  }

  /// The states around `step`, read under the lock.
  func states(of step: RecordedStep<S>) -> (before: S?, after: S?) {
    state.withLock { _ in (step.before, step.after) }
  }

  /// Removes and returns the first unhandled error of a sent side effect that `matches`.
  func record(output: any FeatureOutput) async throws {
    let handlers = state.withLock { state in
      state.outputs.append(output)
      return state.outputHandlers
    }
    signal.bump()
    // The test's answer, as the app's handler would give one: in the emitting task, its error to `emit`.
    for handler in handlers where try await handler(output) {
      return
    }
  }

  func addOutputHandler(_ handler: @escaping @Sendable (any FeatureOutput) async throws -> Bool) {
    state.withLock { $0.outputHandlers.append(handler) }
  }

  /// The outputs not asserted yet, and the signal's generation read with them.
  var pendingOutputs: (outputs: [any FeatureOutput], exhaustivity: Exhaustivity, generation: UInt64) {
    let generation = signal.generation
    return state.withLock { ($0.outputs, $0.exhaustivity, generation) }
  }

  /// Removes the output at `index` and those before it.
  func removeOutputs(through index: Int) {
    state.withLock { state in state.outputs.removeFirst(min(index + 1, state.outputs.count)) }
  }

  /// Removes and returns the first unhandled error of a sent side effect that `matches`.
  func takeUnhandledError(where matches: (RecordedStep<S>) -> Bool) -> RecordedStep<S>? {
    let errors = state.withLock { $0.unhandledErrors }
    // The predicate is user code: it runs on a snapshot, outside the lock.
    guard let step = errors.first(where: matches) else { return nil }
    state.withLock { state in state.unhandledErrors.removeAll { $0 === step } }
    return step
  }

  var unhandledErrorSteps: [RecordedStep<S>] {
    state.withLock { $0.unhandledErrors }
  }

  // MARK: - Waiting

  var hasOwnWorkRunning: Bool {
    state.withLock { !$0.ownWork.isEmpty }
  }

  /// Starts the failsafe of one wait of the test store.
  func startFailsafe() -> Failsafe {
    Failsafe(bound: failsafeBound, clock: failsafeClock) { [signal] in signal.bump() }
  }

  func clockDidChange() {
    signal.bump()
  }

  /// Where the store's work stands: nothing in flight (`idle`), nothing of it can run until the test acts
  /// (`parked`, with the sleepers of the test clock, if any), or something may still go on without the test
  /// (`busy`).
  ///
  /// With the serial executor, `parked` is a fact read in one stable snapshot: no job of the store's work is
  /// queued or running on the executor, no unstructured task that an item's work started is running (unless
  /// it sleeps on the test clock), no item's chain runs in a task that is not the executor's (same), and no
  /// sleep on a real clock is in progress. Without the executor, see ``inferredSettlement()``.
  func settlement() -> Settlement {
    guard let execution else { return inferredSettlement() }
    while true {
      // The order of the reads matters: an unstructured task (or a foreign chain) queues the work it hands
      // to the executor before it ends, so once it is seen ended, the executor read after it shows that work.
      let generation = signal.generation
      let outside = workOutsideExecutor()
      let own = state.withLock { !$0.ownWork.isEmpty }
      let isQuiet = execution.isQuiet()
      let activeWork = storeAccess.withLock { $0 }?.activeWork() ?? 0
      let (version, snapshot) = clock?.versionedSnapshot() ?? (0, (.zero, []))
      if signal.generation != generation || clock.map({ $0.version != version }) ?? false { continue }
      // Work outside the executor is settled only while it sleeps on the test clock.
      let asleep = Set(snapshot.sleepers.compactMap(\.task))
      let awake = outside.filter { $0.tasks.isEmpty || !$0.tasks.isSubset(of: asleep) }
      if !awake.isEmpty || !isQuiet || realTimeSleeps.inProgress > 0 { return .busy(runningDescription()) }
      if activeWork == 0, !own, outside.isEmpty { return .idle }
      return .parked(snapshot.sleepers.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) })
    }
  }

  /// The work of the store's that runs where the executor cannot see it: unstructured tasks that items'
  /// work started (`Task {}`), and items whose chain runs in a task that is not the executor's.
  func workOutsideExecutor() -> [(description: String, tasks: Set<TaskIdentity>)] {
    state.withLock { state in
      state.watched.removeAll { $0.watch == nil }
      let watched = state.watched.compactMap { work -> (String, Set<TaskIdentity>)? in
        guard let watch = work.watch else { return nil }
        return ("a task that \(describe(work.item)) started (`Task {}`)", watch.tasks)
      }
      let foreign = state.running.values.filter(\.isForeign).sorted { $0.id < $1.id }.map {
        ("\(describe($0.item)) (running outside the test store's executor)", Set($0.foreignTask.map { [$0] } ?? []))
      }
      return watched + foreign
    }
  }

  /// ``settlement()`` where there is no serial executor (Apple platforms before macOS 15 and iOS 18): the
  /// store reports the task that carries each unit of its in-flight work, and the test clock knows which
  /// tasks sleep.
  func inferredSettlement() -> Settlement {
    while true {
      let generation = signal.generation
      let own = state.withLock { Array($0.ownWork.values) }
      let access = storeAccess.withLock { $0 }
      let activeWork = access?.activeWork() ?? 0
      if activeWork == 0, own.isEmpty, workOutsideExecutor().isEmpty {
        if signal.generation == generation { return .idle }
        continue
      }
      // Every item of the test has reached the store, and the store knows the task that carries each piece
      // of its work (followed through the effect tools' runs and throttle windows to the task doing it).
      // Each of those items is still inside the store: one whose dispatch has returned is about to report,
      // so it is busy even when everything else sleeps.
      let ownTasks = own.compactMap { $0.hasStarted ? $0.task : nil }
      if let clock, ownTasks.count == own.count, let carriers = access?.activityCarriers(ownTasks) {
        let (version, snapshot) = clock.versionedSnapshot()
        if let parked = Parking.sleepers(holding: carriers, among: snapshot.sleepers) {
          if signal.generation == generation, clock.version == version { return .parked(parked) }
          continue
        }
      }
      if signal.generation != generation { continue }
      return .busy(runningDescription())
    }
  }

  /// ``settlement()`` as a wait of the calling task sees it: work asleep on the test clock is settled for
  /// good only for the test's own task, which is the one that would move the clock. For another task (a
  /// helper task of the test awaiting an item, say) the test may still move the clock, so such work counts
  /// as busy: the wait goes on, until the clock moves or the failsafe expires.
  func settlementForWait() -> Settlement {
    // A wait of the test is where a report that a store-owned task could not record gets recorded.
    clock?.unsetClockReport?.flush()
    let settlement = settlement()
    if case .parked = settlement, !isTestTask() { return .busy(runningDescription()) }
    return settlement
  }

  func isTestTask() -> Bool {
    guard let testTask else { return true }
    return TaskIdentity.current == testTask
  }

  /// Starts the tasks the store owns so that their end is an event: the store counts such a task as work in
  /// flight until it returns, and a waiter that saw it running must hear that it stopped.
  func taskStarter(
    wrapping starter: (@Sendable (_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never>)?
  ) -> @Sendable (_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
    { [signal, execution] operation in
      let announced: @Sendable () async -> Void = {
        await operation()
        signal.bump()
      }
      guard let execution else {
        return starter?(announced) ?? Task.detached(priority: Task.currentPriority, operation: announced)
      }
      guard let starter else { return execution.startDetachedTask(announced) }
      // A starter of the configuration's (KatanaPromises') starts the task elsewhere: it moves to the
      // executor first thing, and counts as runnable until it has.
      return execution.startArriving(starter, announced)
    }
  }

  /// Returns once an event happens after `generation`, or once the store reports that it has nothing in
  /// flight (or when the calling task is cancelled).
  ///
  /// While a task of the test is registered, only events count: the store may look idle before that task
  /// has reached it, and the task's end is an event.
  nonisolated(nonsending) func waitForChangeOrIdle(after generation: UInt64) async {
    // With the executor, the store's work going quiet is an event of the signal.
    guard execution == nil, !hasOwnWorkRunning, let access = storeAccess.withLock({ $0 }) else {
      await signal.wait(after: generation)
      return
    }
    let signal = self.signal
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await signal.wait(after: generation) }
      group.addTask { try? await access.waitUntilIdle() }
      await group.next()
      group.cancelAll()
    }
  }

  /// What is still in flight, for messages: the items whose chain is running, the test's items that have
  /// not reached the store yet, and who sleeps on the test clock.
  func runningDescription() -> String {
    var names = runningItems()
    if let clock {
      let sleepers = clock.snapshot().sleepers
      if !sleepers.isEmpty {
        names.append("asleep on the test clock: \(Parking.describe(sleepers))")
      }
    }
    return names.isEmpty
      ? "no item has reached the test store's interceptor yet (work queued in the mailbox, or a task the store "
        + "owns)"
      : names.joined(separator: ", ")
  }

  /// The items whose chain is running, and the test's items that have not reached the store yet.
  func runningItems() -> [String] {
    let (running, own) = state.withLock { state in
      (
        state.running.values.sorted { $0.id < $1.id }.filter { !state.abandoned.contains($0.id) },
        state.ownWork.filter { !state.abandoned.contains($0.key) }.map(\.value)
      )
    }
    return running.filter { !$0.isForeign }.map { "\(describe($0.item)) (running)" }
      + own.filter { !$0.hasStarted }.map { "\(describe($0.item)) (dispatched by the test, not started)" }
      + workOutsideExecutor().map(\.description)
      + (realTimeSleeps.inProgress > 0 ? ["a sleep on the store's real clock"] : [])
  }

  // MARK: - The end of the test

  /// Marks the test finished, cancels the test's own tasks, and reports what is left; nil if the test had
  /// already finished.
  func endOfTest() -> EndOfTestReport<S>? {
    let ended = state.withLock {
      state -> (
        Exhaustivity, [RecordedStep<S>], [any OwnWork], [any OwnWork], [RecordedStep<S>], [any FeatureOutput]
      )? in
      if state.isFinished { return nil }
      state.isFinished = true
      defer {
        state.received = []
        state.unhandledErrors = []
        state.failedOwnWork = []
        state.outputs = []
      }
      return (
        state.exhaustivity, state.received.filter { !$0.isReported }, Array(state.ownWork.values),
        state.failedOwnWork, state.unhandledErrors, state.outputs
      )
    }
    guard let (exhaustivity, unasserted, own, failedOwn, unhandled, outputs) = ended else { return nil }
    clock?.unsetClockReport?.flush()
    let running = runningItems()
    for work in own {
      work.cancel()
    }
    var errors: [(item: any Dispatchable, error: any Error, location: SourceLocation?)] = []
    for work in failedOwn {
      if let error = work.unacknowledgedError { errors.append((work.item, error, work.location)) }
    }
    for step in unhandled {
      if let error = step.error { errors.append((step.item, error, nil)) }
    }
    return EndOfTestReport(
      exhaustivity: exhaustivity, unasserted: unasserted, running: running, unhandledErrors: errors,
      unassertedOutputs: outputs)
  }
}
