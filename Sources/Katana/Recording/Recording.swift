/// One commit a ``StoreRecorder`` saw.
public struct RecordedCommit: Sendable {
  /// The commit's number in the store's commit order, from 1 for the first commit the recorder saw.
  public let sequence: Int
  /// When the commit was made: the time on the store's clock since the recorder was attached.
  ///
  /// Times never decrease from one commit to the next. On `ContinuousClock` (the default), on Linux on x86-64 or arm64,
  /// a commit's time is read from the processor's counter, anchored to the clock at most 20 microseconds earlier: it is
  /// within a few nanoseconds of the clock's reading. Only just after a machine resumes from sleep (its counter
  /// stopped while the clock went on) can the commits of the first 20 microseconds of counting carry a time from
  /// before it, until the clock is read again.
  public let time: Duration
  /// The state updater as the store applied it: a ``ScopedDispatchable`` for one dispatched through a scope.
  public let updater: any Dispatchable
  /// The ``RecordedEffect/id`` of the side effect that dispatched the updater, if it came from one (see
  /// ``StoreRecorder``).
  public let cause: Int?

  /// Creates a commit (for example to build a recording by hand in a test).
  public init(sequence: Int, time: Duration, updater: any Dispatchable, cause: Int? = nil) {
    self.sequence = sequence
    self.time = time
    self.updater = updater
    self.cause = cause
  }

  /// The scope the updater was dispatched through; nil for the root.
  public var scope: ScopeID? {
    (updater as? any ScopedDispatchable)?.scope
  }

  /// The updater as it was dispatched: the feature's own for one dispatched through a scope.
  public var base: any Dispatchable {
    (updater as? any ScopedDispatchable)?.base ?? updater
  }
}

/// One side effect a ``StoreRecorder`` saw: when it started and ended, and how.
public struct RecordedEffect: Sendable {
  /// How a side effect ended.
  public enum Outcome: Sendable {
    /// Its body returned (a ``ReturningSideEffect``'s value is not recorded).
    case completed
    /// It threw this error.
    case failed(any Error)
    /// It threw `CancellationError`.
    case cancelled
  }

  /// The side effect's number, from 1, in the order side effects started.
  public internal(set) var id: Int
  /// The side effect as the store ran it (a ``ScopedDispatchable`` for one dispatched through a scope).
  public let sideEffect: any Dispatchable
  /// The ``id`` of the side effect that dispatched this one, if any.
  public let cause: Int?
  /// When it started, on the store's clock, since the recorder was attached.
  public let start: Duration
  /// When it ended; nil while it runs.
  public internal(set) var end: Duration?
  /// How it ended; nil while it runs.
  public internal(set) var outcome: Outcome?

  init(id: Int, sideEffect: any Dispatchable, cause: Int?, start: Duration) {
    self.id = id
    self.sideEffect = sideEffect
    self.cause = cause
    self.start = start
  }

  /// A side effect as a log describes it (its item stands in by name).
  package init(
    id: Int, sideEffect: any Dispatchable, cause: Int?, start: Duration, end: Duration?, outcome: Outcome?
  ) {
    self.init(id: id, sideEffect: sideEffect, cause: cause, start: start)
    self.end = end
    self.outcome = outcome
  }
}

/// A session of a store: a state and the commits made on it, in commit order, which reproduce every state that
/// followed (see ``StoreRecorder``).
///
/// Replaying applies the updaters again, in order, to ``initialState``: no side effect runs (its results arrived
/// as the updaters it dispatched) and no interceptor sees them, unless asked for. The result is checked against
/// the ``checkpoints``:
///
/// ```swift
/// let recording = recorder.recording()
/// let final = try recording.replayedState()  // throws ReplayError.diverged at the first checkpoint that differs
/// ```
public struct Recording<S: State>: Sendable {
  /// The state after commit ``sequence``, kept by the recorder.
  public struct Checkpoint: Sendable {
    /// The commit after which the state was kept.
    public let sequence: Int
    /// The state after that commit.
    public let state: S

    /// Creates a checkpoint.
    public init(sequence: Int, state: S) {
      self.sequence = sequence
      self.state = state
    }
  }

  /// A digest of the state after commit ``sequence``: what a log keeps instead of the state, to check a replay
  /// without storing whole states (see `RecordingLog.encode(_:registry:continuing:digest:)`).
  public struct DigestCheckpoint: Sendable, Equatable {
    /// The commit after which the digest was taken.
    public let sequence: Int
    /// The digest of the state after that commit.
    public let digest: String

