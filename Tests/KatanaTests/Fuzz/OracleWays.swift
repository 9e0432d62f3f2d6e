// Every way a side effect hands an operation's updater to the store, as the observation fuzzer drives them: the typed
// context's dispatch and send, their type-erased forms, the dependency container's dispatch function, a nested side
// effect (awaited or sent), and a returning side effect (whose erased context dispatches, sends, or nests another),
// awaited or sent. Each operation's outcome is reported, so that the model checks every one of them commits exactly
// once when its call returned normally, and never when it threw.
import KatanaTestSupport

@testable import Katana

/// The fuzzer's dependency container: it keeps the store's dispatch function, when the store gave one.
final class OracleDependencies: SideEffectDependencyContainer {
  /// The store's type-erased dispatch, as `Store.init` hands it to the container.
  let dispatch: AnyDispatch?
  let getState: GetState?

  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    FuzzCoverage.note(.containerInitDispatch)
    self.dispatch = dispatch
    self.getState = getState
  }

  /// A container built before the store, which gives it no dispatch function.
  init() {
    dispatch = nil
    getState = nil
  }
}

/// How a side effect's body hands on one operation.
enum OracleWay: CaseIterable, Sendable {
  case typed, erased, send, anySend, container, nested, sendNested, returning, sendReturning
  /// A returning updater (`OracleReturningRootBump`, `OracleReturningBumpCell`), its value kept for the model.
  case returningUpdater

  static func pick(_ generator: inout SeededGenerator) -> OracleWay {
    // The typed dispatch half the time, as most code does.
    if generator.next() % 2 == 0 { return .typed }
    return allCases[Int(generator.next() % UInt64(allCases.count))]
  }
}

/// What a side effect's body reports of each operation it handed on: whether its call returned normally.
typealias OracleReport = @Sendable (_ op: Int, _ result: Result<Void, any Error>) -> Void

/// A returning side effect's value was not what it returns.
struct OracleWrongValue: Error, CustomStringConvertible {
  let expected: Int
  let got: Int
  var description: String { "a returning side effect returned \(got), not \(expected)" }
}

/// A returning side effect that hands on the operation `op` through its type-erased context (a root bump, or a bump of
/// the scope it was dispatched through) and returns `op`. Not an `OracleOperation`: interceptors pass it on.
struct OracleReturningWork: ReturningSideEffect {
  let op: Int
  let scoped: Bool
  /// How it hands the operation on: 0 `anyDispatch`, 1 `anySend`, 2 a nested returning side effect.
  let how: Int

  func sideEffect(_ context: any AnySideEffectContext) async throws -> Int {
    FuzzCoverage.note(.anyContextGetAnyState)
    _ = context.getAnyState()
    let item: any Dispatchable = scoped ? OracleBumpCell(op: op) : OracleRootBump(op: op)
    switch how {
    case 0:
      FuzzCoverage.note(.anyContextAnyDispatch)
      _ = try await context.anyDispatch(item)
    case 1:
      FuzzCoverage.note(.anyContextAnySend)
      _ = try await context.anySend(item).value
    default:
      FuzzCoverage.note(.anyContextDispatchReturning)
      let value = try await context.dispatch(OracleReturningWork(op: op, scoped: scoped, how: 0))
      if value != op { throw OracleWrongValue(expected: op, got: value) }
    }
    return op
  }
}

extension SideEffectContext where S == OracleState, D == OracleDependencies {
  /// Hands on root bump `op` the way `way` says; returns when its call did (for a send, when its handle had).
  func hand(_ op: Int, _ way: OracleWay, bodies: OracleBodies) async throws {
    switch way {
    case .typed:
      FuzzCoverage.note(.contextDispatchUpdater)
      try await dispatch(OracleRootBump(op: op))
    case .erased:
      FuzzCoverage.note(.contextAnyDispatch)
      _ = try await anyDispatch(OracleRootBump(op: op))
    case .send:
      FuzzCoverage.note(.contextSendUpdater)
      FuzzCoverage.note(.handleValue)
      try await send(OracleRootBump(op: op)).value
    case .anySend:
      FuzzCoverage.note(.contextAnySend)
      _ = try await anySend(OracleRootBump(op: op)).value
    case .container:
      guard let dispatch = dependencies.dispatch else { return try await hand(op, .typed, bodies: bodies) }
      _ = try await dispatch(OracleRootBump(op: op))
    case .nested:
      FuzzCoverage.note(.contextDispatchSideEffect)
      try await dispatch(
        OracleRootWork(nested: [op], ways: [.typed], runID: nil, cancelInFlight: false, bodies: bodies))
    case .sendNested:
      FuzzCoverage.note(.contextSendSideEffect)
      try await send(OracleRootWork(nested: [op], ways: [.typed], runID: nil, cancelInFlight: false, bodies: bodies))
        .value
    case .returning:
      FuzzCoverage.note(.contextDispatchReturning)
      let value = try await dispatch(OracleReturningWork(op: op, scoped: false, how: op % 3))
      if value != op { throw OracleWrongValue(expected: op, got: value) }
    case .sendReturning:
      FuzzCoverage.note(.contextSendReturning)
      let value = try await send(OracleReturningWork(op: op, scoped: false, how: op % 3)).value
      if value != op { throw OracleWrongValue(expected: op, got: value) }
    case .returningUpdater:
      FuzzCoverage.note(.contextDispatchReturningUpdater)
      try await bodies.returning(op: op, via: "a root side effect's context") {
        .root(try await dispatch(OracleReturningRootBump(op: op)))
      }
    }
  }
}

