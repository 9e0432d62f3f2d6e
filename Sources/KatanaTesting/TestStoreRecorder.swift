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
  /// For a state updater, the state when its chain returned, still holding the turn: its committed change.
  var after: S?
  /// Whether the step can be asserted: a state updater's chain has returned; a side effect at once.
  var isReady: Bool

  init(id: UInt64, item: any Dispatchable, isUpdater: Bool, origin: DispatchRecord.Origin, before: S?) {
    self.id = id
    self.item = item
    self.isUpdater = isUpdater
    self.origin = origin
    self.before = before
    self.isReady = !isUpdater
  }
}

/// Marks the test's own dispatch, so that the interceptor can tell it from the items that side effects
/// dispatch.
///
/// The test store binds a claim as a task-local around its call into the store. The interceptor, which is
/// first in the chain, claims it for the first item it sees with it: the test's item, since nothing else runs
/// in that task before the chain. It then runs the rest of the chain with the task-local cleared, because a
/// side effect's body runs inside that call, in the same task, and what the body dispatches must count as
/// received. An item seen later with the claim still bound (one that an interceptor substituted with an
/// item of the other kind, which the store dispatches after the chain has returned) counts as received too.
/// Other tasks never see the claim: store-owned tasks are detached, and tasks a side effect creates start
/// inside the cleared scope.
final class DispatchClaim: Sendable {
  @TaskLocal static var current: DispatchClaim?

  /// The recorder of the test store that made the claim: another store's interceptor ignores it. (The task
  /// that binds the claim keeps that recorder alive, so the identifier cannot be reused meanwhile.)
  let owner: ObjectIdentifier
  private let state = TestLock<(isClaimed: Bool, step: AnyObject?)>((false, nil))

  init(owner: ObjectIdentifier) {
    self.owner = owner
  }

  /// Claims the item about to be recorded, if nobody has; returns whether this call claimed it.
  func claim(by recorder: ObjectIdentifier) -> Bool {
    guard recorder == owner else { return false }
    return state.withLock { state in
      if state.isClaimed { return false }
      state.isClaimed = true
      return true
    }
  }

  var isClaimed: Bool {
    state.withLock { $0.isClaimed }
  }

  /// The step recorded for the claimed item.
  var step: AnyObject? {
    get { state.withLock { $0.step } }
    set { state.withLock { $0.step = newValue } }
  }
}

/// What an item the test started offers the recorder: every `dispatch` and `send` of the test store runs
/// in a task of its own, so that a failsafe can stop waiting for it.
protocol OwnWork: AnyObject, Sendable {
  /// The item, for messages.
  var item: any Dispatchable { get }
  /// Whether the item has reached the interceptor.
  var hasStarted: Bool { get }
  func cancel()
}

/// A task the test store started to dispatch an item of the test, and the outcome once it is done.
final class OwnTask<Value: Sendable>: OwnWork {
  private struct TaskState {
    var task: Task<Void, Never>?
    var isCancelled = false
    var result: Result<Value, any Error>?
  }

  let id: UInt64
  let item: any Dispatchable
  let claim: DispatchClaim
  private let state = TestLock(TaskState())

  init(id: UInt64, item: any Dispatchable, claim: DispatchClaim) {
    self.id = id
    self.item = item
    self.claim = claim
  }

  var hasStarted: Bool { claim.isClaimed }

  var result: Result<Value, any Error>? {
    state.withLock { $0.result }
  }

  func setTask(_ task: Task<Void, Never>) {
    let isCancelled = state.withLock { state in
      state.task = task
      return state.isCancelled
    }
    if isCancelled { task.cancel() }
  }

  func complete(_ result: Result<Value, any Error>) {
    state.withLock { $0.result = result }
  }

  func cancel() {
    let task = state.withLock { state in
      state.isCancelled = true
      return state.task
    }
    task?.cancel()
  }
}

/// Fires once `bound` has passed on the failsafe clock after its creation, waking the recorder's waiters
/// so that a wait that would never end gives up. Each wait of the test store that has to suspend starts
/// one, and cancels it when it returns.
final class Failsafe: Sendable {
  private let state = TestLock<(isExpired: Bool, task: Task<Void, Never>?)>((false, nil))
  let bound: Duration

  init(bound: Duration, clock: any Clock<Duration>, wake: @escaping @Sendable () -> Void) {
    self.bound = bound
    let task = Task { [state] in
      do {
        try await clock.sleep(for: bound)
      } catch {
        return
      }
      state.withLock { $0.isExpired = true }
      wake()
    }
    state.withLock { $0.task = task }
  }

  var isExpired: Bool {
    state.withLock { $0.isExpired }
  }

