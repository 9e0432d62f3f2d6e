import CKatana

/// What a ``StoreRecorder`` keeps, written by the store itself: each commit, appended by the one commit transition
/// (``CoreState/commit(_:touching:delivering:_:)``) in the commit's own critical section, and each side effect's
/// start and end, written by the store where it runs the side effect (``StoreCore/recordingSideEffect(_:_:)``).
///
/// A commit costs a fixed-size entry (sequence, time, updater, cause) appended to a chunk reserved for `interval`
/// commits, plus, every `interval` commits, a checkpoint (the state after it, shared with the store's copy-on-write
/// storage), which closes the chunk. The transition takes the log's lock inside the store's (readers take the log's
/// alone, so the order is always store, then log). Nothing is released under either lock: a full log hands its
/// oldest chunk back to the transition, which hands it to the caller to release after unlocking.
///
/// The log reads the time on the store's clock in the critical section only when that clock runs no user code
/// (``RecorderTimeSource``); for any other clock it reads `ContinuousClock`.
@usableFromInline
final class CommitLog<S: FeatureState>: @unchecked Sendable {
  // Sendable: mutable state lives in `storage`, behind its lock; the rest is immutable or atomic.

  @usableFromInline let capacity: Int
  @usableFromInline let interval: Int
  @usableFromInline let storage: LockedBuffer<CommitLogState<S>>
  /// Whether the next commit must hand over the state before it (the log has no base since a reset, or was
  /// attached to a store still starting): the transition then keeps the old state for it. Read without the lock.
  @usableFromInline let needsBase = AtomicFlag(true)
  /// The side effects' timeline, under a lock of its own: not generic, so that the store's side-effect path, which
  /// is not specialised for the app's state, records a side effect without looking up generic metadata.
  let effects: EffectLog

  init(capacity: Int, interval: Int) {
    self.capacity = capacity
    self.interval = interval
    storage = LockedBuffer.make(CommitLogState())
    effects = EffectLog(capacity: capacity)
  }

  /// Appends `item`'s commit (called by the commit transition, under the store's lock, once the state is `after`);
  /// adds what a full log dropped to `released`, to release after unlocking. (An out parameter rather than an optional
  /// result: an optional of the generic `Dropped` returned through the lock went through value witnesses on every
  /// commit.) `after` is the store's state itself, passed `inout` but only read (when the commit is a checkpoint, or
  /// starts the log): passed by value, it was copied (its storage retained and released) on every commit.
  @inlinable
  func record(_ item: any Dispatchable, before: S?, after: inout S, released: inout [CommitLogState<S>.Dropped]) {
    storage.withLock { log in
      log.append(
        item, cause: RecorderCause.current(on: log.store, causes: log.causes), before: before, after: { after },
        interval: interval, capacity: capacity, needsBase: needsBase, released: &released)
    }
  }

  /// Sets the store, its causes (``StoreCore/recorderCauses``; nil for a store's plain twin, which reads every
  /// commit's cause) and its clock the log follows (`plainTimer`: read on every commit, as the plain twin does,
  /// rather than through the processor's counter), and its state at attachment (nil while it is starting): the state
  /// before the first commit logged; and `liveState`, which runs its argument with the store's live state (nil while
  /// it is starting) under the store's lock, between two commits (``StoreRecorder/reset()``). Called under the
  /// store's lock.
  func attach(
    store: ObjectIdentifier, causes: RecorderCauses?, clock: any Clock<Duration>, plainTimer: Bool, state: S?,
    liveState: @escaping @Sendable (_ body: (S?) -> Void) -> Void
  ) {
    let timer = RecorderTimer(clock, plain: plainTimer)
    // From the same start for both (each keeps its own anchor, within the counter's window of the clock): commit and
    // side-effect times compare.
    effects.attach(timer: timer)
    storage.withLock { log in
      log.store = store
      log.causes = causes
      log.timer = timer
      log.liveState = liveState
      if log.base == nil, let state {
        log.base = state
        needsBase.set(false)
      }
    }
  }

  /// Takes `state`, the state a store that was starting when the log was attached starts from, as the state before
  /// the first commit, unless the log has one already. Called under the store's lock.
  func adoptStartState(_ state: S) {
    storage.withLock { log in
      guard log.base == nil, log.nextSequence == 1 else { return }
      log.base = state
      needsBase.set(false)
    }
  }
}

