import Dispatch
import Katana

/// The executor a ``TestStore`` runs its store's work on: one at a time, in the order it became runnable.
///
/// The test store starts every task of the store's work with this executor as its preference: the tasks of
/// the test's items, the tasks the store owns (sent items, start-up), and the effect tools' tasks. Their
/// children (`async let`, task groups) inherit the preference, and so does the code of default actors they
/// call. So "the store's work has settled" is a fact the executor knows, not an inference: no job of it is
/// queued or running. Work suspended on a stream, on `Task.never()`, on its children, on a sleep of the test
/// clock or on a dependency that has not answered is not runnable; when something resumes it (the test
/// feeding the stream, a real client's callback), its job is queued here, in order.
///
/// Jobs run on a serial Dispatch queue, first in, first out, whatever their priority, so tasks start in the
/// order they were created: side effects sent one after the other start, and run to their first suspension,
/// in the order they were sent. The queue targets the global queue: a queue of its own that overcommits
/// would get a thread whenever the others are busy, and a parallel run of test stores then made thousands.
///
/// A task that calls into the main actor, or into another actor with an executor of its own, leaves the
/// executor while that actor runs it: the executor cannot tell that from a suspension, so such work counts as
/// suspended, like a dependency that has not answered, until it comes back.
///
/// Available where task executors are (macOS 15, iOS 18 and their peers; always on Linux). Elsewhere the test
/// store falls back to inferring settlement from the store's activity (see ``TestStoreRecorder/settlement()``).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class SerialTestExecutor: TaskExecutor, Sendable {
  private let queue = DispatchQueue(label: "KatanaTesting.SerialTestExecutor", target: .global())
  /// Jobs queued or running, and tasks on their way here (see ``expectArrival()``).
  private let counts = TestLock(ExecutorCounts())
  /// Bumped each time the executor becomes quiet: the test store's waits re-check.
  let signal: ChangeSignal

  init(signal: ChangeSignal) {
    self.signal = signal
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    counts.withLock { $0.jobQueued() }
    queue.async { [self] in
      job.runSynchronously(on: asUnownedTaskExecutor())
      if counts.withLock({ $0.jobEnded() }) { signal.bump() }
    }
  }

  /// Whether nothing of the store's work can run: no job is queued or running, and no task is on its way.
  var isQuiet: Bool {
    counts.withLock { $0.isQuiet }
  }

  /// Counts a task that will move here from elsewhere (one started by a task starter the test store does not
  /// control) until it calls ``arrived()``: meanwhile it may run, so the executor is not quiet.
  func expectArrival() {
    counts.withLock { $0.arrivalExpected() }
  }

  /// The task counted by ``expectArrival()`` now runs here (or will not come).
  func arrived() {
    if counts.withLock({ $0.arrived() }) { signal.bump() }
  }

  /// Starts a task of the store's work here, with the caller's priority and task-local values, as `Task {}`
  /// does.
  func startTask<T: Sendable>(_ operation: sending @escaping () async -> T) -> Task<T, Never> {
    Task(executorPreference: self, operation: operation)
  }

  /// Starts a task of the store's work here, with the caller's priority and no task-local value, as
  /// `Task.detached` does.
  func startDetachedTask(_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
    Task.detached(executorPreference: self, priority: Task.currentPriority, operation: operation)
  }
}

/// The executor's bookkeeping: how many jobs are queued or running, and how many tasks are on their way.
package struct ExecutorCounts {
  package private(set) var jobs = 0
  package private(set) var arriving = 0

  package init() {}

  /// Nothing can run: no job is queued or running, and no task is on its way.
  package var isQuiet: Bool { jobs == 0 && arriving == 0 }

  package mutating func jobQueued() {
    jobs += 1
  }

  package mutating func arrivalExpected() {
    arriving += 1
  }

  /// A job returned (its task suspended, ended or left for another executor); returns whether the executor
  /// became quiet.
  package mutating func jobEnded() -> Bool {
    jobs -= 1
    return isQuiet
  }

  /// A task counted as arriving arrived (its job is counted now); returns whether the executor became quiet.
  package mutating func arrived() -> Bool {
    arriving -= 1
    return isQuiet
  }
}

/// Starts the effect tools' tasks (a run, a throttle window) on the test store's executor.
///
/// Such a task inherits the task-local values of the work that starts it, as `Task {}` would, except the
/// ``UnstructuredWatch``: it runs on the executor, which sees whether it can run, so it is not counted as an
/// unstructured task of that work.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
struct SerialEffectTaskStarter: EffectTaskStarter {
  let executor: SerialTestExecutor

  func start<T: Sendable>(_ operation: sending @escaping () async -> T) -> Task<T, Never> {
    // Sent once: the closure below is called once, right here, and hands it to the new task.
    nonisolated(unsafe) let operation = operation
    return UnstructuredWatch.$current.withValue(nil) { executor.startTask(operation) }
  }
}