  func cancel() {
    let task = state.withLock { $0.task }
    task?.cancel()
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
  var log: [DispatchRecord] = []
  /// Tasks the test store started for the test's items, until they finish.
  var ownWork: [UInt64: any OwnWork] = [:]
  /// Bumped on every event (an item intercepted or done, a task of the test done, a failsafe fired);
  /// waiters wait for it to move.
  var generation: UInt64 = 0
  var waiters: [UInt64: UnsafeContinuation<Void, Never>] = [:]
  /// Set by `finish()` or when the test store is released: the end-of-test checks have run.
  var isFinished = false

  mutating func makeID() -> UInt64 {
    lastID &+= 1
    return lastID
  }

  /// Records an event; returns the waiters to resume once the lock is released.
  mutating func bump() -> [UnsafeContinuation<Void, Never>] {
    generation &+= 1
    defer { waiters = [:] }
    return Array(waiters.values)
  }
}

/// What the end of a test found: returned once, by whichever of `finish()` and the test store's release
/// comes first.
struct EndOfTestReport<S: State> {
  let exhaustivity: Exhaustivity
  let unasserted: [RecordedStep<S>]
  let running: [String]
}

/// The test store's bookkeeping: the interceptor it installs first in the store's chain, the items it saw,
/// the tasks it started, and the events its waits wait for. One per test store; nothing is shared.
final class TestStoreRecorder<S: State>: Sendable {
  let state: TestLock<RecorderState<S>>
  let recordsDispatches: Bool
  let failsafeBound: Duration
  let failsafeClock: any Clock<Duration>

  init(configuration: TestStoreConfiguration) {
    state = TestLock(RecorderState(exhaustivity: configuration.exhaustivity))
    recordsDispatches = configuration.recordsDispatches
    failsafeBound = configuration.failsafe
    failsafeClock = configuration.failsafeClock
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

  /// Records `item`, runs the rest of the chain (outside the test's claim), and records the outcome.
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
    let (step, waiters) = state.withLock { state in
      let step = RecordedStep(id: state.makeID(), item: item, isUpdater: isUpdater, origin: origin, before: before)
      state.running[step.id] = step
      if !isOwn { state.received.append(step) }
      if recordsDispatches { state.log.append(DispatchRecord(item: item, origin: origin)) }
      return (step, state.bump())
    }
    resume(waiters)
    if isOwn, let claim { claim.step = step }
    do {
      try await DispatchClaim.$current.withValue(nil) { try await next(item) }
    } catch {
      finish(step, after: isUpdater ? context.getAnyState() as? S : nil)
      throw error
    }
    finish(step, after: isUpdater ? context.getAnyState() as? S : nil)
  }

  private func finish(_ step: RecordedStep<S>, after: S?) {
    let waiters = state.withLock { state in
      step.after = after
      step.isReady = true
      state.running[step.id] = nil
      return state.bump()
    }
    resume(waiters)
  }

  // MARK: - The test's own items

  /// Starts a task that dispatches the test's item under a claim, and registers it until it is done.
  ///
  /// The task is unstructured so that a failsafe can stop waiting for it; it inherits the test's priority
  /// and task-locals (Swift Testing's current test among them), and the caller forwards its cancellation.
  func startOwnTask<Value: Sendable>(
    _ item: any Dispatchable, _ operation: @escaping @Sendable () async throws -> Value
  ) -> OwnTask<Value> {
    let claim = DispatchClaim(owner: id)
    let own = state.withLock { state in
      let own = OwnTask<Value>(id: state.makeID(), item: item, claim: claim)
      state.ownWork[own.id] = own
      return own
    }
    let task = Task { [self] in
      let result: Result<Value, any Error>
      do {
        result = .success(try await DispatchClaim.$current.withValue(claim) { try await operation() })
      } catch {
        result = .failure(error)
      }
      own.complete(result)
      let waiters = state.withLock { state in
        state.ownWork[own.id] = nil
        return state.bump()
      }
      resume(waiters)
    }
    own.setTask(task)
    return own
  }

  /// Waits for a task of the test to finish and returns its outcome; nil if the failsafe expired first, in
  /// which case the task is cancelled and an issue recorded.
  ///
  /// Cancelling the waiting task cancels the item, and the wait goes on until the item returns (or the
  /// failsafe expires), like awaiting the store's `dispatch` itself.
  nonisolated(nonsending) func outcome<Value: Sendable>(
    of own: OwnTask<Value>, waiting: @autoclosure () -> String, at location: SourceLocation
  ) async -> Result<Value, any Error>? {
    var failsafe: Failsafe?
    defer { failsafe?.cancel() }
    return await withTaskCancellationHandler {
      while true {
        let generation = self.generation
        if let result = own.result { return result }
        if failsafe == nil { failsafe = startFailsafe() }
        if let failsafe, failsafe.isExpired {
          own.cancel()
          recordIssue(
            "\(waiting()) did not return within \(describe(failsafe.bound)) (the test store's hang failsafe). "
              + "Still in flight: \(runningDescription()). If the item waits for a clock or another event that "
              + "the test drives, start it with `send` and drive it from the test.",
            at: location)
          return nil
        }
        await waitForChange(after: generation, cancellable: false)
      }
    } onCancel: {
      own.cancel()
    }
  }