/// What a ``CommitLog`` holds, under its lock.
@usableFromInline
struct CommitLogState<S: FeatureState> {
  /// The state before the oldest commit kept; nil until the store hands it over.
  @usableFromInline var base: S?
  /// The commits kept, oldest first, but the latest (``open``), in chunks that each end at a checkpoint: a chunk is
  /// reserved once, for `interval` commits, and dropping the oldest commits up to the oldest checkpoint drops the
  /// first chunk whole (it is handed out as it is, never copied, to release after unlocking).
  @usableFromInline var chunks: [ContiguousArray<LoggedCommit>] = []
  /// The commits after the latest checkpoint: the chunk filling, kept apart from ``chunks`` so that a commit appends
  /// to it directly (through the array of chunks, each append checked and retained both arrays).
  @usableFromInline var open = ContiguousArray<LoggedCommit>()
  /// The number of commits kept.
  @usableFromInline var count = 0
  /// The kept states, by commit number, oldest first: the last commit of each closed chunk.
  @usableFromInline var checkpoints: [(sequence: Int, state: S)] = []
  /// The number the next commit takes.
  @usableFromInline var nextSequence = 1
  /// The number of the next commit that is a checkpoint (a multiple of the log's interval); 0, or a number already
  /// passed, until the next commit sets it.
  @usableFromInline var nextCheckpoint = 0
  /// Reads the store's clock, as the time since the log was attached.
  @usableFromInline var timer: RecorderTimer?
  /// The store the log is attached to: the side effects that cause its commits are that store's.
  @usableFromInline var store: ObjectIdentifier?
  /// That store's causes (``StoreCore/recorderCauses``): while no binding is alive, a commit has no cause. Nil before
  /// the log is attached, and for a store's plain twin: the task-local is read.
  @usableFromInline var causes: RecorderCauses?
  /// Runs its argument with the live state of the store the log is attached to, under the store's lock (see
  /// ``CommitLog/attach(store:causes:clock:state:liveState:)``).
  var liveState: (@Sendable (_ body: (S?) -> Void) -> Void)?

  @usableFromInline init() {}

  /// What a full log drops, or what a commit hook let go (an undo history's folded or dropped entries), released by
  /// the caller after unlocking.
  @usableFromInline
  struct Dropped {
    @usableFromInline var commits: ContiguousArray<LoggedCommit>
    @usableFromInline var base: S?
    /// What a commit hook let go (``CommitHook/record``).
    @usableFromInline var letGo: UndoLetGo?

    @inlinable init(commits: ContiguousArray<LoggedCommit>, base: S?) {
      self.commits = commits
      self.base = base
      letGo = nil
    }

    /// What a commit hook let go.
    @inlinable init(letGo: UndoLetGo) {
      commits = []
      base = nil
      self.letGo = letGo
    }
  }

  @inlinable
  mutating func nowNanoseconds() -> Int64 {
    timer?.nanoseconds() ?? 0
  }

  /// The commits kept, oldest first.
  var commits: [RecordedCommit] {
    commits(after: nil)
  }

  /// The commits kept whose number is above `sequence` (all of them for nil), oldest first: a copy of those entries
  /// only.
  func commits(after sequence: Int?) -> [RecordedCommit] {
    var result: [RecordedCommit] = []
    // Numbers are consecutive across the chunks: skip whole chunks, then the start of the first one read.
    var skip = 0
    if let sequence, let first = (chunks.first ?? open).first?.sequence, sequence >= first {
      skip = min(count, sequence - first + 1)
    }
    result.reserveCapacity(count - skip)
    for chunk in chunks + CollectionOfOne(open) {
      guard skip < chunk.count else {
        skip -= chunk.count
        continue
      }
      for commit in chunk[(chunk.startIndex + skip)...] { result.append(commit.recorded) }
      skip = 0
    }
    return result
  }

