// The observation fuzzer's operations on the store's other doors (issue 32): replay into the store, a feature's
// outputs whose handler dispatches, time travel racing dispatches, drains of the recorder; and the checks that the
// commit log implies for them (moves in time restore what they say, nothing commits while away, every recorded and
// drained commit replays to the log).
import Foundation
import KatanaTestSupport

@testable import Katana

/// What a commit of the log is, as the tap on the store's commits saw its item.
enum OracleCommitKind: Equatable {
  /// An operation's updater (or an interceptor's substitute for it).
  case operation
  /// An undo or redo of an `UndoHistory`.
  case undo
  /// A move in time: to `target`, or back to live (nil).
  case move(target: OracleState?)
}

/// An output of the feature the fuzzer mounts with a handler: the handler dispatches a root bump for `op`.
struct OracleOutput: FeatureOutput {
  typealias StateType = OracleCell
  let op: Int
}

/// A feature's side effect that emits one output per operation, recording what each `emit` did: the tick at which it
/// returned, and its error.
struct OracleEmitWork: SideEffect {
  let ops: [Int]
  let outcomes: LockedValue<[Int: (end: Int, error: (any Error)?)]>
  let tick: @Sendable () -> Int

  func sideEffect(_ context: SideEffectContext<OracleCell, OracleDependencies>) async throws {
    for op in ops {
      do {
        try await context.emit(OracleOutput(op: op))
        let end = tick()
        outcomes.withLock { $0[op] = (end, nil) }
      } catch {
        let end = tick()
        outcomes.withLock { $0[op] = (end, error) }
        throw error
      }
    }
  }
}

/// Replays `recording` into `store` without the check of its initial state (which `Recording`'s overload for an
/// `Equatable` state makes): the recording is made from the state the store had a moment before.
func replayUnchecked<S: State, D: SideEffectDependencyContainer>(
  _ recording: Recording<S>, into store: Store<S, D>, throughInterceptors: Bool
) async throws {
  try await recording.replay(into: store, throughInterceptors: throughInterceptors)
}

extension OracleWorld {
  // MARK: - Replay

  /// Replays a recording of one root bump into the store, through its interceptors or past them.
  func replayOp(op: Int, _ generator: inout SeededGenerator) async {
    let through = generator.next() % 2 == 0
    let checked = generator.next() % 4 == 0
    let recording = Recording(
      initialState: store.state, commits: [RecordedCommit(sequence: 1, time: .zero, updater: OracleRootBump(op: op))])
    let result = await outcome {
      if checked {
        FuzzCoverage.note(.recordingReplayIntoChecked)
        try await recording.replay(into: store, throughInterceptors: through)
      } else {
        FuzzCoverage.note(.recordingReplayInto)
        try await replayUnchecked(recording, into: store, throughInterceptors: through)
      }
    }
    var recorded = result
    // The checked replay refuses a store that moved on since the recording was made: nothing committed.
    if case .failure(ReplayError.wrongInitialState) = result { recorded = .failure(OracleSkipped()) }
    record(
      op: op, target: "replay(into:) of a root bump\(through ? ", through the interceptors" : "")",
      awaited: true, behaviour: through ? behaviour(op) : .pass, result: recorded, tick: journal.tick())
  }

  // MARK: - Feature outputs

