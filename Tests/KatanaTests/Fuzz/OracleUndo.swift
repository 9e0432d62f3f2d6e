// The observation fuzzer's undo: a history of the whole store (every updater is a step), undone and redone from any
// task at any time, and a history of one scope (`session`) that one task at a time drives through a session of steps,
// groups, undos, redos and clears. Undo commits are checked, in the commit log, against a plain twin of each history
// (`UndoModel`) fed with the same commits in the same order: the state an undo or redo leaves is the one the twin
// replays to (the whole state for the store's history, the session's slice for the scope's).
import KatanaTestSupport

@testable import Katana

/// The histories of a run that has them.
struct OracleHistories: Sendable {
  /// Every updater is a step; undone and redone from any task.
  let root: UndoHistory<OracleState>
  /// The steps through the session's scope; one session at a time.
  let session: UndoHistory<OracleState>
  /// Whether a session is under way (sessions do not overlap, so that the steps of a group are the session's).
  let busy = LockedValue(false)
  /// The tag of the next group.
  let nextGroup = LockedValue(1)
  /// Whether the session's history is cleared right after each ``OracleClearSession`` commit (by an interceptor). Runs
  /// whose histories are attached may leave it out, so that the store has no interceptor and can run with no
  /// observer: its commits then take the path of a commit that concerns only hooks and recorders.
  let clears: Bool

  static let rootLimits = (steps: 4, commits: 12)

  /// How the store's histories undid and redid, over every run of the process: in place (an ``OracleRootBump``'s
  /// inverse, a redo of the latest step) or by replaying. The fuzzer checks that it took both.
  static let rootPaths = LockedValue((inPlace: 0, replayed: 0))

  /// Adds the store's history's undos and redos of this run to ``rootPaths``.
  func noteRootPaths() {
    let counts = root.pathCounts
    Self.rootPaths.withLock {
      $0.inPlace += counts.inPlace
      $0.replayed += counts.replayed
    }
  }
  static let sessionLimits = (steps: 3, commits: 10)

  /// Two histories, to install in a store's interceptors (with ``clearing``, if `clears`), and the store's scope of
  /// the session.
  init(clears: Bool) {
    self.clears = clears
    FuzzCoverage.note(.undoInit)
    root = UndoHistory<OracleState>(
      scope: nil, stepLimit: Self.rootLimits.steps, commitLimit: Self.rootLimits.commits, isUndoable: { _ in true })
    session = UndoHistory<OracleState>(
      scope: \.session, stepLimit: Self.sessionLimits.steps, commitLimit: Self.sessionLimits.commits)
  }

  /// The interceptors to install, in this order: the histories, then the one that clears the session's history
  /// right after the commit of an ``OracleClearSession`` (while it still holds the turn: the clear falls between two
  /// commits that every observer sees in that order).
  ///
  /// - Parameter attached: The histories are attached with ``attach(to:)`` instead: only the clearing one.
  func interceptors(attached: Bool) -> [StoreInterceptor] {
    if !attached { FuzzCoverage.note(.undoInterceptor) }
    let session = session
    let clearing: StoreInterceptor = { _ in
      { next in
        { item in
          try await next(item)
          if item is OracleClearSession {
            FuzzCoverage.note(.undoClear)
            session.clear()
          }
        }
      }
    }
    let clearings = clears ? [clearing] : []
    return attached ? clearings : [root.interceptor, session.interceptor] + clearings
  }

  /// Attaches both histories to `store` (made with ``interceptors(attached:)``, `attached` true).
  func attach(to store: OracleStore) throws {
    FuzzCoverage.note(.undoAttach)
    try root.attach(to: store)
    try session.attach(to: store)
  }
}

/// A root commit right after which the session's history is cleared (see ``OracleHistories/interceptors``).
struct OracleClearSession: StateUpdater {
  let op: Int
  func updateState(_ state: inout OracleState) {
    state.seq += 1
    state.lastOp = op
  }
}

extension OracleWorld {
  /// An undo or a redo of the store's history, from any task.
  func rootUndoOp(_ generator: inout SeededGenerator) async {
    guard let histories else { return }
    let undoes = generator.next() % 3 != 0
    FuzzCoverage.note(undoes ? .undoOnStore : .redoOnStore)
    FuzzCoverage.note(.undoCanUndo)
    FuzzCoverage.note(.undoCanRedo)
    _ = (histories.root.canUndo, histories.root.canRedo)
    do {
      _ = undoes ? try await histories.root.undo(on: store) : try await histories.root.redo(on: store)
    } catch {
      if !Self.isExpectedOfRecorder(error) { journal.problem("the store's history: unexpected error \(error)") }
    }
  }