    /// Creates a digest checkpoint.
    public init(sequence: Int, digest: String) {
      self.sequence = sequence
      self.digest = digest
    }
  }

  /// The state before the first of ``commits``.
  public let initialState: S
  /// The commits, in commit order, their sequence numbers consecutive.
  public let commits: [RecordedCommit]
  /// States after some of the commits, in commit order: what replay checks against.
  public let checkpoints: [Checkpoint]
  /// The side effects, in the order they started.
  public let effects: [RecordedEffect]
  /// Digests of the states after some of the commits, in commit order: what replay checks with ``digest``.
  public let digests: [DigestCheckpoint]
  /// The function that made ``digests``, applied to the replayed states to check them.
  public let digest: (@Sendable (S) -> String)?

  /// Creates a recording.
  ///
  /// - Parameters:
  ///   - initialState: The state before the first commit.
  ///   - commits: The commits, in commit order, their sequence numbers consecutive.
  ///   - checkpoints: States after some of the commits, in commit order.
  ///   - effects: The side effects, in the order they started.
  ///   - digests: Digests of the state after some commits; checked on replay only if `digest` is given.
  ///   - digest: The function that made `digests` (the same on every machine and run: not `hashValue`).
  public init(
    initialState: S, commits: [RecordedCommit], checkpoints: [Checkpoint] = [], effects: [RecordedEffect] = [],
    digests: [DigestCheckpoint] = [], digest: (@Sendable (S) -> String)? = nil
  ) {
    self.initialState = initialState
    self.commits = commits
    self.checkpoints = checkpoints
    self.effects = effects
    self.digests = digests
    self.digest = digest
  }

  /// Replays every commit on ``initialState`` and returns the state after the last one, checking it against each
  /// checkpoint on the way.
  ///
  /// - Parameter equal: Whether two states are the same; with `nil` (the default for a state that is not
  ///   `Equatable`), checkpoints are not checked (``digests`` still are, with ``digest``).
  /// - Throws: ``ReplayError``: the first commit whose updater cannot be applied, or the first checkpoint where the
  ///   replayed state differs (nothing is replayed past it).
  public func replayedState(equal: ((S, S) -> Bool)?) throws(ReplayError) -> S {
    var state = initialState
    try replay(on: &state, equal: equal) { _, _ in }
    return state
  }

  /// The state after commit `sequence`, replayed from the last checkpoint at or before it (so at most a checkpoint
  /// interval of updaters is applied, however long the recording): what an inspector shows when a commit is picked.
  /// The checkpoint is taken as it is, not checked (``replayedState(equal:)`` checks them all).
  ///
  /// ```swift
  /// let recording = recorder.recording()
  /// if let state = try recording.replayedState(after: 42) { show(state) }
  /// ```
  ///
  /// - Parameter sequence: A commit the recording keeps, or the number just before its first commit (the state
  ///   before it, ``initialState``).
  /// - Returns: The state after that commit; nil if the recording keeps no such commit (an empty recording keeps
  ///   none: its numbers are unknown).
  /// - Throws: ``ReplayError``: the first commit on the way whose updater cannot be applied.
  public func replayedState(after sequence: Int) throws(ReplayError) -> S? {
    try replayedState(after: sequence, fromCheckpoint: true)
  }

  /// ``replayedState(after:)``; `fromCheckpoint` false replays every commit up to `sequence` from ``initialState``
  /// instead: the plain twin tests compare it with.
  func replayedState(after sequence: Int, fromCheckpoint: Bool) throws(ReplayError) -> S? {
    guard let end = count(through: sequence) else { return nil }
    var state = initialState
    var start = 0
    if fromCheckpoint, let checkpoint = checkpoints.last(where: { $0.sequence <= sequence }),
      let checkpointEnd = count(through: checkpoint.sequence), checkpointEnd <= end
    {
      state = checkpoint.state
      start = checkpointEnd
    }
    for commit in commits[start..<end] {
      try Self.apply(commit, to: &state)
    }
    return state
  }