  /// Dispatches, through the feature mounted with an output handler, a side effect that emits outputs; the handler
  /// dispatches a root bump for each.
  func emitOp(op: Int, _ generator: inout SeededGenerator) async {
    FuzzCoverage.note(.contextEmit)
    let ops = (1...Int(generator.next() % 2 + 1)).map { op + $0 }
    // A sent side effect runs in a task the store owns, which a shutdown cancels.
    let cancellable = true
    let outcomes = LockedValue<[Int: (end: Int, error: (any Error)?)]>([:])
    let work = OracleEmitWork(ops: ops, outcomes: outcomes, tick: { [journal] in journal.tick() })
    let awaited = generator.next() % 2 == 0
    // Through one of the features mounted with a handler (at a field, an optional field or an element; from the
    // store or from a scope of it): the output does not touch the slice, which may be missing.
    let feature = outputs[Int(generator.next() % UInt64(outputs.count))]
    let result = awaited ? await outcome { try await feature.dispatch(work) } : await feature.send(work).result
    let end = journal.tick()
    for nested in ops {
      let what = "an output of the feature, whose handler dispatches a root bump"
      switch outcomes.withLock({ $0[nested] }) {
      case (let returned, nil)?:
        record(op: nested, target: what, awaited: true, result: .success(()), tick: returned)
      case (let returned, let error?)?:
        record(
          op: nested, target: what, awaited: true, cancelled: cancellable, result: .failure(error), tick: returned)
      case nil:
        // Not emitted: the side effect failed or was refused before.
        record(
          op: nested, target: what, awaited: true, behaviour: .pass, result: .failure(OracleSkipped()), tick: end)
      }
    }
    if case .failure(let error) = result, !Self.isExpected(error, behaviour: .fail, cancelled: cancellable) {
      journal.problem("emitting side effect op \(op): unexpected error \(error)")
    }
  }

  // MARK: - Time travel and the recorder

  /// Moves the store to a recorded commit, lets the others race it for a moment (their items are refused while it is
  /// away), then brings it back to live, unless the seed leaves that to another operation.
  func travelOp(_ generator: inout SeededGenerator) async {
    guard let recorder, !unlogged else { return }
    let recording = recorder.recording()
    FuzzCoverage.note(.recorderRecording)
    let first = (recording.commits.first?.sequence ?? 1) - 1
    let target = first + Int(generator.next() % UInt64(recording.commits.count + 1))
    let window = openAwayWindow()
    FuzzCoverage.note(.recorderTravel)
    do {
      try await recorder.travel(store, to: target)
    } catch {
      if !Self.isExpectedOfRecorder(error) { journal.problem("travel to commit \(target): unexpected error \(error)") }
    }
    travelDone(window)
    FuzzCoverage.note(.recorderIsAwayFromLive)
    _ = recorder.isAwayFromLive
    for _ in 0..<Int(generator.next() % 4) { await Task.yield() }
    if generator.next() % 4 != 0 { await returnOp() }
  }

  /// Brings the store back to live.
  func returnOp() async {
    guard let recorder, !unlogged else { return }
    let call = journal.tick()
    FuzzCoverage.note(.recorderReturnToLive)
    do {
      try await recorder.returnToLive(store)
    } catch {
      if !Self.isExpectedOfRecorder(error) { journal.problem("returnToLive: unexpected error \(error)") }
    }
    closeAwayWindows(returnedAt: journal.tick(), calledAt: call)
  }

  /// Drains the recorder: the drained recordings, in order, must replay to the commit log with the final one.
  func drainOp() async {
    guard let recorder else { return }
    FuzzCoverage.note(.recorderDrain)
    do {
      let recording = try await recorder.drain(store)
      journal.drained.withLock { $0.append(recording) }
    } catch {
      if !Self.isExpectedOfRecorder(error) { journal.problem("drain: unexpected error \(error)") }
    }
  }

  /// Whether a recorder's travel, return or drain may throw `error` in a run: the store has shut down, or has not
  /// started (the recorder attaches as its interceptors are installed), or an interceptor rejected the move.
  static func isExpectedOfRecorder(_ error: any Error) -> Bool {
    if error is StoreError || error is OracleError || error is TimeTravelError { return true }
    if case RecorderError.notInstalled = error { return true }
    return false
  }