  /// A session of the scope's history, by one task at a time: a few steps (sometimes as one group), then undos and
  /// redos, sometimes a clear.
  func undoSessionOp(op: Int, _ generator: inout SeededGenerator) async {
    guard let histories,
      histories.busy.withLock({ busy in
        defer { busy = true }
        return !busy
      })
    else { return }
    defer { histories.busy.withLock { $0 = false } }
    let history = histories.session
    let scope = sessionScope
    var group: Int?
    if generator.next() % 3 == 0 {
      group = histories.nextGroup.withLock { next in
        defer { next += 1 }
        return next
      }
      FuzzCoverage.note(.undoBeginGroup)
      history.beginGroup()
    }
    for nested in 1...Int(generator.next() % 3 + 1) {
      let result = await outcome { try await scope.dispatch(OracleSessionStep(op: op + nested, group: group)) }
      record(
        op: op + nested, target: "session (a step of the scope's history)", awaited: true, result: result,
        tick: journal.tick())
    }
    if group != nil {
      FuzzCoverage.note(.undoEndGroup)
      history.endGroup()
    }
    for _ in 0..<Int(generator.next() % 4) {
      let undoes = generator.next() % 3 != 0
      FuzzCoverage.note(undoes ? .undoOnScope : .redoOnScope)
      do {
        _ = undoes ? try await history.undo(on: scope) : try await history.redo(on: scope)
      } catch {
        if !Self.isExpectedOfRecorder(error) { journal.problem("the session's history: unexpected error \(error)") }
      }
    }
    if generator.next() % 8 == 0 {
      _ = try? await store.dispatch(OracleClearSession(op: op + 9))
    }
  }
}

extension OracleModel {
  /// SPEC 4.10: each undo and redo commit leaves the state its history's plain twin replays to, the twin being fed the
  /// same commits in the same order (moves in time are no commit of a history), and cleared right after the commit of
  /// an ``OracleClearSession`` as the session's history is.
  func checkUndo(
    tapped: [(item: any Dispatchable & Sendable, after: OracleState)], histories: OracleHistories?,
    sessionScope: ScopeID
  ) -> [String] {
    guard let histories else { return [] }
    var failures: [String] = []
    let root = ObjectIdentifier(histories.root)
    let session = ObjectIdentifier(histories.session)
    var rootTwin = UndoModel<OracleState>(
      stepLimit: OracleHistories.rootLimits.steps, commitLimit: OracleHistories.rootLimits.commits, base: commits[0])
    var sessionTwin = UndoModel<OracleState>(
      stepLimit: OracleHistories.sessionLimits.steps, commitLimit: OracleHistories.sessionLimits.commits,
      base: commits[0])
    var lastGroup: Int?
    for (offset, entry) in tapped.enumerated() {
      let index = offset + 1
      guard index < commits.count else { break }
      let before = commits[index - 1]
      let item = entry.item
      guard !(item is TimeTravelCommand<OracleState>), let updater = item as? any AnyStateUpdater else { continue }
      let base = (item as? any ScopedDispatchable)?.base ?? item
      let apply: (inout OracleState) -> Void = { state in
        try? StoreCore<OracleState, OracleDependencies>.applyErased(updater, to: &state)
      }
      if let command = base as? any HistoryCommand, let owner = command.historyIdentity,
        owner == root || owner == session
      {
        let isRoot = owner == root
        let kind = (command as? UndoCommand<OracleState>)?.kind ?? (command as? UndoCommand<OracleCell>)?.kind ?? .undo
        var twin = isRoot ? rootTwin : sessionTwin
        let changed = kind == .undo ? twin.undo() : twin.redo()
        let what =
          "commit \(index), \(kind == .undo ? "an undo" : "a redo") of the \(isRoot ? "store's" : "session's") history"
        if !changed {
          if commits[index] != before { failures.append("\(what) changed the state, but its twin had nothing to do") }
        } else if isRoot, commits[index] != twin.state {
          failures.append("\(what) leaves \(commits[index]), its twin replays to \(twin.state)")
        } else if !isRoot, commits[index].session != twin.state.session {
          failures.append(
            "\(what) leaves the session at \(commits[index].session), its twin replays it to \(twin.state.session)")
        }
        if isRoot { rootTwin = twin } else { sessionTwin = twin }
        // The other history sees it as a commit that sets a value.
        if isRoot { sessionTwin.commit(isStep: false, apply) } else { rootTwin.commit(isStep: false, apply) }
        continue
      }
      let isCommand = base is any HistoryCommand
      rootTwin.commit(isStep: !isCommand, apply)
      let sessionStep = (item as? any ScopedDispatchable)?.scope == sessionScope && !isCommand
      if sessionStep, let step = base as? OracleSessionStep {
        // Steps tagged with one group are one step; a step outside any group, or of another group, starts another.
        if step.group == nil || step.group != lastGroup { sessionTwin.grouping = false }
        if step.group != nil { sessionTwin.grouping = true }
        lastGroup = step.group
      }
      sessionTwin.commit(isStep: sessionStep, apply)
      if base is OracleClearSession, histories.clears {
        // Cleared right after this commit: the history keeps the state it replays to as its base, and no step.
        sessionTwin = UndoModel(
          stepLimit: OracleHistories.sessionLimits.steps, commitLimit: OracleHistories.sessionLimits.commits,
          base: sessionTwin.state)
        lastGroup = nil
      }
    }
    return failures
  }
}
