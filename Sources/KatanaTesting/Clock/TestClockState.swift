/// What a ``TestClock`` knows (its time, its sleepers, how far the advances in progress go) and the decisions
/// that change it. Pure: the clock calls it under its lock, then resumes the continuations it hands back
/// after unlocking.
struct TestClockState<Continuation> {
  typealias Instant = TestClock.Instant

  struct Entry {
    let record: TestClock.SleeperRecord
    let continuation: Continuation
  }

  /// How a sleep starts: at once (its deadline is in the past), or by registering as sleeper `id`.
  enum SleepStart: Equatable {
    case returnNow
    /// `wakes` is the number of wake-ups so far: an advance that wakes sleepers between this start and the
    /// registration reached a deadline that was "now" when the sleep began, and would have woken it.
    case register(id: UInt64, wakes: UInt64)
  }

  /// What registering a sleeper decided.
  enum Registration {
    /// It sleeps until an advance wakes it.
    case registered
    /// It does not sleep: its deadline has passed (success), or its task is cancelled (failure).
    case resume(Result<Void, any Error>)
  }

  /// One step of an advance.
  enum Step {
    /// Time moved to the deadline of these sleepers, the earliest due; resume them in this order.
    case wake([Entry])
    /// Nobody is due any more: time is at the target (`moved` tells whether it changed).
    case done(moved: Bool)
  }

  private(set) var now: Instant
  /// The furthest instant an advance in progress is heading to (at least `now`): an `advance(by:)` measures
  /// from here, so that advances from several tasks at once add up exactly.
  private(set) var horizon: Instant
  private(set) var entries: [Entry] = []
  /// Bumped on every change of time or sleepers.
  private(set) var changeCount: UInt64 = 0
  private var lastID: UInt64 = 0
  /// Bumped every time time moves or sleepers are woken.
  private var wakes: UInt64 = 0
  /// The sleepers woken whose task has not yet resumed from its sleep: an advance of a clock no test store
  /// uses lets them run before it goes on (see ``TestClock``'s `letWorkRun(afterWaking:)`).
  private(set) var unresumed: Set<UInt64> = []

  init(now: Instant) {
    self.now = now
    self.horizon = now
  }

  /// A sleep until `deadline` begins. As pointfreeco/swift-clocks' `TestClock` does, only a deadline in the
  /// past returns at once; a deadline that is now (a sleep of zero) waits for the next advance, of any
  /// amount, zero included.
  mutating func beginSleep(until deadline: Instant) -> SleepStart {
    if deadline < now { return .returnNow }
    lastID &+= 1
    return .register(id: lastID, wakes: wakes)
  }

  /// Registers the sleeper `record` began with ``beginSleep(until:)``, unless it need not sleep any more.
  mutating func register(
    _ record: TestClock.SleeperRecord, wakesAtStart: UInt64, isCancelled: Bool, continuation: Continuation
  ) -> Registration {
    if record.deadline < now || (record.deadline <= now && wakes != wakesAtStart) { return .resume(.success(())) }
    // Checked in the same critical section: a cancellation handler that runs later finds the sleeper.
    if isCancelled { return .resume(.failure(CancellationError())) }
    entries.append(Entry(record: record, continuation: continuation))
    changeCount &+= 1
    return .registered
  }

  /// Removes sleeper `id` (its task was cancelled); nil if an advance took it first.
  mutating func cancel(_ id: UInt64) -> Entry? {
    guard let index = entries.firstIndex(where: { $0.record.id == id }) else { return nil }
    changeCount &+= 1
    return entries.remove(at: index)
  }

  /// Books an advance by `duration` (none for a negative one) from the furthest target booked so far, and
  /// returns its target.
  mutating func book(by duration: Duration) -> Instant {
    horizon = max(horizon, now).advanced(by: max(duration, .zero))
    return horizon
  }

  /// Books an advance to `deadline` and returns its target: `deadline`, or `now` if it is earlier (time
  /// never goes back).
  mutating func book(to deadline: Instant) -> Instant {
    let target = max(deadline, now)
    horizon = max(horizon, target)
    return target
  }

  /// The next step of an advance to `target`, which lets the work run (or settle) between steps: time moves to
  /// the earliest deadline due by `target` and the sleepers of that deadline wake, so that a woken task that
  /// sleeps again within `target` wakes in a later step; once nobody is due, time moves to `target`.
  mutating func nextStep(upTo target: Instant) -> Step {
    let due = entries.filter { $0.record.deadline <= target }
    guard let deadline = due.map(\.record.deadline).min() else {
      guard target > now else { return .done(moved: false) }
      now = target
      changeCount &+= 1
      wakes &+= 1
      return .done(moved: true)
    }
    now = max(now, deadline)
    let woken = takeDue()
    return .wake(woken)
  }

  /// Sleeper `id` has resumed in its task (it returned from its sleep, or threw): an advance that woke it no
  /// longer waits for it to run.
  mutating func didResume(_ id: UInt64) {
    unresumed.remove(id)
  }

  /// Removes the sleepers whose deadline has come, and returns them in deadline order (in the order they
  /// started sleeping, for equal deadlines).
  private mutating func takeDue() -> [Entry] {
    let now = self.now
    let due = entries.filter { $0.record.deadline <= now }
    guard !due.isEmpty else { return [] }
    entries.removeAll { $0.record.deadline <= now }
    unresumed.formUnion(due.map(\.record.id))
    changeCount &+= 1
    wakes &+= 1
    return due.sorted { ($0.record.deadline, $0.record.id) < ($1.record.deadline, $1.record.id) }
  }
}
