// The state, updaters and side effects the observation fuzzer drives (see ObservationFuzzTests.swift).
//
// Every commit raises `OracleState.version` by exactly one, whoever makes it (the root or any scope): each updater
// bumps the `seq` of the one cell it owns, and a root updater that removes a cell moves that cell's `seq` into
// `retired`. So any state, read from anywhere (`store.state` before and after a subscription, a listener's `new`),
// says at which commit of the log it is, although scoped updaters never touch the root's fields.
import Katana
import KatanaTestSupport

/// A slice the fuzzer observes: a feature's state, an optional child, or an element of an identified collection.
/// `born` (the root commit that created it) and `seq` make every value a cell takes over a run distinct.
struct OracleCell: State, Equatable, Identifiable, CustomStringConvertible {
  var id = 0
  var seq = 0
  var lastOp = 0
  var born = 0

  var description: String { "{id \(id) seq \(seq) op \(lastOp) born \(born)}" }
}

/// A feature that holds a feature: scoped twice.
struct OracleOuter: State, Equatable {
  var inner = OracleCell()
}

/// Two features whose state structs are empty (zero-size fields), each with its own effect-id namespace.
struct OracleEmptyA: State, Equatable {}
struct OracleEmptyB: State, Equatable {}

struct OracleState: State, Equatable, CustomStringConvertible {
  var seq = 0
  var lastOp = 0
  /// The `seq` of cells that root updaters removed, so that `version` never goes back.
  var retired = 0
  var feature = OracleCell()
  var outer = OracleOuter()
  var child: OracleCell?
  var items: [OracleCell] = []
  var emptyA = OracleEmptyA()
  var emptyB = OracleEmptyB()
  /// The slice of the undo session (``OracleWorld/undoSessionOp(op:_:)``), which nothing else changes.
  var session = OracleCell()

  /// The number of operations' commits since start-up (undos and moves in time set it back and forth).
  var version: Int {
    seq + retired + feature.seq + outer.inner.seq + (child?.seq ?? 0) + items.reduce(0) { $0 + $1.seq } + session.seq
  }

  /// What the state initializer produces: unlike `OracleState()`, it has elements, and its feature differs from
  /// `OracleCell()` (an observer added before start-up must not be called for the difference).
  static let startUp = OracleState(
    feature: OracleCell(born: -100), items: [OracleCell(id: 1, born: -1), OracleCell(id: 2, born: -2)])

  var description: String {
    "v\(version) root \(seq)/op \(lastOp) feature \(feature) inner \(outer.inner) child \(child.map(\.description) ?? "nil") "
      + "items \(items.map(\.description)) session \(session)"
  }

  /// The operation that made the commit from `old` to `self` (negative: an interceptor's substitute), or nil if no
  /// single cell was bumped.
  func committedOp(from old: OracleState) -> Int? {
    if seq != old.seq { return lastOp }
    if feature.seq != old.feature.seq { return feature.lastOp }
    if outer.inner.seq != old.outer.inner.seq { return outer.inner.lastOp }
    if let child, let oldChild = old.child, child.seq != oldChild.seq { return child.lastOp }
    if session.seq != old.session.seq { return session.lastOp }
    guard items.count == old.items.count else { return nil }
    for (element, oldElement) in zip(items, old.items) where element.seq != oldElement.seq {
      return element.lastOp
    }
    return nil
  }
}

/// An updater the interceptor recognises by its operation number.
protocol OracleOperation: Dispatchable {
  var op: Int { get }
}

/// A root bump; invertible, so that the store's undo history undoes it in place when it is the latest commit (its
/// undos are checked against the replaying twin like every other).
struct OracleRootBump: InvertibleStateUpdater, OracleOperation {
  let op: Int
  func updateState(_ state: inout OracleState) -> OracleRootUnbump {
    let inverse = OracleRootUnbump(lastOp: state.lastOp)
    state.seq += 1
    state.lastOp = op
    return inverse
  }
}

