/// Records every commit a store makes, in commit order, with the updater that made it, and the timeline of its
/// side effects: what ``Recording`` replays, checks and saves.
///
/// ```swift
/// let recorder = StoreRecorder<AppState>(capacity: 10_000)
/// let store = Store<AppState, AppDependencies>(
///   initialState: AppState(), interceptors: [logger, recorder.interceptor])
/// // ... the app runs ...
/// let recording = recorder.recording()
/// let replayed = try recording.replayedState()   // equals store.state
/// ```
///
/// The recorder is an interceptor: put ``interceptor`` **last** in the store's array, so that it sees each item
/// as the store applies it (after the other interceptors changed or dropped it). A state updater's interceptors
/// run while it holds the store's turn (see ``StoreInterceptor``), so the recorder sees commits one at a time, in
/// the order the store made them, with the state before and after each. It records:
/// - each commit: its ``RecordedCommit/sequence`` number, the time on the store's clock, the updater itself (a
///   ``ScopedDispatchable`` for one dispatched through a scope), and the side effect that caused it: the one whose
///   task dispatched it (or a task that effect started as a child). An updater handed over with `send` runs in
///   the store's own task, and is recorded without a cause.
/// - each side effect's start, end and outcome (``RecordedEffect``).
///
/// A store without a recorder pays nothing for this feature. With one, every dispatch takes the interceptor path
/// (see <doc:Performance> for the measured cost per commit); the recorder only appends values under a lock of its
/// own, never the store's, and encodes nothing: a ``Recording`` is encoded when, and where, the app asks.
///
/// Memory is bounded: the recorder keeps at most ``capacity`` commits (and as many side effects), and the state at
/// every ``checkpointInterval``-th commit. When full, it drops the oldest commits up to the oldest checkpoint,
/// which becomes the recording's ``Recording/initialState``: it then holds between `capacity - checkpointInterval`
/// and `capacity` commits. The states it keeps share their storage with the store's (copy-on-write): keeping one
/// costs a copy of what the store mutates next, once.
public final class StoreRecorder<S: State>: Sendable {
  /// The most commits (and side effects) the recorder keeps.
  public let capacity: Int
  /// The recorder keeps the state after every commit whose sequence number is a multiple of this: the points
  /// where ``Recording/replayedState()`` checks the replayed state, and where the oldest commits are dropped.
  public let checkpointInterval: Int

  private let buffer: Locked<RecorderBuffer<S>>
  /// The store recorded.
  private let attached = AttachedStore()

  /// Creates a recorder.
  ///
  /// - Parameters:
  ///   - capacity: The most commits (and side effects) kept; at least 1. Values below 1 are taken as 1.
  ///   - checkpointInterval: How often the state is kept, in commits: at least 1 and at most `capacity`
  ///     (values outside are clamped). The default keeps one every 1,000 commits, or `capacity` if smaller.
  public init(capacity: Int = 10_000, checkpointInterval: Int? = nil) {
    let capacity = max(1, capacity)
    self.capacity = capacity
    self.checkpointInterval = min(capacity, max(1, checkpointInterval ?? min(1_000, capacity)))
    buffer = Locked(RecorderBuffer())
  }

  /// The interceptor that records: put it last in the store's interceptors, and give each store a recorder of
  /// its own.
  ///
  /// A recorder given to a store of another state type, or to a second store, records nothing there (and says so
  /// in a runtime warning).
  public var interceptor: StoreInterceptor {
    { [self] context in
      let now = Self.timer(context.clock)
      // A store the recorder does not record (a second one, or one of another state type) passes everything on.
      guard attach(to: context, now: now) else { return { next in next } }
      return { next in
        { item in
          // State updaters are recorded by the store as it commits them (``CommitHook``), one at a time
          // while they hold its turn; this handler only times side effects. What the store refuses (while it is
          // away from live, say) the store refuses itself, on every path.
          guard !(item is any AnyStateUpdater) else { return try await next(item) }
          try await self.recordSideEffect(item, now: now, next: next)
        }
      }
    }
  }

  /// Attaches the recorder to the store of `context`; returns whether it records that store.
  private func attach(to context: any AnySideEffectContext, now: @escaping @Sendable () -> Duration) -> Bool {
    let hook = CommitHook<S>(needsBefore: false) { [self] item, before, after in
      record(item, before: before, after: after, time: now())
    }
    // Every store's interceptors get a store's context.
    guard let target = context as? any RecorderAttachable else { return false }
    guard let initial = context.getAnyState() as? S else {
      target.runtimeWarning(
        "A StoreRecorder<\(String(reflecting: S.self))> was given to a store of another state type; it records nothing."
      )
      return false
    }
    let isFirstStore = buffer.withLock { buffer -> Bool in
      guard buffer.hook == nil else { return false }
      buffer.hook = hook
      buffer.base = initial
      return true
    }
    guard isFirstStore else {
      target.runtimeWarning("A StoreRecorder was given to a second store; it records only the first one.")
      return false
    }
    attached.set(target.attach(hook))
    return true
  }