/// A token the test store binds around each item's chain (for a side effect, its body). Task-local values
/// are copied into the tasks that `Task {}` creates and released when such a task ends, so while the token
/// outlives the chain, an unstructured task that the item's work started is still running.
///
/// Such a task runs on the global executor, where the test store cannot see whether it can run: until it
/// ends, the store's work counts as busy (the item it dispatches is awaited by `receive`, and `finish` waits
/// for it). The token's release is an event: it bumps the signal the test store's waits wait on.
final class UnstructuredWatch: Sendable {
  @TaskLocal static var current: UnstructuredWatch?

  /// The item whose work the watched tasks belong to, for messages.
  let item: any Dispatchable
  private let signal: ChangeSignal
  /// The watched tasks known so far: those that dispatched to the store (their item's chain noted them).
  private let knownTasks = TestLock<Set<TaskIdentity>>([])

  /// Notes that `task`, one of the watched tasks, dispatched to the store.
  func note(_ task: TaskIdentity) {
    knownTasks.withLock { _ = $0.insert(task) }
  }

  /// The watched tasks known so far.
  var tasks: Set<TaskIdentity> {
    knownTasks.withLock { $0 }
  }

  init(item: any Dispatchable, signal: ChangeSignal) {
    self.item = item
    self.signal = signal
  }

  deinit {
    signal.bump()
  }
}

/// A weak reference to an item's ``UnstructuredWatch``, kept once the item's chain has returned.
struct WatchedWork: Sendable {
  weak var watch: UnstructuredWatch?
  let item: any Dispatchable
}

/// What the test store uses of its ``SerialTestExecutor``, without naming the type (which needs macOS 15 or
/// iOS 18 on Apple platforms).
struct TestExecution: Sendable {
  typealias Operation = @Sendable () async -> Void
  typealias Starter = @Sendable (_ operation: @escaping Operation) -> Task<Void, Never>

  /// Whether nothing of the store's work can run (``SerialTestExecutor/isQuiet``).
  let isQuiet: @Sendable () -> Bool
  /// Whether the calling task runs on the executor.
  let isCurrent: @Sendable () -> Bool
  /// Starts a task on the executor as `Task {}` would.
  let startTask: Starter
  /// Starts a task on the executor as `Task.detached` would.
  let startDetachedTask: Starter
  /// Starts a task with `starter`, which runs it elsewhere: the task moves to the executor first thing, and
  /// the executor counts it as runnable until it has.
  let startArriving: @Sendable (_ starter: Starter, _ operation: @escaping Operation) -> Task<Void, Never>
  /// Starts the effect tools' tasks on the executor.
  let effectTaskStarter: any EffectTaskStarter

  /// A new executor's, or nil where task executors are not available.
  static func make(signal: ChangeSignal) -> TestExecution? {
    guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else { return nil }
    let executor = SerialTestExecutor(signal: signal)
    let unowned = executor.asUnownedTaskExecutor()
    return TestExecution(
      isQuiet: { executor.isQuiet },
      isCurrent: { withUnsafeCurrentTask { $0?.unownedTaskExecutor == unowned } },
      startTask: { operation in executor.startTask(operation) },
      startDetachedTask: { operation in executor.startDetachedTask(operation) },
      startArriving: { starter, operation in
        executor.expectArrival()
        return starter {
          await withTaskExecutorPreference(executor) {
            executor.arrived()
            await operation()
          }
        }
      },
      effectTaskStarter: SerialEffectTaskStarter(executor: executor))
  }
}

/// A real clock (`ContinuousClock`, `SuspendingClock`) given to a test store, whose sleeps the store's work
/// counts as running: a task asleep on it is suspended, but it goes on by itself, without the test. (A test
/// clock's sleeps, and those of a clock of the test's own, wait for the test.)
struct RealTimeClock<Base: Clock<Duration>>: Clock {
  let base: Base
  /// The number of sleeps in progress on the clock, shared with the test store's recorder.
  let sleeps: RealTimeSleeps

  var now: Base.Instant { base.now }
  var minimumResolution: Duration { base.minimumResolution }

  func sleep(until deadline: Base.Instant, tolerance: Duration?) async throws {
    sleeps.began()
    defer { sleeps.ended() }
    try await base.sleep(until: deadline, tolerance: tolerance)
  }
}

/// How many sleeps on a real clock the store's work has in progress (see ``RealTimeClock``).
final class RealTimeSleeps: Sendable {
  private let count = TestLock(0)

  var inProgress: Int { count.withLock { $0 } }

  /// `clock` with its sleeps counted here, if it is a real clock; otherwise `clock` itself.
  func counting(_ clock: any Clock<Duration>) -> any Clock<Duration> {
    func wrap<C: Clock<Duration>>(_ clock: C) -> any Clock<Duration> { RealTimeClock(base: clock, sleeps: self) }
    return clock is ContinuousClock || clock is SuspendingClock ? wrap(clock) : clock
  }

  func began() {
    count.withLock { $0 += 1 }
  }

  func ended() {
    count.withLock { $0 -= 1 }
  }
}