  // MARK: - Received items

  /// The received items not asserted yet, and the generation they were read at.
  var pendingReceived: (steps: [RecordedStep<S>], generation: UInt64, ownWorkRunning: Bool, exhaustivity: Exhaustivity)
  {
    state.withLock { ($0.received, $0.generation, !$0.ownWork.isEmpty, $0.exhaustivity) }
  }

  /// Removes the received items with these identifiers: they have been asserted or skipped.
  func removeReceived(_ ids: Set<UInt64>) {
    state.withLock { state in state.received.removeAll { ids.contains($0.id) } }
  }

  /// Removes and returns every received item not asserted yet.
  func takeReceived() -> [RecordedStep<S>] {
    state.withLock { state in
      defer { state.received = [] }
      return state.received
    }
  }

  /// Whether `step` can be asserted, and the generation it was read at.
  func readiness(of step: RecordedStep<S>) -> (isReady: Bool, generation: UInt64) {
    state.withLock { (step.isReady, $0.generation) }
  }

  /// The states around `step`, read under the lock.
  func states(of step: RecordedStep<S>) -> (before: S?, after: S?) {
    state.withLock { _ in (step.before, step.after) }
  }

  // MARK: - Waiting

  var generation: UInt64 {
    state.withLock { $0.generation }
  }

  var hasOwnWorkRunning: Bool {
    state.withLock { !$0.ownWork.isEmpty }
  }

  /// Starts the failsafe of one wait of the test store.
  func startFailsafe() -> Failsafe {
    Failsafe(bound: failsafeBound, clock: failsafeClock) { [self] in
      resume(state.withLock { $0.bump() })
    }
  }

  /// Returns once the recorder's generation has moved past `generation`; a cancellable wait also returns
  /// when the calling task is cancelled.
  nonisolated(nonsending) func waitForChange(after generation: UInt64, cancellable: Bool = true) async {
    let id = state.withLock { $0.makeID() }
    let register = { [self] (continuation: UnsafeContinuation<Void, Never>) in
      let resumeNow = state.withLock { state -> Bool in
        if state.generation != generation || (cancellable && Task.isCancelled) { return true }
        state.waiters[id] = continuation
        return false
      }
      if resumeNow { continuation.resume() }
    }
    guard cancellable else {
      await withUnsafeContinuation(register)
      return
    }
    await withTaskCancellationHandler {
      await withUnsafeContinuation(register)
    } onCancel: {
      let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
      waiter?.resume()
    }
  }

  private func resume(_ waiters: [UnsafeContinuation<Void, Never>]) {
    for waiter in waiters {
      waiter.resume()
    }
  }

  /// What is still in flight, for messages: the items whose chain is running, and the test's items that have
  /// not reached the store yet.
  func runningDescription() -> String {
    let names = runningItems()
    return names.isEmpty
      ? "no item has reached the test store's interceptor yet (work queued in the mailbox, or a task the store "
        + "owns)"
      : names.joined(separator: ", ")
  }

  func runningItems() -> [String] {
    let (running, own) = state.withLock { state in
      (state.running.values.sorted { $0.id < $1.id }, Array(state.ownWork.values))
    }
    return running.map { "\(describe($0.item)) (running)" }
      + own.filter { !$0.hasStarted }.map { "\(describe($0.item)) (dispatched by the test, not started)" }
  }

  // MARK: - The end of the test

  /// Marks the test finished, cancels the test's own tasks, and reports what is left; nil if the test had
  /// already finished.
  func endOfTest() -> EndOfTestReport<S>? {
    let ended = state.withLock { state -> (Exhaustivity, [RecordedStep<S>], [any OwnWork])? in
      if state.isFinished { return nil }
      state.isFinished = true
      defer { state.received = [] }
      return (state.exhaustivity, state.received, Array(state.ownWork.values))
    }
    guard let (exhaustivity, unasserted, own) = ended else { return nil }
    let running = runningItems()
    for work in own {
      work.cancel()
    }
    return EndOfTestReport(exhaustivity: exhaustivity, unasserted: unasserted, running: running)
  }
}