  /// Appends a commit, with the state before it if the log has no base yet, and the state after it; adds what it drops
  /// to `released`.
  @inlinable
  mutating func append(
    _ item: any Dispatchable, cause: Int?, before: S?, after: () -> S, interval: Int, capacity: Int,
    needsBase: AtomicFlag,
    released: inout [Dropped]
  ) {
    let sequence = nextSequence
    nextSequence = sequence &+ 1
    if base == nil {
      needsBase.set(false)
      guard let before else {
        // Reset while this commit was being made: the recording starts after it (numbers count every commit the
        // log saw).
        base = after()
        return
      }
      base = before
    }
    if open.capacity == 0 { open.reserveCapacity(min(interval, capacity + 1)) }
    open.append(
      LoggedCommit(
        updater: item, sequence: sequence, nanoseconds: nowNanoseconds(), cause: cause ?? LoggedCommit.noCause))
    count += 1
    // A checkpoint every `interval` commits, by number (a multiple of `interval`): the next one's number is kept, so
    // that a commit compares rather than divides.
    if nextCheckpoint < sequence {
      let (quotient, remainder) = sequence.quotientAndRemainder(dividingBy: interval)
      nextCheckpoint = remainder == 0 ? sequence : (quotient &+ 1) &* interval
    }
    if sequence == nextCheckpoint {
      nextCheckpoint &+= interval
      checkpoints.append((sequence, after()))
      chunks.append(open)
      open = ContiguousArray()
    }
    guard count > capacity, !checkpoints.isEmpty else { return }
    // Drop the oldest commits up to the oldest checkpoint (the end of the first chunk), whose state becomes the base.
    let checkpoint = checkpoints.removeFirst()
    let chunk = chunks.removeFirst()
    count -= chunk.count
    released.append(Dropped(commits: chunk, base: base))
    base = checkpoint.state
  }

  /// Empties the log, keeping its numbering; hands back what it held, to release after unlocking.
  mutating func reset(base newBase: S?) -> CommitLogState<S> {
    var fresh = CommitLogState()
    fresh.nextSequence = nextSequence
    fresh.timer = timer
    fresh.store = store
    fresh.causes = causes
    fresh.liveState = liveState
    fresh.base = newBase
    swap(&fresh, &self)
    return fresh
  }
}

/// The side effects a ``StoreRecorder`` keeps, written by the store where it runs them
/// (``StoreCore/recordingSideEffect(_:in:_:)``): a ``EffectTimeline`` under a lock of its own, with the recorder's
/// timer. Not generic, so that recording a side effect looks up no generic metadata on the store's side-effect path,
/// which is not specialised for the app's state.
@usableFromInline
final class EffectLog: Sendable {
  let capacity: Int
  private let storage: Locked<(timeline: EffectTimeline, timer: RecorderTimer?)>

  init(capacity: Int) {
    self.capacity = capacity
    storage = Locked((EffectTimeline(), nil))
  }

  /// Reads the time on `timer`, the commit log's (set when the recorder is attached).
  func attach(timer: RecorderTimer) {
    storage.withLock { $0.timer = timer }
  }

  /// Starts recording a side effect, under number `id` if given (the next of the log's own otherwise); returns its
  /// number.
  func start(_ item: any Dispatchable, cause: Int?, id: Int? = nil) -> Int {
    let started = storage.withLock { log -> (Int, RecordedEffect?) in
      log.timeline.start(item, cause: cause, id: id, at: Self.now(on: &log.timer), capacity: capacity)
    }
    // A dropped side effect (a user value) is released outside the lock.
    return withExtendedLifetime(started.1) { started.0 }
  }

  /// Records how the side effect `id` ended.
  func end(_ id: Int, outcome: RecordedEffect.Outcome) {
    storage.withLock { log in
      log.timeline.end(id, at: Self.now(on: &log.timer), outcome: outcome)
    }
  }

  /// The time on `timer` (zero before the recorder is attached), as commits are stamped.
  private static func now(on timer: inout RecorderTimer?) -> Duration {
    .nanoseconds(timer?.nanoseconds() ?? 0)
  }

  /// The side effects kept, in the order they started.
  var all: [RecordedEffect] {
    storage.withLock { $0.timeline.all }
  }

  /// The side effects that started or ended after `version`, and the version now.
  func changed(since version: Int) -> (effects: [RecordedEffect], version: Int) {
    storage.withLock { ($0.timeline.changed(since: version), $0.timeline.version) }
  }

  /// Empties the timeline, keeping its numbering (and, if `carryingRunning`, the side effects still running); returns
  /// what it held, in the order they started (released by the caller, after unlocking).
  func reset(carryingRunning: Bool) -> [RecordedEffect] {
    let old = storage.withLock { log -> EffectTimeline in
      var fresh = EffectTimeline()
      fresh.continueNumbering(from: log.timeline)
      if carryingRunning { fresh.carryRunning(from: log.timeline) }
      swap(&fresh, &log.timeline)
      return fresh
    }
    return old.all
  }
}

