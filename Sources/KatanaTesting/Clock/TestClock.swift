import Foundation
import Katana
import Testing

/// A clock whose time moves only when a test moves it, so that debounce, throttle, timers and any other
/// sleep run deterministically, without real waiting.
///
/// Give it to the test store (or to a store), then advance it by hand:
///
/// ```swift
/// let clock = TestClock()
/// var configuration = TestStoreConfiguration()
/// configuration.clock = clock
/// let store = TestStore(initialState: SearchState(), dependencies: deps, configuration: configuration)
///
/// store.send(QueryChanged(query: "ka"))          // debounces the search by 300 ms
/// await clock.advance(by: .milliseconds(299))    // nothing happens
/// await clock.advance(by: .milliseconds(1))      // the search runs
/// await store.receive(SetResults.self) { $0.results = ["katana"] }
/// ```
///
/// It behaves like pointfreeco/swift-clocks' `TestClock`, with or without a test store, so a test written with
/// The Composable Architecture's `TestStore`, or with swift-clocks alone, ports line for line, but for the
/// error ``checkSuspension(fileID:filePath:line:column:)`` throws and `run()`'s default timeout (see
/// ``run(timeout:fileID:filePath:line:column:)``).
///
/// ## How time moves
/// - `now` starts at ``Instant/zero`` and changes only through ``advance(by:fileID:filePath:line:column:)``,
///   ``advance(to:fileID:filePath:line:column:)`` and ``run(timeout:fileID:filePath:line:column:)``. Time
///   never goes back: advancing to an earlier instant moves no time.
/// - ``sleep(until:tolerance:)`` returns at once only if the deadline is in the past. A deadline that is now
///   (`sleep(for: .zero)`) waits for the next advance, of any amount, zero included; a later one waits until
///   an advance reaches it. A cancelled sleeper throws `CancellationError`.
/// - With a ``TestStore`` that uses the clock, an advance settles the store's work first: it waits until
///   nothing of its work can run (done, asleep on the clock, or suspended on something the test drives), so
///   a side effect still on its way to its sleep
///   gets there before time moves. It then moves time from deadline to deadline up to its target, waking
///   the sleepers of each deadline (in the order they started sleeping) and settling again, so a woken task
///   that sleeps again within the target wakes in the same advance, measured from its own deadline. When it
///   returns, the work it woke has settled: `receive` what it dispatched.
/// - Without a test store (a clock the test gives to its own code), an advance does what swift-clocks' does:
///   it first yields to the tasks around it many times, so that work just started reaches its sleep, then
///   moves time from deadline to deadline, waking the sleepers of each and yielding again so that the work
///   they woke runs (a woken task that sleeps again within the target wakes in the same advance). It cannot
///   know when a task it cannot see is done, so, as with swift-clocks, that is a matter of yielding enough;
///   it does wait for every task it woke to resume from its sleep.
/// - ``run(timeout:fileID:filePath:line:column:)`` advances until nothing sleeps,
///   ``checkSuspension(fileID:filePath:line:column:)`` throws if something still sleeps, and
///   `timer(interval:tolerance:)` ticks on the clock (on any clock).
/// - Advances from several tasks at once add up exactly.
///
/// Everything is guarded by a lock: a `TestClock` may be shared by any number of tasks and advanced from
/// any of them.
public final class TestClock: Clock, @unchecked Sendable {
  // Sendable: every mutable property is only touched while holding `lock`.

  /// A point in time on a ``TestClock``: a duration since the clock's zero.
  public struct Instant: InstantProtocol, CustomStringConvertible {
    /// The time since the clock's zero.
    public var offset: Duration

    /// The instant `offset` after the clock's zero.
    public init(offset: Duration) {
      self.offset = offset
    }

    /// The clock's zero, where a new ``TestClock`` starts.
    public static var zero: Instant { Instant(offset: .zero) }

    /// The instant `duration` later (earlier, for a negative duration).
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    /// The duration from this instant to `other`.
    public func duration(to other: Instant) -> Duration {
      other.offset - offset
    }

    /// Whether `lhs` comes before `rhs`.
    public static func < (lhs: Instant, rhs: Instant) -> Bool {
      lhs.offset < rhs.offset
    }

    /// The offset, for example `1.5 seconds`.
    public var description: String {
      "\(offset)"
    }
  }

  /// A task sleeping on a ``TestClock``: until when, and for whose work.
  public struct Sleeper: Sendable, CustomStringConvertible {
    /// When the sleep ends.
    public let deadline: Instant