  private func record(_ item: any Dispatchable, before: S?, after: S, time: Duration) {
    // Time travel is no part of the session: the store hands its moves to no hook.
    let cause = RecorderCause.current
    let interval = checkpointInterval
    let dropped = buffer.withLock { buffer -> RecorderBuffer<S>.Dropped in
      let commit = RecordedCommit(sequence: buffer.nextSequence, time: time, updater: item, cause: cause)
      return buffer.append(commit, before: before, after: after, interval: interval, capacity: capacity)
    }
    // User values (updaters, states) are released outside the lock.
    withExtendedLifetime(dropped) {}
  }

  /// What the recorder holds now: the state before its oldest commit, the commits in order, the checkpoints and
  /// the side effects (those still running have no end yet).
  ///
  /// Before the first commit the recording is empty, and its initial state is the store's start-up state if the
  /// recorder has seen a dispatch, `S()` otherwise.
  public func recording() -> Recording<S> {
    buffer.withLock { buffer in
      Recording(
        initialState: buffer.base ?? S(), commits: buffer.commits, checkpoints: buffer.checkpoints,
        effects: buffer.effectOrder.compactMap { buffer.effects[$0] })
    }
  }

  /// Takes everything recorded so far from `store` and starts a new recording, between two of its commits.
  ///
  /// For a sink that writes commits elsewhere as they come (an audit log in a database): drain the recorder at the
  /// pace the sink keeps, and append each recording's commits. The drain waits for the store's turn (as a state
  /// updater would, without committing anything or being seen by interceptors and observers), so no commit falls
  /// between two recordings, and consecutive drains chain: each one's ``Recording/initialState`` is the state the
  /// previous one's commits produced. Side effects still running are carried into the next recording. Keeping
  /// that state makes the store copy what it changes next, once per drain.
  ///
  /// - Parameter store: The store this recorder records.
  /// - Returns: The recording up to now (no commits if nothing was committed since the last drain).
  /// - Throws: ``RecorderError`` if the recorder does not record `store`; ``StoreError`` if the store has shut
  ///   down or failed to start; `CancellationError` if the calling task is cancelled while waiting for the turn.
  public nonisolated(nonsending) func drain<D: SideEffectDependencyContainer>(_ store: Store<S, D>) async throws
    -> Recording<S>
  {
    try attached.check(store.core, what: "StoreRecorder.drain")
    let (recording, dropped) = try await store.core.withTurnOnLiveState { state in
      buffer.withLock { buffer -> (Recording<S>, RecorderBuffer<S>) in
        let recording = Recording(
          initialState: buffer.base ?? state, commits: buffer.commits, checkpoints: buffer.checkpoints,
          effects: buffer.effectOrder.compactMap { buffer.effects[$0] })
        var fresh = RecorderBuffer<S>()
        fresh.nextSequence = buffer.nextSequence
        fresh.nextEffectID = buffer.nextEffectID
        fresh.hook = buffer.hook
        fresh.base = state
        for id in buffer.effectOrder where buffer.effects[id]?.outcome == nil {
          fresh.effects[id] = buffer.effects[id]
          fresh.effectOrder.append(id)
        }
        buffer.hook?.needsBefore.set(false)
        swap(&fresh, &buffer)
        return (recording, fresh)
      }
    }
    // User values (updaters, states, errors) are released outside the lock.
    withExtendedLifetime(dropped) {}
    return recording
  }

  /// Forgets everything recorded so far; the next commit starts a new recording (its sequence numbers go on).
  public func reset() {
    let dropped = buffer.withLock { buffer -> RecorderBuffer<S> in
      var fresh = RecorderBuffer<S>()
      fresh.nextSequence = buffer.nextSequence
      fresh.nextEffectID = buffer.nextEffectID
      fresh.hook = buffer.hook
      // The store hands the state before its next commit over: the new recording's initial state.
      buffer.hook?.needsBefore.set(true)
      swap(&fresh, &buffer)
      return fresh
    }
    // User values (updaters, states, errors) are released outside the lock.
    withExtendedLifetime(dropped) {}
  }

  // MARK: - Time travel