/// The side effects a log keeps, in the order they started, each with the version of its latest change (start or
/// end, ``StoreRecorder/effects(changedSince:)``). Not generic, and without a hash per start or end: a side effect is
/// found by its number, which is its position plus a fixed offset for those numbered in the order they started (the
/// first log's, ``CommitLog/startEffect(_:cause:id:)``); the others (carried over a drain, or numbered by another log
/// and started in another order) are found in a dictionary. (Three dictionaries, two hashes per start and four per
/// end, made a recorded side effect cost 2 microseconds.)
struct EffectTimeline {
  struct Kept {
    var effect: RecordedEffect
    /// The version at its latest change.
    var stamp: Int
  }

  /// The side effects, oldest first; those before `first` were dropped (removed from the array in batches).
  var kept = ContiguousArray<Kept>()
  var first = 0
  /// How many were removed from the front of `kept`: `kept[index]` is at position `removed + index`.
  var removed = 0
  /// Number minus position, for the side effects numbered in the order they started: set by the first one.
  var offset: Int?
  /// The positions of the others, by number.
  var irregular: [Int: Int] = [:]
  /// The number the next side effect takes, if none is given.
  var nextID = 1
  /// Counts the starts and ends.
  var version = 0

  /// The side effects kept, in the order they started.
  var all: [RecordedEffect] {
    kept[first...].map(\.effect)
  }

  /// The side effects that started or ended after `version`, in the order they started.
  func changed(since version: Int) -> [RecordedEffect] {
    kept[first...].lazy.filter { $0.stamp > version }.map(\.effect)
  }

  /// The index in `kept` of side effect `id`, if it is kept.
  func index(of id: Int) -> Int? {
    if let offset {
      let index = id &- offset &- removed
      if index >= first, index < kept.count, kept[index].effect.id == id { return index }
    }
    guard !irregular.isEmpty, let position = irregular[id] else { return nil }
    return position - removed
  }

  /// Appends `effect`, stamped `stamp`; `inOrder`: numbered in the order side effects start (it may then go without
  /// the dictionary: whatever is appended, one whose number is not its position plus the offset goes in it).
  mutating func append(_ effect: RecordedEffect, stamp: Int, inOrder: Bool) {
    let position = removed + kept.count
    if inOrder, offset == nil { offset = effect.id - position }
    if !inOrder || effect.id - position != offset { irregular[effect.id] = position }
    kept.append(Kept(effect: effect, stamp: stamp))
  }

  /// Starts side effect `given` (the next number if nil) at `time`; returns its number, and the oldest side effect if
  /// more than `capacity` are now kept (dropped, to release after unlocking).
  mutating func start(_ item: any Dispatchable, cause: Int?, id given: Int?, at time: Duration, capacity: Int) -> (
    Int, RecordedEffect?
  ) {
    let id = given ?? nextID
    nextID = max(nextID, id &+ 1)
    version += 1
    // Numbered in start order by this log, or by the first log (then in its start order, which is this one's but for
    // side effects starting at once on two threads: those few go in the dictionary).
    append(RecordedEffect(id: id, sideEffect: item, cause: cause, start: time), stamp: version, inOrder: true)
    guard kept.count - first > capacity else { return (id, nil) }
    let dropped = kept[first].effect
    if !irregular.isEmpty { irregular[dropped.id] = nil }
    first += 1
    if first > capacity {
      kept.removeFirst(first)
      removed += first
      first = 0
    }
    return (id, dropped)
  }

  /// Records that side effect `id` ended at `time`, how; nothing if it is not kept.
  mutating func end(_ id: Int, at time: Duration, outcome: RecordedEffect.Outcome) {
    guard let index = index(of: id) else { return }
    version += 1
    kept[index].effect.end = time
    kept[index].effect.outcome = outcome
    kept[index].stamp = version
  }

  /// Takes over the numbering and the version of `old`, which this timeline replaces.
  mutating func continueNumbering(from old: EffectTimeline) {
    nextID = old.nextID
    version = old.version
  }

  /// Keeps the side effects of `old` still running (with their numbers and stamps).
  mutating func carryRunning(from old: EffectTimeline) {
    for entry in old.kept[old.first...] where entry.effect.outcome == nil {
      append(entry.effect, stamp: entry.stamp, inOrder: false)
    }
  }
}