    /// The item whose work sleeps, when a ``TestStore`` runs it: the innermost item whose side effect (or
    /// interceptor) the sleeping task runs, for example `Search(query: "kat")`. Nil for a sleep that is not
    /// part of a test store's work.
    public let item: (any Dispatchable)?

    /// `Search(query: "kat") until 0.3 seconds`, or `a task until 0.3 seconds`.
    public var description: String {
      "\(item.map { KatanaTesting.describe($0) } ?? "a task") until \(deadline)"
    }
  }

  /// A sleeper as the clock keeps it, and as the test store compares it with the work it has in flight.
  struct SleeperRecord {
    let id: UInt64
    let deadline: Instant
    /// The sleeping task: the test store checks that it is the task that carries a piece of its work.
    let task: TaskIdentity?
    let item: (any Dispatchable)?
    /// The clock's time when this record was read.
    var now: Instant

    var workDescription: String {
      item.map { KatanaTesting.describe($0) } ?? "a task"
    }
  }

  /// What a test store that uses the clock offers it: its events, and whether its work is settled.
  struct Observer {
    weak var recorder: (any ClockObserving)?
  }

  private let lock = NSLock()
  private var state: TestClockState<UnsafeContinuation<Void, any Error>>
  private var observers: [Observer] = []
  /// The clock the failsafe of a wait with no test store (``run(timeout:fileID:filePath:line:column:)``,
  /// ``waitForSleepers(count:timeout:fileID:filePath:line:column:)``) is measured on. Tests of the clock replace
  /// it to expire the failsafe without waiting.
  let failsafeClock: any Clock<Duration>
  /// Set on the clock a test store makes when the test gives none: the first sleep records an issue.
  let unsetClockReport: UnsetClockReport?
  /// Bumped on every change of time or sleepers; ``waitForSleepers(count:timeout:fileID:filePath:line:column:)``
  /// and the test store wait for it to move.
  let signal = ChangeSignal()

  /// Creates a clock whose time is `now`.
  public convenience init(now: Instant = .zero) {
    self.init(now: now, failsafeClock: ContinuousClock())
  }

  /// Creates a clock whose waits without a test store measure their failsafe on `failsafeClock`.
  package init(now: Instant = .zero, failsafeClock: any Clock<Duration>) {
    state = TestClockState(now: now)
    unsetClockReport = nil
    self.failsafeClock = failsafeClock
  }

  /// A clock for a test store the test gave no clock: it records an issue through `report` the first time
  /// anything sleeps on it, then behaves as any test clock.
  init(reportingFirstSleep report: UnsetClockReport) {
    state = TestClockState(now: .zero)
    unsetClockReport = report
    failsafeClock = ContinuousClock()
  }

  /// The clock's current time; it changes only when the clock is advanced.
  public var now: Instant {
    withLock { state.now }
  }

  /// Zero: the clock has no granularity of its own.
  public var minimumResolution: Duration {
    .zero
  }