  /// Whether the store this recorder records is away from live: showing a recorded state (``travel(_:to:)``). The
  /// store's own state, set and cleared by the commits of the moves.
  public var isAwayFromLive: Bool { attached.isAwayFromLive }

  /// Moves `store`, which this recorder records, to the state after commit `sequence` (a debugging aid): listeners,
  /// streams and observable models see the move as a commit, and the recording does not include it.
  ///
  /// The move is a commit of a ``TimeTravelCommand``, which takes its place in the store's mailbox like any item:
  /// the items that entered the mailbox before it are applied first; from its commit on, until ``returnToLive(_:)``,
  /// the store is away from live and refuses every item with ``TimeTravelError/awayFromLive(_:)``: state updaters
  /// when their turn comes, however they arrive (dispatched, sent, through a scope, by an interceptor's `next`,
  /// replayed with `Recording.replay(into:)`, an ``UndoHistory``'s undo), and side effects as they start (a side
  /// effect already running gets that error from its dispatches). Nothing can change the recorded session while
  /// away. Travelling again while away moves to another recorded state.
  ///
  /// - Parameters:
  ///   - store: The store this recorder records.
  ///   - sequence: A commit the recording keeps, or the one before its first (its initial state).
  /// - Throws: ``RecorderError`` if the recorder does not record `store`;
  ///   ``TimeTravelError/notKept(_:kept:)`` if the recording does not keep that commit; a
  ///   ``ReplayError`` if the recording cannot be replayed up to it; what dispatching throws.
  public nonisolated(nonsending) func travel<D: SideEffectDependencyContainer>(
    _ store: Store<S, D>, to sequence: Int
  ) async throws {
    try attached.check(store.core, what: "StoreRecorder.travel")
    let recording = recording()
    let first = (recording.commits.first?.sequence ?? buffer.withLock { $0.nextSequence }) - 1
    let kept = first...(first + recording.commits.count)
    guard kept.contains(sequence) else { throw TimeTravelError.notKept(sequence, kept: kept) }
    let target = try Recording(
      initialState: recording.initialState, commits: Array(recording.commits.prefix(sequence - first)),
      checkpoints: recording.checkpoints
    ).replayedState(equal: nil)
    try await store.dispatch(TimeTravelCommand(target: target))
  }

  /// Moves `store` back to its live state after ``travel(_:to:)``, as a commit ordered in its mailbox like any item
  /// (a return that races a travel is ordered with it, never lost); commits nothing if the store is live when the
  /// command's turn comes.
  ///
  /// - Parameter store: The store this recorder records.
  /// - Throws: ``RecorderError`` if the recorder does not record `store`; what dispatching throws.
  public nonisolated(nonsending) func returnToLive<D: SideEffectDependencyContainer>(_ store: Store<S, D>)
    async throws
  {
    try attached.check(store.core, what: "StoreRecorder.returnToLive")
    try await store.dispatch(TimeTravelCommand<S>(target: nil))
  }

  // MARK: - Recording

  private func recordSideEffect(_ item: any Dispatchable, now: @Sendable () -> Duration, next: StoreInterceptorNext)
    async throws
  {
    let start = now()
    let cause = RecorderCause.current
    let (id, dropped) = buffer.withLock { buffer in
      buffer.start(RecordedEffect(id: 0, sideEffect: item, cause: cause, start: start), capacity: capacity)
    }
    withExtendedLifetime(dropped) {}
    let outcome: RecordedEffect.Outcome
    do {
      try await RecorderCause.$current.withValue(id) { try await next(item) }
      outcome = .completed
    } catch {
      outcome = error is CancellationError ? .cancelled : .failed(error)
      buffer.withLock { $0.end(id, at: now(), outcome: outcome) }
      throw error
    }
    buffer.withLock { $0.end(id, at: now(), outcome: outcome) }
  }

  /// A function that reads `clock` as the time since now.
  private static func timer(_ clock: any Clock<Duration>) -> @Sendable () -> Duration {
    func opened<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
      let start = clock.now
      return { start.duration(to: clock.now) }
    }
    return opened(clock)
  }
}

/// The side effect whose task is running: what a commit made from it is attributed to.
enum RecorderCause {
  @TaskLocal static var current: Int?
}

/// What a ``StoreRecorder`` holds, under its lock. Removing entries hands them back, to release after unlocking.
struct RecorderBuffer<S: State> {
  /// The store's hook, once the recorder is attached.
  var hook: CommitHook<S>?
  /// The state before the oldest commit kept; nil after a reset, until the store hands the next one over.
  var base: S?
  var commits: [RecordedCommit] = []
  var checkpoints: [Recording<S>.Checkpoint] = []
  var nextSequence = 1
  /// Side effects by id, and their ids in the order they started.
  var effects: [Int: RecordedEffect] = [:]
  var effectOrder: [Int] = []
  var effectStart = 0
  var nextEffectID = 1