/// How a recorder reads the time on a store's clock: in the commit's critical section, so only for clocks whose
/// `now` runs no user code.
package protocol RecorderTimeSource: Clock<Duration> {}

extension ContinuousClock: RecorderTimeSource {}
extension SuspendingClock: RecorderTimeSource {}

/// How a log reads the time of a commit on its store's clock, as nanoseconds since the log was attached. Mutated by
/// each read (under the log's lock): on the continuous clock it may stamp from the processor's counter
/// (``CounterClock``).
@usableFromInline
struct RecorderTimer: Sendable {
  /// The continuous clock's reading (in C) when the timer was made: no `Instant` is built, and no `Duration`
  /// computed, on the commit path.
  @usableFromInline let start: Int64
  /// Another ``RecorderTimeSource`` (a test clock), read through the closure; nil for `ContinuousClock` (the usual
  /// store clock, and the one read for a clock that might run user code).
  @usableFromInline let read: (@Sendable () -> Duration)?
  /// Stamps from the processor's counter, anchored to the continuous clock; nil: every read reads the continuous
  /// clock (the plain twin, and platforms other than Linux on x86-64 or arm64).
  @usableFromInline var counter: CounterClock?

  /// A timer that reads `clock` (if it is a ``RecorderTimeSource``, `ContinuousClock` otherwise) from now; on the
  /// continuous clock, from the processor's counter where Katana reads it, unless `plain`.
  init(_ clock: any Clock<Duration>, plain: Bool = false) {
    func opened<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
      let start = clock.now
      return { start.duration(to: clock.now) }
    }
    start = ckatana_continuous_nanoseconds()
    if !(clock is ContinuousClock), let trusted = clock as? any RecorderTimeSource {
      read = opened(trusted)
    } else {
      read = nil
    }
    #if os(Linux) && (arch(x86_64) || arch(arm64))
      counter = read == nil && !plain ? CounterClock() : nil
    #else
      counter = nil
    #endif
  }

  /// The time since the timer was made, in nanoseconds (a clock's duration is truncated to whole nanoseconds, and
  /// clamped to what 64 bits hold).
  @inlinable
  mutating func nanoseconds() -> Int64 {
    if let read { return Self.nanoseconds(read()) }
    // Optional chaining mutates the counter in place, and reads it only when there is one.
    if let stamp = counter?.nanoseconds(ticks: ckatana_counter_ticks(), clock: { ckatana_continuous_nanoseconds() }) {
      return stamp &- start
    }
    return ckatana_continuous_nanoseconds() &- start
  }

  /// `duration` in whole nanoseconds, clamped to `Int64`'s range (it never traps).
  @usableFromInline
  static func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    let (total, overflow2) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
    guard !overflow, !overflow2 else { return seconds < 0 ? .min : .max }
    return total
  }
}

/// Stamps times on a clock from the processor's counter (`ckatana_counter_ticks()`), which costs less than half as
/// much to read as the continuous clock on Linux (9.5 against 23.5 ns on the benchmark machine): a pure state
/// machine, given each reading, and the clock to read when it must.
///
/// A stamp is the latest clock reading (the anchor) plus the counter's progress since, at the rate measured between
/// two clock readings at least ``baseline`` apart; the clock is read again (a new anchor) when no rate is known yet,
/// when the counter went back, or when the counter moved more than ``window`` nanoseconds' worth since the anchor.
/// So each stamp lies within ``window`` (20 microseconds) of its anchor, and stamps never decrease. With a counter
/// that keeps a constant rate on every core (what Linux's own `tsc` clock source needs, and what arm64's virtual
/// counter is), a stamp is off the clock by what the rate's error makes of at most 20 microseconds: nanoseconds.
/// With one that does not (a machine resuming from suspend, whose counter stopped while the clock went on), the
/// stamps taken in the first 20 microseconds of counting after it can carry a time before it, until the clock is
/// read again.
///
/// At a steady rate of commits, the clock is read once every 20 microseconds; at one commit every 20 microseconds
/// or less often, on every commit, as without the counter. Nothing traps, whatever the readings.
@usableFromInline
struct CounterClock: Sendable {
  /// How far, in the clock's nanoseconds, a stamp may be from its anchor.
  @usableFromInline static let window: Int64 = 20_000
  /// The least time between the two clock readings the counter's rate is measured between.
  static let baseline: Int64 = 1_000_000
  /// How long the rate is measured from the same first reading before the next reading becomes the first (so that a
  /// changed rate is followed).
  static let rebase: Int64 = 1_000_000_000

