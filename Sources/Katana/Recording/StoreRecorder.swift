/// Records every commit a store makes, in commit order, with the updater that made it, and the timeline of its
/// side effects: what ``Recording`` replays, checks and saves.
///
/// ```swift
/// let recorder = StoreRecorder<AppState>(capacity: 10_000)
/// let store = Store<AppState, AppDependencies>(initialState: AppState(), interceptors: [logger])
/// try recorder.attach(to: store)
/// // ... the app runs ...
/// let recording = recorder.recording()
/// let replayed = try recording.replayedState()   // equals store.state
/// ```
///
/// The store writes to the recorder itself (``attach(to:)``): each commit is appended in the commit's own critical
/// section, by the one transition every commit goes through, so the recorder sees commits one at a time, in the
/// order the store made them, as the store applied them (after interceptors changed or dropped items). It records:
/// - each commit: its ``RecordedCommit/sequence`` number, the time on the store's clock, the updater itself (a
///   ``ScopedDispatchable`` for one dispatched through a scope), and the side effect that caused it: the one whose
///   task dispatched it (or a task that effect started as a child), or sent it with `send` (whether the store
///   applies it at once or when its turn comes).
/// - each side effect's start, end and outcome (``RecordedEffect``), written where the store runs it.
///
/// A store without a recorder pays nothing for this feature. One with a recorder keeps its fast paths (an idle
/// store applies a dispatched or sent updater at once); each commit costs an entry in a ring under the recorder's
/// own lock, and a side effect two more (see <doc:Performance> for the measured cost). Nothing is encoded: a
/// ``Recording`` is encoded when, and where, the app asks. A page following the store, or a sink, reads what is
/// new with ``commits(after:)`` and ``effects(changedSince:)``, which copy only that.
///
/// The time of a commit is read on the store's clock when it is `ContinuousClock`, `SuspendingClock` or one of
/// KatanaTesting's clocks; for another clock (whose `now` could run any code, in the store's critical section) the
/// recorder reads `ContinuousClock`.
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

  /// What the store writes: commits, checkpoints and side effects.
  let log: CommitLog<S>
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
    log = CommitLog(capacity: capacity, interval: self.checkpointInterval)
  }

  /// Starts recording `store`: every commit it makes from now on, and every side effect it starts.
  ///
  /// Call it right after making the store to record everything (the state it starts from, once ready, is the
  /// recording's ``Recording/initialState``), or later to record from then on (the store's state at that moment is
  /// the initial state). Attaching the same store again does nothing.
  ///
  /// - Throws: ``RecorderError/anotherStore(_:)`` if the recorder already records another store.
  public func attach<D: SideEffectDependencyContainer>(to store: Store<S, D>) throws(RecorderError) {
    try attach(store.core, what: "StoreRecorder.attach(to:)")
  }

  /// The older way to attach a recorder: an interceptor that attaches it to the store whose interceptors it is
  /// among, and otherwise hands every item on.
  ///
  /// Prefer ``attach(to:)``: a store with an interceptor takes the interceptor path for every dispatch (see
  /// <doc:Performance>), which a recorder no longer needs. Give each store a recorder of its own: one given to a
  /// store of another state type, or to a second store, records nothing there (and says so in a runtime warning).
  public var interceptor: StoreInterceptor {
    { [self] context in
      if let target = context as? any RecorderAttachable {
        if !target.attach(self) {
          target.runtimeWarning(
            "A StoreRecorder<\(String(reflecting: S.self))> was given to a second store or to a store of another "
              + "state type; it records nothing there.")
        }
      }
      return { next in next }
    }
  }

  /// Attaches the recorder to `core`, the first store it is given.
  func attach<D: SideEffectDependencyContainer>(_ core: StoreCore<S, D>, what: String) throws(RecorderError) {
    let followed = FollowedStore(core)
    guard attached.setIfUnset(followed) else {
      try attached.check(core, what: what)
      return
    }
    core.attach(log)
  }

  /// What the recorder holds now: the state before its oldest commit, the commits in order, the checkpoints and
  /// the side effects (those still running have no end yet).
  ///
  /// It copies every commit kept; to follow a store as it goes, read ``commits(after:)`` instead. Before the first
  /// commit the recording is empty, and its initial state is the store's live state when the recorder was attached or
  /// last reset (the state it started from, if it was starting then; `S()` if its start-up failed).
  public func recording() -> Recording<S> {
    let (base, commits, checkpoints) = log.storage.withLock { log in
      (log.base, log.commits, log.recordedCheckpoints)
    }
    // Read after the commits: each commit's cause started before it, and is kept (unless dropped).
    return Recording(initialState: base ?? S(), commits: commits, checkpoints: checkpoints, effects: log.effects.all)
  }

  /// The commits recorded after commit `sequence` that the recorder still keeps, oldest first, and the side effects
  /// it keeps that started, or ended, since the read that returned `since`: what a page following the store, or a
  /// sink writing commits elsewhere, reads as it goes.
  ///
  /// It copies only those entries (never the recorder's whole window), under the recorder's own lock, so the store's
  /// next commit copies nothing because of it. When the recorder dropped commits after `sequence` (it keeps at most
  /// ``capacity``), the first commit returned is above `sequence + 1`: compare it with what you expected to see
  /// that commits were missed.
  ///
  /// - Parameter sequence: The last commit the caller has; 0 (or any number below the first kept) for all kept.
  /// - Returns: The commits kept after `sequence`, in commit order.
  public func commits(after sequence: Int) -> [RecordedCommit] {
    log.storage.withLock { $0.commits(after: sequence) }
  }

  /// The side effects the recorder keeps that started or ended since the read that returned `version`, in the order
  /// they started, and the version to pass next time: what a page following the store reads with ``commits(after:)``.
  ///
  /// A side effect that started and then ended between two reads comes once, ended. It copies only those side
  /// effects, under the recorder's own lock.
  ///
  /// - Parameter version: What the previous read returned; 0 for every side effect kept.
  /// - Returns: The side effects changed since `version`, and the version now.
  public func effects(changedSince version: Int) -> (effects: [RecordedEffect], version: Int) {
    log.effects.changed(since: version)
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
      let (base, commits, checkpoints, old) = log.storage.withLock { log in
        (
          log.base ?? state, log.commits,
          log.recordedCheckpoints, log.reset(base: state)
        )
      }
      // Holding the turn, no commit comes between the two: the side effects taken are those up to now (one that starts
      // meanwhile, which no commit of this recording names, goes on in the next if it still runs).
      let effects = log.effects.reset(carryingRunning: true)
      return (Recording(initialState: base, commits: commits, checkpoints: checkpoints, effects: effects), old)
    }
    log.needsBase.set(false)
    // User values (updaters, states, errors) are released outside the lock.
    withExtendedLifetime(dropped) {}
    return recording
  }

  /// Forgets everything recorded so far and starts a new recording from the store's live state now, between two of its
  /// commits (its sequence numbers go on). A recorder not attached yet, or whose store is still starting, starts from
  /// the state before the store's next commit; one whose store has shut down, from the state the store ended with.
  public func reset() {
    var dropped: CommitLogState<S>?
    // Between two commits: under the store's lock, then the log's (the order every commit takes them in).
    var droppedEffects: [RecordedEffect] = []
    let reset = { [log] (state: S?) in
      dropped = log.storage.withLock { $0.reset(base: state) }
      droppedEffects = log.effects.reset(carryingRunning: false)
      log.needsBase.set(state == nil)
    }
    if let liveState = log.storage.withLock({ $0.liveState }) {
      liveState(reset)
    } else {
      reset(nil)
    }
    // User values (updaters, states, errors) are released outside the locks.
    withExtendedLifetime((dropped, droppedEffects)) {}
  }

  // MARK: - Time travel

  /// Whether the store this recorder records is away from live: showing a recorded state (``travel(_:to:)``). The
  /// store's own state, set and cleared by the commits of the moves.
  public var isAwayFromLive: Bool { attached.isAwayFromLive }

  /// How many items the store this recorder records refused since it last went away from live (``travel(_:to:)``):
  /// dispatches, sends and side effects refused with ``TimeTravelError/awayFromLive(_:)``, each counted once, as the
  /// store refused it. Kept after the store returns to live, until it goes away again; 0 before it first does. What
  /// an inspector shows beside a move in time: what the app tried to do meanwhile.
  public var refusedWhileAway: Int { attached.refusedWhileAway }

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
    let first = (recording.commits.first?.sequence ?? log.storage.withLock { $0.nextSequence }) - 1
    let kept = first...(first + recording.commits.count)
    guard kept.contains(sequence) else { throw TimeTravelError.notKept(sequence, kept: kept) }
    // An empty window keeps only the state before the next commit, the recording's initial state.
    let found = recording.commits.isEmpty ? recording.initialState : try recording.replayedState(after: sequence)
    guard let target = found else { throw TimeTravelError.notKept(sequence, kept: kept) }
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
}