  /// Suspends until an advance of the clock reaches `deadline`; returns at once only if `deadline` is in
  /// the past.
  ///
  /// As with pointfreeco/swift-clocks' `TestClock`, a deadline that is now (`sleep(for: .zero)`) does not
  /// return at once: it waits for the next advance, of any amount, `advance(by: .zero)` included. So code
  /// that sleeps for zero stops at a known point until the test moves the clock.
  ///
  /// - Parameters:
  ///   - deadline: When to resume.
  ///   - tolerance: Ignored: the clock resumes sleepers exactly at their deadline.
  /// - Throws: `CancellationError` if the task is cancelled, before or while sleeping.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    let (start, now) = withLock { (state.beginSleep(until: deadline), state.now) }
    guard case .register(let id, let wakesAtStart) = start else { return }
    let item = WorkLabel.current?.item
    // Outside the lock: the report records an issue (it calls no user code).
    unsetClockReport?.sleepStarted(by: item, sleeping: now.duration(to: deadline))
    let record = SleeperRecord(id: id, deadline: deadline, task: TaskIdentity.current, item: item, now: .zero)
    // The sleeper's task runs again: an advance that woke it may go on (see `letWorkRun(afterWaking:)`).
    defer { withLock { state.didResume(id) } }
    try await withTaskCancellationHandler {
      try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
        let registration = withLock {
          state.register(
            record, wakesAtStart: wakesAtStart, isCancelled: Task.isCancelled, continuation: continuation)
        }
        switch registration {
        case .resume(let outcome): continuation.resume(with: outcome)
        case .registered: didChange()
        }
      }
    } onCancel: {
      if let entry = withLock({ state.cancel(id) }) {
        entry.continuation.resume(throwing: CancellationError())
        didChange()
      }
    }
  }

  private typealias SleepStart = TestClockState<UnsafeContinuation<Void, any Error>>.SleepStart

  /// Moves the clock forward by `duration`, waking the sleepers it reaches, and returns once the work it woke
  /// has run: settled, for the test stores that use the clock.
  ///
  /// ```swift
  /// store.send(QueryChanged(query: "ka"))   // debounces the search by 300 ms
  /// await clock.advance(by: .milliseconds(300))
  /// await store.receive(SetResults.self) { $0.results = ["katana"] }
  /// ```
  ///
  /// With a ``TestStore`` that uses the clock, the advance is deterministic: it first waits until nothing the
  /// store has in flight can run (work still on its way to a sleep gets there first), then moves time from deadline to deadline up to `now + duration`, waking the sleepers of each
  /// deadline and waiting for the work they do to settle again before the next one. A timer that ticks
  /// every second ticks three times in `advance(by: .seconds(3))`, as with pointfreeco/swift-clocks'
  /// `TestClock`. It waits for events, never for time. If the work does not settle within the test store's
  /// failsafe (``TestStoreConfiguration/failsafe``), for example because it waits for something else that
  /// the test drives, it records an issue at the caller's line that says what still runs, and moves time
  /// anyway.
  ///
  /// Without a test store, the advance does what pointfreeco/swift-clocks' `TestClock` does. It first yields
  /// to the tasks around it many times (as swift-clocks' "mega yield" does), so that a task just started
  /// reaches its sleep; then it moves time from deadline to deadline up to `now + duration`, waking the
  /// sleepers of each deadline and yielding again so that the work they woke runs before the next step: it
  /// yields until every task it woke has resumed from its sleep, then until one of them sleeps on the clock
  /// again or ten rounds of yields have passed. A task that sleeps again within the target wakes in the same
  /// advance:
  ///
  /// ```swift
  /// let clock = TestClock()
  /// let ticks = Task {
  ///   for await _ in clock.timer(interval: .seconds(1)).prefix(3) {}
  /// }
  /// await clock.advance(by: .seconds(3))   // three ticks; the task is done
  /// ```
  ///
  /// - Important: Without a test store the clock cannot see when work it did not wake is done: as with
  ///   swift-clocks, work that takes more than the yields to reach its sleep (it waits on a real clock, on
  ///   I/O, on a busy machine's thread) is not waited for. Synchronise on it first, for example with
  ///   ``waitForSleepers(count:timeout:fileID:filePath:line:column:)``.
  ///
  /// A zero duration (the default) moves no time but wakes the sleepers whose deadline is now. Advances from
  /// several tasks at once add up exactly: each is measured from where those already under way are going.
  /// A negative duration moves no time.
  ///
  /// - Important: Call it from the test, not from the work it waits for: an advance made by a side effect of
  ///   the store waits for that side effect to settle, which it cannot do while it advances.
  ///
  /// - Parameters:
  ///   - duration: How far to move time.
  ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  public nonisolated(nonsending) func advance(
    by duration: Duration = .zero,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    let target = withLock { state.book(by: duration) }
    await advance(
      to: target, caller: "advance(by: \(duration))",
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Moves the clock to `deadline`, waking the sleepers it reaches, and returns once the work it woke has run
  /// (settled, for the test stores that use the clock); see ``advance(by:fileID:filePath:line:column:)``.
  ///
  /// An earlier `deadline` moves no time (time never goes back), but still wakes the sleepers whose deadline
  /// is now.
  ///
  /// - Parameters:
  ///   - deadline: Where to move time.
  ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  public nonisolated(nonsending) func advance(
    to deadline: Instant,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    let target = withLock { state.book(to: deadline) }
    await advance(
      to: target, caller: "advance(to: \(deadline))",
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Advances to `target` step by step: settling the work between steps when test stores use the clock,
  /// letting it run otherwise.
  private nonisolated(nonsending) func advance(to target: Instant, caller: String, at location: SourceLocation)
    async
  {
    let recorders = attachedRecorders
    guard !recorders.isEmpty else {
      await letWorkRun()
      await wakeLettingWorkRun(upTo: target)
      return
    }
    var settling = Settling(caller: caller, location: location)
    defer { settling.failsafe?.cancel() }
    await settle(recorders, &settling)
    while wakeNext(upTo: target) {
      await settle(recorders, &settling)
    }
  }

  /// Takes the next step towards `target` (see ``TestClockState/nextStep(upTo:)``) and resumes the sleepers
  /// it woke, outside the lock; returns whether it woke any.
  func wakeNext(upTo target: Instant) -> Bool {
    switch withLock({ state.nextStep(upTo: target) }) {
    case .done(let moved):
      if moved { didChange() }
      return false
    case .wake(let entries):
      for entry in entries {
        entry.continuation.resume()
      }
      didChange()
      return true
    }
  }

  // MARK: - Without a test store

  /// How many times ``letWorkRun(afterWaking:)`` yields in a round: as many as swift-clocks'
  /// `Task.megaYield()` does by default.
  static let yieldsPerRound = 20

  /// The most rounds ``letWorkRun(afterWaking:)`` takes: a bound, so that a woken task whose executor never
  /// runs it (an actor that stays busy) cannot hold an advance forever.
  static let maximumRounds = 50

  /// How many rounds ``letWorkRun(afterWaking:)`` waits, once the tasks a step woke have resumed, for one of
  /// them to sleep on the clock again, before it concludes that they went on to other work.
  static let roundsForTheWokenWork = 10

  /// Lets the work around a clock that no test store uses run: the one way the clock waits for work it
  /// cannot see, used before an advance, after each step of it, and by ``run(timeout:fileID:filePath:line:column:)``
  /// and ``checkSuspension(fileID:filePath:line:column:)``.
  ///
  /// A round yields ``yieldsPerRound`` times: each time a detached task runs `Task.yield()` and the caller
  /// awaits it, as swift-clocks' `Task.megaYield()` does, so that the jobs queued before it (a task the test
  /// has just started among them) run first. Before an advance one round is enough, as in swift-clocks.
  /// After a step (`afterWaking`), the clock knows which tasks it woke: rounds go on until every one of them
  /// has resumed from its sleep, then until the clock changes (a woken task sleeps on it again) or
  /// ``roundsForTheWokenWork`` rounds pass, whichever comes first; never more than ``maximumRounds``. It
  /// counts yields, never time.
  ///
  /// The detached task runs at the caller's priority, where swift-clocks' runs at background priority:
  /// background work waits for every job of a higher priority, and in a test process that runs its tests in
  /// parallel that kept an advance waiting for seconds.
  nonisolated(nonsending) func letWorkRun(afterWaking: Bool = false) async {
    let priority = Task.currentPriority
    let versionAtStart = version
    var roundsSinceResumed = 0
    for _ in 0..<Self.maximumRounds {
      for _ in 0..<Self.yieldsPerRound {
        await Task.detached(priority: priority) { await Task.yield() }.value
      }
      let (version, awaitingResumption) = withLock { (state.changeCount, !state.unresumed.isEmpty) }
      if awaitingResumption { continue }
      guard afterWaking else { return }
      roundsSinceResumed += 1
      if version != versionAtStart || roundsSinceResumed >= Self.roundsForTheWokenWork { return }
    }
  }

  /// Wakes the sleepers due by `target` deadline by deadline, letting the work each step woke run before the
  /// next; time ends at `target`.
  nonisolated(nonsending) func wakeLettingWorkRun(upTo target: Instant) async {
    while wakeNext(upTo: target) {
      await letWorkRun(afterWaking: true)
    }
  }

  /// The tasks sleeping on this clock now, in deadline order (in the order they started sleeping, for
  /// equal deadlines).
  public var sleepers: [Sleeper] {
    snapshot().sleepers.map { Sleeper(deadline: $0.deadline, item: $0.item) }
  }

  /// The number of tasks sleeping on this clock now.
  public var sleeperCount: Int {
    withLock { state.entries.count }
  }

  /// The earliest deadline among the tasks sleeping now, or nil if nobody sleeps.
  public var nextDeadline: Instant? {
    withLock { state.entries.map(\.record.deadline).min() }
  }

  // MARK: - For the test store

  /// The clock's time and sleepers, read in one critical section, in deadline order.
  func snapshot() -> (now: Instant, sleepers: [SleeperRecord]) {
    versionedSnapshot().snapshot
  }

  /// ``snapshot()``, with the change count it was read at (compare it with ``version`` later).
  func versionedSnapshot() -> (version: UInt64, snapshot: (now: Instant, sleepers: [SleeperRecord])) {
    withLock {
      let now = state.now
      let records = state.entries.map { entry in
        var record = entry.record
        record.now = now
        return record
      }
      return (state.changeCount, (now, records.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }))
    }
  }

  /// The number of changes of time or sleepers so far.
  var version: UInt64 {
    withLock { state.changeCount }
  }

  /// Registers a test store that uses this clock: it hears of every change, and the clock's waits ask it
  /// whether its work has settled. Held weakly.
  func attach(_ recorder: any ClockObserving) {
    withLock {
      observers.removeAll { $0.recorder == nil }
      observers.append(Observer(recorder: recorder))
    }
  }

  /// The test stores that use this clock and are still alive.
  var attachedRecorders: [any ClockObserving] {
    withLock { observers.compactMap(\.recorder) }
  }

  /// Announces a change of time or sleepers, outside the lock: to the clock's own waiters, and to the test
  /// stores that use the clock.
  private func didChange() {
    signal.bump()
    for recorder in attachedRecorders {
      recorder.clockDidChange()
    }
  }

  private func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body()
  }
}

/// What a ``TestClock`` needs from a test store that uses it. The test store's recorder conforms.
protocol ClockObserving: AnyObject, Sendable {
  /// The clock's time or sleepers changed: re-check what you wait for.
  func clockDidChange()
  /// The recorder's events, clock changes included.
  var signal: ChangeSignal { get }
  /// The test store's failsafe, and the clock it is measured on.
  var failsafeBound: Duration { get }
  var failsafeClock: any Clock<Duration> { get }
  /// Whether the test store has nothing in flight, or everything it has in flight is asleep on the clock.
  func settlement() -> Settlement
  /// Whether the calling task is the test's own (the one that created the test store): only a wait of that
  /// task may conclude that nothing can happen until the clock moves, since no other code of the test can
  /// move it meanwhile.
  func isTestTask() -> Bool
  /// Returns once the recorder's signal moves past `generation`, or its store has nothing in flight.
  func waitForChangeOrIdle(after generation: UInt64) async
}

/// Where a test store's work stands, as its waits and its clock's waits see it.
enum Settlement {
  /// Nothing is in flight.
  case idle
  /// Everything in flight is asleep on the test clock: these sleepers.
  case parked([TestClock.SleeperRecord])
  /// Something in flight may still make progress without the test; the description says what is known.
  case busy(String)
}

/// The report of a clock the test did not set: a test store given no clock uses a ``TestClock`` that records
/// an issue the first time anything sleeps on it, rather than letting the code under test wait for real
/// time.
///
/// A sleep in a task that Swift Testing does not know as the test's (a task the store owns, for an item a side
/// effect sent) cannot record the issue itself: it is kept, and the test store records it at its next wait
/// (``flush()``).
final class UnsetClockReport: Sendable {
  let location: SourceLocation
  private let state = TestLock<(hasSlept: Bool, pending: String?)>((false, nil))

  init(location: SourceLocation) {
    self.location = location
  }

  /// Something sleeps on the clock: the first time, records the issue (or keeps it for ``flush()``).
  func sleepStarted(by item: (any Dispatchable)?, sleeping duration: Duration) {
    let isFirst = state.withLock { state in
      defer { state.hasSlept = true }
      return !state.hasSlept
    }
    guard isFirst else { return }
    let who = item.map { "`\(describe($0))`" } ?? "A task"
    let message =
      "\(who) slept \(duration) on the store's clock, but the test gave the test store no clock: the store uses "
      + "a test clock that only the test moves. Pass one (`configuration.clock = TestClock()`) and advance it "
      + "(`await clock.advance(by:)`), or set `configuration.clock = ContinuousClock()` to wait for real time."
    guard Test.current != nil else {
      state.withLock { $0.pending = message }
      return
    }
    recordIssue(message, at: location)
  }

  /// Records the issue of a sleep that could not record it, from a task of the test.
  func flush() {
    guard Test.current != nil,
      let message = state.withLock({ state -> String? in
        defer { state.pending = nil }
        return state.pending
      })
    else { return }
    recordIssue(message, at: location)
  }
}

// A recorder reads the time in a commit's critical section: `now` takes only the clock's own lock, and runs no user
// code.
extension TestClock: RecorderTimeSource {}
extension ImmediateClock: RecorderTimeSource {}
extension RealTimeClock: RecorderTimeSource where Base: RecorderTimeSource {}