  /// Reads what the recorder holds after a commit it keeps, as a page following the store does, racing commits,
  /// drains and resets: the commits come in order, consecutive, all after the one asked for; the side effects after a
  /// number are above it or still running.
  func followOp(_ generator: inout SeededGenerator) {
    guard let recorder else { return }
    FuzzCoverage.note(.recorderCommitsAfter)
    let all = recorder.commits(after: 0)
    let from = all.isEmpty ? 0 : all[Int(generator.next() % UInt64(all.count))].sequence
    for read in [all, recorder.commits(after: from)] {
      for (earlier, later) in zip(read, read.dropFirst()) where later.sequence != earlier.sequence + 1 {
        journal.problem("commits(after:) read commit \(later.sequence) right after \(earlier.sequence)")
      }
    }
    if let first = recorder.commits(after: from).first, first.sequence <= from {
      journal.problem("commits(after: \(from)) read commit \(first.sequence)")
    }
    FuzzCoverage.note(.recorderEffectsChanged)
    let (before, version) = recorder.effects(changedSince: 0)
    let (after, next) = recorder.effects(changedSince: version)
    if next < version { journal.problem("effects(changedSince:) went from version \(version) back to \(next)") }
    // What changed since the first read started after it, or was still running then (or the recorder was drained or
    // reset meanwhile, which keeps only running side effects).
    let ended = Set(before.filter { $0.outcome != nil }.map(\.id))
    for effect in after where ended.contains(effect.id) {
      journal.problem("effects(changedSince: \(version)) read side effect \(effect.id) again, which had ended before")
    }
  }

  /// Forgets what the recorder holds: the commits since the last drain are lost to the check, the next recording
  /// starts at the state before its first commit.
  func resetOp() {
    guard let recorder else { return }
    FuzzCoverage.note(.recorderReset)
    journal.resets.withLock { $0 += 1 }
    recorder.reset()
  }

  /// A travel is asked for now: until a return asked for after it has completed, the store may be away.
  func openAwayWindow() -> Int {
    let tick = journal.tick()
    return journal.awayWindows.withLock { windows in
      windows.append((from: tick, to: nil, travelDone: nil))
      return windows.count - 1
    }
  }

  func travelDone(_ window: Int) {
    let tick = journal.tick()
    journal.awayWindows.withLock { $0[window].travelDone = tick }
  }

  /// A return asked for at `calledAt` completed at `returnedAt`: every travel that had completed before the return
  /// was asked for is over (a travel still in flight may commit after the return).
  func closeAwayWindows(returnedAt: Int, calledAt: Int) {
    journal.awayWindows.withLock { windows in
      for index in windows.indices where windows[index].to == nil {
        if let done = windows[index].travelDone, done < calledAt { windows[index].to = returnedAt }
      }
    }
  }
}

/// An operation that did not reach the store (its side effect stopped before it, or a checked replay refused a store
/// that had moved on): it must commit nothing.
struct OracleSkipped: Error {}

extension OracleJournal {
  /// What each commit of the log is, from the tap (nil without one: every commit is an operation's). The tap saw
  /// the same commits as the commit-log listener, in the same order, with the same states after them: anything else
  /// is a problem.
  func commitKinds(commits: [OracleState]) -> [Int: OracleCommitKind]? {
    let tapped = tapped.withLock { $0 }
    guard !tapped.isEmpty || commits.count <= 1 else { return nil }
    var kinds: [Int: OracleCommitKind] = [:]
    if tapped.count != commits.count - 1 {
      problem("the tap on the store's commits saw \(tapped.count) commits, the commit log \(commits.count - 1)")
    }
    for (offset, entry) in tapped.enumerated() {
      let index = offset + 1
      if index < commits.count, commits[index] != entry.after {
        problem("commit \(index): the tap saw \(entry.after) after it, the commit log \(commits[index])")
      }
      let base = (entry.item as? any ScopedDispatchable)?.base ?? entry.item
      if let move = entry.item as? TimeTravelCommand<OracleState> {
        kinds[index] = .move(target: move.target)
      } else if base is any HistoryCommand {
        kinds[index] = .undo
      } else {
        kinds[index] = .operation
      }
    }
    return kinds
  }
}

extension OracleModel {
  /// SPEC 4.10: a move to a recorded state shows it; a return shows the live state the store left; nothing but a
  /// move commits while the store is away from live (replay and undo included).
  func checkTimeTravel(kinds: [Int: OracleCommitKind]?) -> [String] {
    guard let kinds else { return [] }
    var failures: [String] = []
    var live: OracleState?
    for index in commits.indices.dropFirst() {
      switch kinds[index] {
      case .move(let target?)?:
        if live == nil { live = commits[index - 1] }
        if commits[index] != target {
          failures.append("commit \(index), a move to a recorded state, shows \(commits[index]), not \(target)")
        }
      case .move(nil)?:
        guard let saved = live else {
          failures.append("commit \(index), a return to live, was committed while the store was live")
          continue
        }
        if commits[index] != saved {
          failures.append("commit \(index), a return to live, shows \(commits[index]), not the live \(saved)")
        }
        live = nil
      case .operation?, .undo?:
        if live != nil {
          failures.append("commit \(index) (\(kinds[index]!)) was committed while the store was away from live")
        }
      case nil:
        break
      }
    }
    return failures
  }