  /// The latest clock reading, and the counter's then.
  @usableFromInline var anchorTicks: Int64 = 0
  @usableFromInline var anchorNanoseconds: Int64 = 0
  /// The counter's progress that ``window`` spans at the measured rate; -1 while no rate is known (every stamp reads
  /// the clock).
  @usableFromInline var windowTicks: Int64 = -1
  /// The measured rate.
  @usableFromInline var nanosecondsPerTick = 0.0
  /// The reading the rate is measured from.
  var baseTicks: Int64 = 0
  var baseNanoseconds: Int64?
  /// The latest stamp: stamps never decrease.
  @usableFromInline var latest = Int64.min

  @usableFromInline init() {}

  /// The time when the counter read `ticks`, on the clock `clock` reads.
  @inlinable
  mutating func nanoseconds(ticks: Int64, clock: () -> Int64) -> Int64 {
    let elapsed = ticks &- anchorTicks
    var now: Int64
    if elapsed >= 0, elapsed <= windowTicks {
      // At most `window` nanoseconds' worth: the conversion stays in range, and cannot trap (the rate is checked when
      // measured).
      now = anchorNanoseconds &+ Int64(Double(elapsed) * nanosecondsPerTick)
    } else {
      now = clock()
      anchor(ticks: ticks, nanoseconds: now)
    }
    if now < latest { now = latest }
    latest = now
    return now
  }

  /// Takes the clock's reading `nanoseconds`, when the counter read `ticks`, as the anchor, and measures the rate
  /// against the first reading.
  @usableFromInline
  mutating func anchor(ticks: Int64, nanoseconds: Int64) {
    anchorTicks = ticks
    anchorNanoseconds = nanoseconds
    guard let baseNanoseconds else { return rebase(ticks: ticks, nanoseconds: nanoseconds) }
    let (spent, overflow) = nanoseconds.subtractingReportingOverflow(baseNanoseconds)
    let (counted, overflow2) = ticks.subtractingReportingOverflow(baseTicks)
    guard !overflow, !overflow2, spent >= 0, counted >= 0 else {
      // The clock or the counter went back: start again.
      windowTicks = -1
      return rebase(ticks: ticks, nanoseconds: nanoseconds)
    }
    guard spent >= Self.baseline else { return }
    let rate = counted > 0 ? Double(spent) / Double(counted) : .infinity
    // A counter from 1 MHz to 1 THz (any real one): a window of at most 20,000,000 ticks.
    if rate >= 0.001, rate <= 1000 {
      nanosecondsPerTick = rate
      windowTicks = Int64(Double(Self.window) / rate)
    } else {
      windowTicks = -1
    }
    if spent >= Self.rebase || windowTicks < 0 { rebase(ticks: ticks, nanoseconds: nanoseconds) }
  }

  private mutating func rebase(ticks: Int64, nanoseconds: Int64) {
    baseTicks = ticks
    baseNanoseconds = nanoseconds
  }
}

/// A commit as a log keeps it: a ``RecordedCommit`` in 64 bytes (one cache line), its time in nanoseconds and its
/// cause without an optional's extra byte. Made into a ``RecordedCommit`` when read.
@usableFromInline
struct LoggedCommit {
  /// The ``cause`` of a commit no side effect caused.
  @usableFromInline static let noCause = Int.min

  @usableFromInline let updater: any Dispatchable
  @usableFromInline let sequence: Int
  @usableFromInline let nanoseconds: Int64
  @usableFromInline let cause: Int

  @inlinable
  init(updater: any Dispatchable, sequence: Int, nanoseconds: Int64, cause: Int) {
    self.updater = updater
    self.sequence = sequence
    self.nanoseconds = nanoseconds
    self.cause = cause
  }

  /// The commit, as readers see it.
  var recorded: RecordedCommit {
    RecordedCommit(
      sequence: sequence, time: .nanoseconds(nanoseconds), updater: updater, cause: cause == Self.noCause ? nil : cause)
  }
}

extension CommitLogState where S: State {
  /// The checkpoints kept, as a ``Recording`` holds them.
  var recordedCheckpoints: [Recording<S>.Checkpoint] {
    checkpoints.map { Recording.Checkpoint(sequence: $0.sequence, state: $0.state) }
  }
}