  /// How many of ``commits`` come up to commit `sequence`, that commit included: 0 for the number just before the
  /// first commit; nil if the recording keeps no such commit. Numbers are consecutive in a recorder's recordings,
  /// so the commit is looked up where its number puts it; a recording made by hand is searched (the first commit
  /// with that number; the number before the first commit stands for ``initialState`` even if a later commit has
  /// it). Wrapping arithmetic: any number a caller hands in is compared, never trapped on.
  func count(through sequence: Int) -> Int? {
    guard let first = commits.first?.sequence else { return nil }
    let guess = sequence &- first
    if guess >= 0, guess < commits.count, commits[guess].sequence == sequence { return guess &+ 1 }
    if first != .min, sequence == first &- 1 { return 0 }
    return commits.firstIndex { $0.sequence == sequence }.map { $0 &+ 1 }
  }

  /// Replays every commit and returns the state after each one, in order (one state per commit).
  ///
  /// - Throws: ``ReplayError``, as ``replayedState(equal:)``.
  public func replayedStates(equal: ((S, S) -> Bool)?) throws(ReplayError) -> [S] {
    var state = initialState
    var states: [S] = []
    states.reserveCapacity(commits.count)
    try replay(on: &state, equal: equal) { _, state in states.append(state) }
    return states
  }

  /// Replays the commits on `state`, calling `after` with each commit and the state it produced.
  func replay(on state: inout S, equal: ((S, S) -> Bool)?, after: (RecordedCommit, S) -> Void) throws(ReplayError) {
    var checkpoints = self.checkpoints[...]
    var digests = digest == nil ? [] : self.digests[...]
    for commit in commits {
      try Self.apply(commit, to: &state)
      after(commit, state)
      while let checkpoint = checkpoints.first, checkpoint.sequence <= commit.sequence {
        checkpoints.removeFirst()
        guard checkpoint.sequence == commit.sequence, let equal, !equal(checkpoint.state, state) else { continue }
        throw .diverged(
          sequence: commit.sequence, expected: String(describing: checkpoint.state), replayed: String(describing: state)
        )
      }
      while let checkpoint = digests.first, checkpoint.sequence <= commit.sequence {
        digests.removeFirst()
        guard checkpoint.sequence == commit.sequence, let digest else { continue }
        let replayed = digest(state)
        guard replayed != checkpoint.digest else { continue }
        throw .diverged(
          sequence: commit.sequence, expected: "a state of digest \(checkpoint.digest)",
          replayed: "digest \(replayed): \(String(describing: state))")
      }
    }
  }

  /// Applies one commit's updater to `state`.
  static func apply(_ commit: RecordedCommit, to state: inout S) throws(ReplayError) {
    let updater = try commit.replayableUpdater()
    do {
      try StoreCore<S, EmptySideEffectDependencyContainer>.applyErased(updater, to: &state)
    } catch {
      throw .updaterFailed(sequence: commit.sequence, typeName: typeName(of: commit.base), error: error)
    }
  }
}

extension RecordedCommit {
  /// The updater to apply again.
  ///
  /// - Throws: ``ReplayError/unknownType(sequence:typeName:)`` for an updater a log recorded by name only, or
  ///   whose type its registry does not know; ``ReplayError/notReplayable(sequence:typeName:)`` for an item that
  ///   is no state updater.
  func replayableUpdater() throws(ReplayError) -> any AnyStateUpdater {
    if let unresolved = base as? UnresolvedUpdater {
      throw .unknownType(sequence: sequence, typeName: unresolved.typeName)
    }
    guard let updater = updater as? any AnyStateUpdater else {
      throw .notReplayable(sequence: sequence, typeName: typeName(of: base))
    }
    return updater
  }
}

/// What a log decodes an updater it cannot rebuild into: one recorded by name only (not `Codable`, or not
/// registered when recorded), or of a type the registry does not know. Replay stops at it.
package struct UnresolvedUpdater: Dispatchable {
  /// The name the log gives the updater's type.
  package let typeName: String

  package init(typeName: String) {
    self.typeName = typeName
  }
}

extension Recording where S: Equatable {
  /// Replays every commit on ``initialState`` and returns the state after the last one, checking it against each
  /// checkpoint with `==`.
  ///
  /// - Throws: ``ReplayError``: the first commit whose updater cannot be applied, or the first checkpoint where the
  ///   replayed state differs (nothing is replayed past it).
  public func replayedState() throws(ReplayError) -> S {
    try replayedState(equal: ==)
  }

  /// Replays every commit and returns the state after each one, checking the checkpoints with `==`.
  public func replayedStates() throws(ReplayError) -> [S] {
    try replayedStates(equal: ==)
  }
}

