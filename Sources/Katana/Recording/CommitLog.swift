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

  init(capacity: Int, interval: Int) {
    self.capacity = capacity
    self.interval = interval
    storage = LockedBuffer.make(CommitLogState())
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
        item, cause: RecorderCause.current(on: log.store), before: before, after: { after }, interval: interval,
        capacity: capacity, needsBase: needsBase, released: &released)
    }
  }

  /// Sets the store and its clock the log follows, and its state at attachment (nil while it is starting): the
  /// state before the first commit logged; and `liveState`, which runs its argument with the store's live state (nil
  /// while it is starting) under the store's lock, between two commits (``StoreRecorder/reset()``). Called under the
  /// store's lock.
  func attach(
    store: ObjectIdentifier, clock: any Clock<Duration>, state: S?,
    liveState: @escaping @Sendable (_ body: (S?) -> Void) -> Void
  ) {
    storage.withLock { log in
      log.store = store
      log.timer = RecorderTimer(clock)
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

  /// Starts recording a side effect, under number `id` if given (the next of the log's own otherwise); returns its
  /// number.
  @usableFromInline
  func startEffect(_ item: any Dispatchable, cause: Int?, id: Int? = nil) -> Int {
    let dropped = storage.withLock { log -> (Int, RecordedEffect?) in
      log.startEffect(item, cause: cause, id: id, capacity: capacity)
    }
    // A dropped side effect (a user value) is released outside the lock.
    return withExtendedLifetime(dropped.1) { dropped.0 }
  }

  /// Records how the side effect `id` ended.
  @usableFromInline
  func endEffect(_ id: Int, outcome: RecordedEffect.Outcome) {
    storage.withLock { log in
      guard log.effects[id] != nil else { return }
      let end = log.now()
      log.effects[id]?.end = end
      log.effects[id]?.outcome = outcome
      log.effectVersion += 1
      log.effectStamps[id] = log.effectVersion
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
  /// Reads the store's clock, as the time since the log was attached.
  @usableFromInline var timer: RecorderTimer?
  /// The store the log is attached to: the side effects that cause its commits are that store's.
  @usableFromInline var store: ObjectIdentifier?
  /// Runs its argument with the live state of the store the log is attached to, under the store's lock (see
  /// ``CommitLog/attach(store:clock:state:liveState:)``).
  var liveState: (@Sendable (_ body: (S?) -> Void) -> Void)?
  /// Side effects by id, and their ids in the order they started (from `effectStart`).
  var effects: [Int: RecordedEffect] = [:]
  var effectOrder: [Int] = []
  var effectStart = 0
  var nextEffectID = 1
  /// Counts the side effects' starts and ends; `effectStamps` holds, for each side effect kept, the count at its
  /// latest (``StoreRecorder/effects(changedSince:)``).
  var effectVersion = 0
  var effectStamps: [Int: Int] = [:]

  @usableFromInline init() {}

  /// What a full log drops, released by the caller after unlocking.
  @usableFromInline
  struct Dropped {
    @usableFromInline var commits: ContiguousArray<LoggedCommit>
    @usableFromInline var base: S?

    @inlinable init(commits: ContiguousArray<LoggedCommit>, base: S?) {
      self.commits = commits
      self.base = base
    }
  }

  @inlinable
  func now() -> Duration {
    .nanoseconds(nowNanoseconds())
  }

  @inlinable
  func nowNanoseconds() -> Int64 {
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
    if sequence % interval == 0 {
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
    fresh.nextEffectID = nextEffectID
    fresh.effectVersion = effectVersion
    fresh.timer = timer
    fresh.store = store
    fresh.liveState = liveState
    fresh.base = newBase
    swap(&fresh, &self)
    return fresh
  }

  /// Carries the side effects of `old` still running into this log.
  mutating func carryRunningEffects(from old: CommitLogState<S>) {
    for id in old.effectOrder[old.effectStart...] where old.effects[id]?.outcome == nil {
      effects[id] = old.effects[id]
      effectStamps[id] = old.effectStamps[id]
      effectOrder.append(id)
    }
  }

  /// The side effects kept, in the order they started.
  var keptEffects: [RecordedEffect] {
    effectOrder[effectStart...].compactMap { effects[$0] }
  }

  mutating func startEffect(_ item: any Dispatchable, cause: Int?, id given: Int?, capacity: Int) -> (
    Int, RecordedEffect?
  ) {
    let id = given ?? nextEffectID
    nextEffectID = max(nextEffectID, id &+ 1)
    effects[id] = RecordedEffect(id: id, sideEffect: item, cause: cause, start: now())
    effectVersion += 1
    effectStamps[id] = effectVersion
    effectOrder.append(id)
    var dropped: RecordedEffect?
    if effectOrder.count - effectStart > capacity {
      effectStamps[effectOrder[effectStart]] = nil
      dropped = effects.removeValue(forKey: effectOrder[effectStart])
      effectStart += 1
      if effectStart > capacity {
        effectOrder.removeFirst(effectStart)
        effectStart = 0
      }
    }
    return (id, dropped)
  }
}

/// How a recorder reads the time on a store's clock: in the commit's critical section, so only for clocks whose
/// `now` runs no user code.
package protocol RecorderTimeSource: Clock<Duration> {}

extension ContinuousClock: RecorderTimeSource {}
extension SuspendingClock: RecorderTimeSource {}

/// How a log reads the time of a commit on its store's clock, as nanoseconds since the log was attached.
@usableFromInline
enum RecorderTimer: Sendable {
  /// `ContinuousClock` (the usual store clock, and the one read for a clock that might run user code), read in C
  /// from this start: no `Instant` is built, and no `Duration` computed, on the commit path.
  case continuous(start: Int64)
  /// Another ``RecorderTimeSource`` (a test clock), read through the closure.
  case clock(@Sendable () -> Duration)

  /// A timer that reads `clock` (if it is a ``RecorderTimeSource``, `ContinuousClock` otherwise) from now.
  init(_ clock: any Clock<Duration>) {
    func opened<C: Clock<Duration>>(_ clock: C) -> Self {
      let start = clock.now
      return .clock { start.duration(to: clock.now) }
    }
    if clock is ContinuousClock {
      self = .continuous(start: ckatana_continuous_nanoseconds())
    } else if let trusted = clock as? any RecorderTimeSource {
      self = opened(trusted)
    } else {
      self = .continuous(start: ckatana_continuous_nanoseconds())
    }
  }

  /// The time since the timer was made, in nanoseconds (a clock's duration is truncated to whole nanoseconds, and
  /// clamped to what 64 bits hold).
  @inlinable
  func nanoseconds() -> Int64 {
    switch self {
    case .continuous(let start): ckatana_continuous_nanoseconds() &- start
    case .clock(let read): Self.nanoseconds(read())
    }
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