/// The side effect whose task is running, and its store: what a commit made from it, or a side effect it starts, on
/// that store is attributed to (its number in the store's recorders' logs). A side effect of one store that
/// dispatches to another is no cause there.
@usableFromInline
enum RecorderCause {
  /// The task-local behind ``current(on:causes:)``, declared without the property wrapper so that inlined code can
  /// read and bind it.
  @usableFromInline static let local = TaskLocal<Bound?>(wrappedValue: nil)

  /// A side effect's number, and the store it runs for; it holds its store's ``RecorderCauses/Token`` from the side
  /// effect's start until the last task that carries it lets it go (its own task, and every task that inherited it:
  /// an unstructured `Task` started from it, or a sent item's work carried past it).
  @usableFromInline
  struct Bound: Sendable {
    @usableFromInline let store: ObjectIdentifier
    @usableFromInline let id: Int
    /// Its store's token: held, it tells commits that a binding is alive.
    let token: RecorderCauses.Token

    init(store: ObjectIdentifier, id: Int, causes: RecorderCauses) {
      self.store = store
      self.id = id
      token = causes.shared
    }
  }

  /// The number of the side effect of `store` whose task is running, if any. With `causes` (that store's, read in a
  /// commit's critical section), the task-local is read only while a binding is alive: while none is, no task
  /// anywhere carries one of the store's side effects as a cause (a task that carries one holds it), and a task that
  /// carries one finds one alive, its own. Nil: the task-local is read (outside the store's lock, and the plain twin,
  /// ``StoreConfiguration/forcesPlainPath``).
  @inlinable static func current(on store: ObjectIdentifier?, causes: RecorderCauses?) -> Int? {
    if let causes, !causes.anyAlive { return nil }
    guard let bound = local.get(), bound.store == store else { return nil }
    return bound.id
  }
}

/// Whether any of a store's side effects is bound, anywhere, as the cause of what its task commits
/// (``RecorderCause/Bound``), known without a count: each binding holds the store's ``token``, so the token is
/// uniquely referenced (by this object) exactly when no binding is alive. Binding and unbinding cost the token's
/// retain and release, and no allocation.
@usableFromInline
final class RecorderCauses: @unchecked Sendable {
  // Sendable: `token` is written only by `init`; its one other access, the uniqueness check in ``anyAlive``, is made
  // only in a commit's critical section, under the store's lock, so two never overlap.

  /// What every binding of the store holds.
  @usableFromInline
  final class Token: Sendable {
    init() {}
  }

  /// The one reference to the token that is no binding's.
  @exclusivity(unchecked) @usableFromInline var token: Token
  /// The same token, unretained: what a new binding takes (a read of ``token`` itself could overlap a commit's
  /// uniqueness check). Valid as long as this object is: the store that makes bindings holds it.
  unowned(unsafe) let shared: Token

  init() {
    let token = Token()
    self.token = token
    shared = token
  }

  /// Whether a binding may be alive: false only when none is. Called only under the store's lock.
  @inlinable var anyAlive: Bool {
    !isKnownUniquelyReferenced(&token)
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