extension Recording {
  /// Commits the recording's updaters to `store`, in order, each once the store's turn comes, as the store's
  /// listeners, streams and observable models see any commit.
  ///
  /// No side effect runs. The updaters skip the store's interceptors, unless `throughInterceptors` is true: then
  /// each is dispatched as any item is. Either way, a ``StoreRecorder`` or ``UndoHistory`` among the store's
  /// interceptors sees each commit.
  ///
  /// Replay into a fresh store made from ``initialState`` reproduces every state of the session; this does not
  /// check that the store started there.
  ///
  /// - Throws: ``ReplayError`` for the first commit that cannot be applied (nothing after it is committed),
  ///   ``StoreError`` if the store has shut down, ``TimeTravelError/awayFromLive(_:)`` if the store is away from
  ///   live (time travel: the store refuses every commit, replayed ones included), `CancellationError` if the
  ///   calling task is cancelled between two commits.
  public nonisolated(nonsending) func replay<D: SideEffectDependencyContainer>(
    into store: Store<S, D>, throughInterceptors: Bool = false
  ) async throws {
    try await replayCommits(into: store, throughInterceptors: throughInterceptors)
  }

  nonisolated(nonsending) func replayCommits<D: SideEffectDependencyContainer>(
    into store: Store<S, D>, throughInterceptors: Bool
  ) async throws {
    for commit in commits {
      try Task.checkCancellation()
      let updater = try commit.replayableUpdater()
      do {
        if throughInterceptors {
          _ = try await store.anyDispatch(updater)
        } else {
          try await store.core.commitOutsideChain(updater) { try StoreCore<S, D>.applyErased(updater, to: &$0) }
        }
      } catch let error as StoreError {
        throw error
      } catch let error as TimeTravelError {
        // Refused by the store (away from live): the store's refusal, as any dispatch gets it.
        throw error
      } catch is CancellationError {
        throw CancellationError()
      } catch {
        throw ReplayError.updaterFailed(sequence: commit.sequence, typeName: typeName(of: commit.base), error: error)
      }
    }
  }
}

extension Recording where S: Equatable {
  /// Checks that `store` is at the recording's ``initialState``, then commits the recording's updaters to it; see
  /// `replay(into:throughInterceptors:)`. Nothing else should dispatch to `store` meanwhile.
  ///
  /// - Throws: ``ReplayError/wrongInitialState(expected:found:)`` if the store's state is not the initial state
  ///   (nothing is committed), and what `replay(into:throughInterceptors:)` throws.
  public nonisolated(nonsending) func replay<D: SideEffectDependencyContainer>(
    into store: Store<S, D>, throughInterceptors: Bool = false
  ) async throws {
    let state = store.state
    guard state == initialState else {
      throw ReplayError.wrongInitialState(expected: String(describing: initialState), found: String(describing: state))
    }
    try await replayCommits(into: store, throughInterceptors: throughInterceptors)
  }
}

/// Why a ``Recording`` could not be replayed.
public enum ReplayError: Error, CustomStringConvertible {
  /// The commit's item is not a state updater this package can apply (a recording built by hand).
  case notReplayable(sequence: Int, typeName: String)
  /// The commit's updater threw (for a scoped updater: its slice is missing).
  case updaterFailed(sequence: Int, typeName: String, error: any Error)
  /// After commit `sequence`, the replayed state differs from the one recorded there.
  case diverged(sequence: Int, expected: String, replayed: String)
  /// A log names an updater type that its registry does not know, or that was recorded by name only.
  case unknownType(sequence: Int, typeName: String)
  /// The store replayed into is not at the recording's initial state.
  case wrongInitialState(expected: String, found: String)

  /// A sentence saying what went wrong, and where.
  public var description: String {
    switch self {
    case .notReplayable(let sequence, let typeName):
      "Commit \(sequence): \(typeName) is not a state updater; it cannot be replayed."
    case .updaterFailed(let sequence, let typeName, let error):
      "Commit \(sequence): \(typeName) threw \(error) when replayed."
    case .diverged(let sequence, let expected, let replayed):
      "After commit \(sequence) the replayed state differs from the recorded one.\n"
        + "Recorded: \(expected)\nReplayed: \(replayed)"
    case .wrongInitialState(let expected, let found):
      "The store is not at the recording's initial state; nothing was replayed.\nExpected: \(expected)\nFound: \(found)"
    case .unknownType(let sequence, let typeName):
      "Commit \(sequence): \(typeName) is not registered as replayable (or was not Codable when recorded); "
        + "replay stops here."
    }
  }
}