/// The inverse of ``OracleRootBump``: only the store's undo history applies it.
struct OracleRootUnbump: StateUpdater {
  let lastOp: Int
  func updateState(_ state: inout OracleState) {
    state.seq -= 1
    state.lastOp = lastOp
  }
}

/// Presents the optional child, or dismisses it.
struct OracleToggleChild: StateUpdater, OracleOperation {
  let op: Int
  func updateState(_ state: inout OracleState) {
    state.seq += 1
    state.lastOp = op
    if let child = state.child {
      state.retired += child.seq
      state.child = nil
    } else {
      state.child = OracleCell(id: 0, seq: 0, lastOp: op, born: state.seq)
    }
  }
}

/// Removes the first element with identifier `id`, or inserts a new one at a place that depends on `op`.
struct OracleToggleItem: StateUpdater, OracleOperation {
  let op: Int
  let id: Int
  func updateState(_ state: inout OracleState) {
    state.seq += 1
    state.lastOp = op
    if let index = state.items.firstIndex(where: { $0.id == id }) {
      state.retired += state.items[index].seq
      state.items.remove(at: index)
    } else {
      let cell = OracleCell(id: id, seq: 0, lastOp: op, born: state.seq)
      state.items.insert(cell, at: abs(op) % (state.items.count + 1))
    }
  }
}

/// A feature's updater: bumps the slice it is dispatched to.
struct OracleBumpCell: StateUpdater, OracleOperation {
  let op: Int
  func updateState(_ state: inout OracleCell) {
    state.seq += 1
    state.lastOp = op
  }
}

/// A root bump that returns the state its own commit produced (a `ReturningStateUpdater`): the model checks the value
/// is exactly the commit log's state at that commit.
struct OracleReturningRootBump: ReturningStateUpdater, OracleOperation {
  let op: Int
  func updateState(_ state: inout OracleState) -> OracleState {
    state.seq += 1
    state.lastOp = op
    return state
  }
}

/// A feature's bump that returns the slice its own commit produced.
struct OracleReturningBumpCell: ReturningStateUpdater, OracleOperation {
  let op: Int
  func updateState(_ state: inout OracleCell) -> OracleCell {
    state.seq += 1
    state.lastOp = op
    return state
  }
}

/// What a returning updater's awaited dispatch gave back, for the model to check against the commit log.
struct OracleReturned: Sendable {
  enum Value: Sendable {
    /// The root's state.
    case root(OracleState)
    /// A feature's slice.
    case cell(OracleCell)
  }
  let op: Int
  /// nil: it threw `StoreError.returnValueUnavailable`.
  let value: Value?
  /// Which dispatch, for the failure message.
  let via: String
}

/// A step of the undo session: bumps the session's slice. `group` tags the steps made inside one `beginGroup()` and
/// `endGroup()` pair (nil: outside any), so that the plain twin of the history knows which steps are one.
struct OracleSessionStep: StateUpdater, OracleOperation {
  let op: Int
  let group: Int?
  func updateState(_ state: inout OracleCell) {
    state.seq += 1
    state.lastOp = op
  }
}

/// An element's updater that changes the element's identifier (through the element's own scope).
struct OracleRename: StateUpdater, OracleOperation {
  let op: Int
  let to: Int
  func updateState(_ state: inout OracleCell) {
    state.seq += 1
    state.lastOp = op
    state.id = to
  }
}

/// A side effect of the root that hands on root bumps, each its own way (``OracleWay``), possibly under an id.
struct OracleRootWork: SideEffect {
  let nested: [Int]
  let ways: [OracleWay]
  let runID: Int?
  let cancelInFlight: Bool
  let bodies: OracleBodies
  /// Told what each operation's call did; nil for a nested one, whose outer call reports it.
  var report: OracleReport?

  func sideEffect(_ context: SideEffectContext<OracleState, OracleDependencies>) async throws {
    FuzzCoverage.note(.contextGetState)
    FuzzCoverage.note(.contextGetAnyState)
    _ = (context.getState(), context.getAnyState())
    let body: @Sendable () async throws -> Void = {
      bodies.started.withLock { $0 += 1 }
      defer { bodies.finished.increment() }
      for (op, way) in zip(nested, ways) {
        do {
          try await context.hand(op, way, bodies: bodies)
          report?(op, .success(()))
        } catch {
          report?(op, .failure(error))
          throw error
        }
      }
    }
    if let runID {
      FuzzCoverage.note(.anyContextRun)
      try await context.run(id: runID, cancelInFlight: cancelInFlight, operation: body)
    } else {
      try await body()
    }
  }
}