  /// What a full buffer drops.
  struct Dropped {
    var commits: ArraySlice<RecordedCommit> = []
    var base: S?
    var effect: RecordedEffect?
  }

  /// Appends a commit, with the state before it if the recorder asked for it (after a reset), and the state after.
  mutating func append(_ commit: RecordedCommit, before: S?, after: S, interval: Int, capacity: Int) -> Dropped {
    var dropped = Dropped()
    if base == nil {
      hook?.needsBefore.set(false)
      guard let before else {
        // Reset while this commit was being made: the recording starts after it, and the next commit keeps its own
        // number (numbers count every commit the recorder saw).
        base = after
        nextSequence = commit.sequence + 1
        return dropped
      }
      base = before
    }
    nextSequence = commit.sequence + 1
    commits.append(commit)
    if commit.sequence % interval == 0 {
      checkpoints.append(Recording.Checkpoint(sequence: commit.sequence, state: after))
    }
    guard commits.count > capacity, !checkpoints.isEmpty else { return dropped }
    // Drop the oldest commits up to the oldest checkpoint, whose state becomes the base.
    let checkpoint = checkpoints.removeFirst()
    let count = commits.prefix { $0.sequence <= checkpoint.sequence }.count
    dropped.commits = commits[..<count]
    commits.removeFirst(count)
    dropped.base = base
    base = checkpoint.state
    return dropped
  }

  mutating func start(_ effect: RecordedEffect, capacity: Int) -> (Int, Dropped) {
    var effect = effect
    let id = nextEffectID
    nextEffectID += 1
    effect.id = id
    effects[id] = effect
    effectOrder.append(id)
    var dropped = Dropped()
    if effectOrder.count - effectStart > capacity {
      dropped.effect = effects.removeValue(forKey: effectOrder[effectStart])
      effectStart += 1
      if effectStart > capacity {
        effectOrder.removeFirst(effectStart)
        effectStart = 0
      }
    }
    return (id, dropped)
  }

  mutating func end(_ id: Int, at time: Duration, outcome: RecordedEffect.Outcome) {
    effects[id]?.end = time
    effects[id]?.outcome = outcome
  }
}

/// A move of the store to a recorded state, or back to live (``StoreRecorder/travel(_:to:)``), as interceptors see
/// it.
///
/// The store applies a move itself, in the commit transition every commit goes through: going away keeps the live
/// state and shows the recorded one, coming back puts the live state back; from the move away until the move back,
/// the store refuses every item (``TimeTravelError/awayFromLive(_:)``). Commit hooks (recorders and undo histories)
/// never see a move. `updateState` does nothing: a move dispatched anywhere else (another store, a replay) changes
/// nothing.
public struct TimeTravelCommand<S: State>: StateUpdater {
  /// The recorded state to show; nil to go back to live.
  let target: S?

  /// Does nothing: the store applies a move itself (see ``TimeTravelCommand``).
  public func updateState(_ state: inout S) {}
}

extension TimeTravelCommand: TimeTravelMove {
  @usableFromInline func callAsFunction<T: FeatureState, D: SideEffectDependencyContainer>(
    _ core: inout CoreState<T, D>, delivering delivery: inout Commit<T>?
  ) throws -> CommitOutcome {
    guard let target else { return core.travel(to: nil, item: self, delivering: &delivery) }
    guard let typed = target as? T else {
      throw StoreError.wrongStateType(expected: String(reflecting: T.self), actual: String(reflecting: S.self))
    }
    return core.travel(to: typed, item: self, delivering: &delivery)
  }
}

/// Why a dispatch or a move in time was refused.
public enum TimeTravelError: Error, CustomStringConvertible {
  /// The store is showing a recorded state: it takes no item until it returns to live.
  case awayFromLive(String)
  /// The recording does not keep this commit (`kept`: the commits it can move to).
  case notKept(Int, kept: ClosedRange<Int>)

  /// A sentence saying what was refused.
  public var description: String {
    switch self {
    case .awayFromLive(let typeName):
      "\(typeName) was refused: the store is away from live (time travel); return to live first."
    case .notKept(let sequence, let kept):
      "Commit \(sequence) is not kept by the recording; it keeps \(kept.lowerBound) to \(kept.upperBound)."
    }
  }
}