extension SideEffectContext where S == OracleCell, D == OracleDependencies {
  /// Hands on a bump of this feature's cell (a root bump for the container's dispatch, which is the store's) the way
  /// `way` says; a returning updater's value goes to `bodies` (without it, a plain bump is dispatched).
  func hand(_ op: Int, _ way: OracleWay, bodies: OracleBodies? = nil) async throws {
    switch way {
    case .typed:
      FuzzCoverage.note(.contextDispatchUpdater)
      try await dispatch(OracleBumpCell(op: op))
    case .erased:
      FuzzCoverage.note(.contextAnyDispatch)
      _ = try await anyDispatch(OracleBumpCell(op: op))
    case .send:
      FuzzCoverage.note(.contextSendUpdater)
      try await send(OracleBumpCell(op: op)).value
    case .anySend:
      FuzzCoverage.note(.contextAnySend)
      _ = try await anySend(OracleBumpCell(op: op)).value
    case .container:
      guard let dispatch = dependencies.dispatch else { return try await hand(op, .typed) }
      _ = try await dispatch(OracleRootBump(op: op))
    case .nested:
      FuzzCoverage.note(.contextDispatchSideEffect)
      try await dispatch(OracleCellWork(nested: [op], ways: [.typed]))
    case .sendNested:
      FuzzCoverage.note(.contextSendSideEffect)
      try await send(OracleCellWork(nested: [op], ways: [.typed])).value
    case .returning:
      FuzzCoverage.note(.contextDispatchReturning)
      let value = try await dispatch(OracleReturningWork(op: op, scoped: true, how: op % 3))
      if value != op { throw OracleWrongValue(expected: op, got: value) }
    case .sendReturning:
      FuzzCoverage.note(.contextSendReturning)
      let value = try await send(OracleReturningWork(op: op, scoped: true, how: op % 3)).value
      if value != op { throw OracleWrongValue(expected: op, got: value) }
    case .returningUpdater:
      guard let bodies else { return try await hand(op, .typed) }
      FuzzCoverage.note(.contextDispatchReturningUpdater)
      try await bodies.returning(op: op, via: "a feature's side effect's context") {
        .cell(try await dispatch(OracleReturningBumpCell(op: op)))
      }
    }
  }
}

/// A root updater whose interceptor (``OracleHold/interceptor``) runs `action` while it holds the store's turn: what
/// the action sends then is certainly queued behind it.
struct OracleHold: StateUpdater {
  let op: Int
  let action: @Sendable () async -> Void
  func updateState(_ state: inout OracleState) {
    state.seq += 1
    state.lastOp = op
  }

  /// Runs a hold's action while its updater holds the turn; passes everything on.
  static let interceptor: StoreInterceptor = { _ in
    { next in
      { item in
        if let hold = item as? OracleHold { await hold.action() }
        try await next(item)
      }
    }
  }

  /// ``interceptor`` in the faster form, for the runs whose interceptors are all `DispatchInterceptor`s.
  struct Interceptor: DispatchInterceptor {
    func intercept(_ item: any Dispatchable, next: DispatchInterceptorNext) async throws {
      if let hold = item as? OracleHold { await hold.action() }
      try await next(item)
    }
  }
}

extension OracleWorld {
  /// Dispatches an ``OracleHold`` whose action, while it holds the turn, sends an updater (typed or erased, at the root
  /// or through a scope, mounted one way or another) and then either cancels it (it is queued: it must be withdrawn,
  /// never committed) or waits for it (the holder waits for what waits behind it: `StoreError.deadlock`, not a hang).
  func holdOp(op: Int, _ generator: inout SeededGenerator) async {
    guard hasHoldInterceptor else { return }
    let target = target(op: op + 1, &generator)
    let erased = generator.next() % 2 == 0
    let waits = generator.next() % 3 == 0
    let ran = LockedValue(false)
    let hold = OracleHold(op: op) { [self] in
      ran.withLock { $0 = true }
      let before = journal.tick()
      let handle = send(target, erased: erased)
      let after = journal.tick()
      let what = target.name + (erased ? " (erased)" : "")
      if waits {
        // Awaited from the task that holds the turn, it could only be handled after the turn is released.
        let result = await handle.result()
        // A deadlock error, or the store's when it shut down meanwhile.
        if case .failure(StoreError.storeShutDown) = result { return }
        guard case .failure(StoreError.deadlock) = result else {
          return journal.problem("op \(op + 1) to \(what), awaited by the holder of the turn, gave \(result)")
        }
        sent.withLock {
          $0.append(
            OracleSent(
              op: op + 1, target: what + ", awaited by the holder of the turn", behaviour: behaviour(op + 1),
              entered: before...after, cancelled: false, handle: handle))
        }
        return
      }
      handle.cancel()
      // Withdrawn, it has failed already: waiting here (the holder of the turn) for one that was not would never end.
      guard let result = handle.peek() else {
        return journal.problem(
          "op \(op + 1) to \(what), sent and cancelled while another updater held the turn, was not withdrawn: its "
            + "handle has not completed")
      }
      var error: String?
      if case .failure(let failure) = result { error = String(describing: failure) }
      var record = OracleDispatchRecord(
        op: op + 1, target: what + ", sent and cancelled while another updater held the turn", awaited: false,
        behaviour: behaviour(op + 1), returnTick: journal.tick(), error: error)
      record.mustBeWithdrawn = true
      journal.dispatches.withLock { $0.append(record) }
    }
    // Handled, the hold went through the hold interceptor (whichever its form), which ran its action.
    if case .success = await outcome({ try await store.dispatch(hold) }), !ran.withLock({ $0 }) {
      journal.problem("op \(op): the hold was committed without its interceptor running its action")
    }
  }
}