/// Counts the bodies of `OracleRootWork`: one cancelled by id returns to its caller at once, while its operation may
/// still be committing; the run waits for them all before it shuts the store down. Also keeps what every returning
/// updater's dispatch gave back (from the run's operations and from side effects' bodies), which the model checks.
final class OracleBodies: Sendable {
  let started = LockedValue(0)
  let finished = EventCounter()
  let returned = LockedValue<[OracleReturned]>([])

  /// Runs a returning updater's dispatch of operation `op`, and keeps what it gave back. A value that could not be
  /// produced is kept as nil, and the call returns normally: whether that was legitimate (the item itself never
  /// committed) is the model's to check, and the operation's commits are checked as those of any dispatch that
  /// returned normally (an interceptor's substitute for it committed, or, for a `next` called from a task the
  /// interceptor did not await, possibly nothing).
  func returning(op: Int, via: String, _ dispatch: () async throws -> OracleReturned.Value) async throws {
    let value: OracleReturned.Value?
    do {
      value = try await dispatch()
    } catch StoreError.returnValueUnavailable {
      value = nil
    }
    returned.withLock { $0.append(OracleReturned(op: op, value: value, via: via)) }
  }
}

/// A feature's side effect: hands on its updaters through the context (which goes through the scope), each its own
/// way (``OracleWay``).
struct OracleCellWork: SideEffect {
  let nested: [Int]
  let ways: [OracleWay]
  /// Told what each operation's call did; nil for a nested one, whose outer call reports it.
  var report: OracleReport?
  /// Where a returning updater's value goes; nil: the way `.returningUpdater` dispatches a plain bump instead.
  var bodies: OracleBodies?

  func sideEffect(_ context: SideEffectContext<OracleCell, OracleDependencies>) async throws {
    FuzzCoverage.note(.contextGetStateIfPresent)
    FuzzCoverage.note(.contextGetState)
    _ = (context.getStateIfPresent(), context.getState())
    for (op, way) in zip(nested, ways) {
      do {
        try await context.hand(op, way, bodies: bodies)
        report?(op, .success(()))
      } catch {
        report?(op, .failure(error))
        throw error
      }
    }
  }
}

/// Cancels, from inside a side effect, the runs of the root's side effects under an id.
struct OracleCancelRuns: SideEffect {
  let id: Int
  func sideEffect(_ context: SideEffectContext<OracleState, OracleDependencies>) async throws {
    FuzzCoverage.note(.anyContextCancelID)
    context.cancel(id: id)
  }
}

/// Identifiers of the runs the fuzzer starts to check cancellation by id; a type of its own, so that no other work
/// of the fuzzer runs under them.
struct OracleRunID: Hashable, Sendable {
  let value: Int
}

/// Runs under `id` in whatever scope it is dispatched through and records when it started.
struct OracleMarkedRun<S: State>: SideEffect {
  let id: OracleRunID
  let marker: Int
  /// The tick at which each marked run's operation started.
  let started: LockedValue<[Int: Int]>
  /// The tick at which each marked run's side effect began, before it asked to run under its id.
  let began: LockedValue<[Int: Int]>
  let tick: @Sendable () -> Int

  func sideEffect(_ context: SideEffectContext<S, OracleDependencies>) async throws {
    let now = tick()
    began.withLock { $0[marker] = now }
    try await context.run(id: id) {
      let now = tick()
      started.withLock { $0[marker] = now }
      await Task.yield()
    }
  }
}

struct OracleError: Error, Equatable {
  let op: Int
}

typealias OracleStore = Store<OracleState, OracleDependencies>
typealias OracleScope = ScopedStore<OracleCell, OracleDependencies>