  /// The states of the commits a recorder records (every commit but the moves in time), in order.
  func recordedStates(kinds: [Int: OracleCommitKind]?) -> [OracleState] {
    commits.indices.dropFirst().compactMap { index in
      if case .move? = kinds?[index] { return nil }
      return commits[index]
    }
  }

  /// SPEC 4.10: every recording taken from the recorder (drained during the run, and its last one) replays, commit
  /// by commit, to the commit log (moves left out), from the state the log had before its first commit. A recorded
  /// commit's sequence number says where: commit `n` is the `n`th recorded commit of the run, whatever was drained or
  /// reset in between; so a drain's recording must start where the one before ends, and a reset only loses commits.
  /// `resets` is the number of resets made during the run: without any, the recordings must cover every commit.
  func checkRecordings(_ recordings: [Recording<OracleState>], kinds: [Int: OracleCommitKind]?, resets: Int) -> [String]
  {
    let expected = recordedStates(kinds: kinds)
    var failures: [String] = []
    var covered = 0
    for recording in recordings where !recording.commits.isEmpty {
      let first = recording.commits[0].sequence
      let what = "the recording of commits \(first) to \(first + recording.commits.count - 1) (of \(expected.count))"
      guard first >= 1, first - 1 + recording.commits.count <= expected.count else {
        failures.append("\(what) numbers commits the commit log does not have")
        continue
      }
      let before = first == 1 ? commits[0] : expected[first - 2]
      if recording.initialState != before {
        failures.append("\(what) starts at \(recording.initialState), not at the log's \(before)")
      }
      covered += recording.commits.count
      do {
        // Every form of replay, each checked against the others.
        let states: [OracleState]
        switch first % 3 {
        case 0:
          FuzzCoverage.note(.recordingReplayedStates)
          states = try recording.replayedStates()
        case 1:
          FuzzCoverage.note(.recordingReplayedStatesEqual)
          states = try recording.replayedStates(equal: ==)
        default:
          FuzzCoverage.note(.recordingReplayedStatesEqual)
          states = try recording.replayedStates(equal: nil)
        }
        FuzzCoverage.note(.recordingReplayedState)
        FuzzCoverage.note(.recordingReplayedStateEqual)
        let last = try recording.replayedState()
        let lastUnchecked = try recording.replayedState(equal: nil)
        let logged = Array(expected[(first - 1)..<(first - 1 + recording.commits.count)])
        if states != logged {
          let index = zip(states, logged).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? 0
          failures.append(
            "\(what) replays to other states than the log's, from commit \(first + index): replayed \(states[index]), "
              + "logged \(logged[index])")
        } else if last != logged.last || lastUnchecked != logged.last {
          failures.append("\(what)'s replayed final state is not its last replayed state")
        }
        // The state after each commit kept, and the one before the first, each from its nearest checkpoint; none for
        // the numbers around the window.
        FuzzCoverage.note(.recordingReplayedStateAfter)
        for sequence in (first - 2)...(first + recording.commits.count) {
          let state = try recording.replayedState(after: sequence)
          let offset = sequence - first
          let wanted: OracleState? =
            if offset == -1 { before } else if offset >= 0, offset < logged.count { logged[offset] } else { nil }
          if state != wanted {
            failures.append(
              "\(what) gives \(state.map { "\($0)" } ?? "nothing") as the state after commit \(sequence), not "
                + "\(wanted.map { "\($0)" } ?? "nothing")")
            break
          }
        }
      } catch {
        failures.append("\(what) does not replay: \(error)")
      }
    }
    if resets == 0, covered != expected.count {
      failures.append("the recordings hold \(covered) commits; the commit log has \(expected.count) recorded commits")
    }
    return failures
  }
}
