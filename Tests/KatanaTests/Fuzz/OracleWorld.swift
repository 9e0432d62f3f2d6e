// One store of the observation fuzzer and everything that acts on it: the operations tasks and threads run, the
// observers they add and remove, the interceptor. Each operation records what it did in the journal.
import Foundation
import KatanaTestSupport

@testable import Katana

#if canImport(Observation)
  import Observation
#endif

/// A sent item, awaited at the end of the run.
struct OracleSent: Sendable {
  let op: Int
  let target: String
  let behaviour: OracleBehaviour
  /// Ticks taken just before `send` was called and once it returned: the item entered the mailbox in between.
  let entered: ClosedRange<Int>
  /// Whether its handle was cancelled right after the send.
  let cancelled: Bool
  let handle: OracleHandle
}

/// A handle of a sent item, typed (`send`) or type-erased (`anySend`).
struct OracleHandle: Sendable {
  let result: @Sendable () async -> Result<Void, any Error>
  let cancel: @Sendable () -> Void
  /// The outcome if the item has been handled already; nil if it has not (without waiting).
  let peek: @Sendable () -> Result<Void, any Error>?

  init(_ handle: DispatchHandle<Void>) {
    peek = { Self.peek(handle) }
    result = {
      FuzzCoverage.note(.handleResult)
      return await handle.result
    }
    cancel = {
      FuzzCoverage.note(.handleCancel)
      handle.cancel()
    }
  }

  init(_ handle: DispatchHandle<any Sendable>) {
    peek = { Self.peek(handle) }
    result = {
      FuzzCoverage.note(.handleValue)
      do {
        _ = try await handle.value
        return .success(())
      } catch {
        return .failure(error)
      }
    }
    cancel = {
      FuzzCoverage.note(.handleCancel)
      handle.cancel()
    }
  }

  /// The handle of a sent returning side effect that returns `op`: its value is checked, and reported.
  /// The outcome of `handle` if it has completed, read without waiting.
  static func peek<Value>(_ handle: DispatchHandle<Value>) -> Result<Void, any Error>? {
    let outcome = LockedValue<Result<Void, any Error>?>(nil)
    // Called at once, on this thread, if the handle has completed.
    handle.whenComplete { result in outcome.withLock { $0 = result.map { _ in () } } }
    return outcome.withLock { $0 }
  }

  init(returning handle: DispatchHandle<Int>, op: Int, report: @escaping OracleReport) {
    peek = { Self.peek(handle) }
    result = {
      let result = OracleWorld.checked(await handle.result, op: op)
      report(op, result)
      return result
    }
    cancel = { handle.cancel() }
  }
}

/// A run started for a cancellation check, awaited at the end of the run.
struct OraclePendingRun: Sendable {
  let marker: Int
  let description: String
  let mustNotStart: Bool
  let sentTick: Int
  let cancelledTick: Int
  let handle: DispatchHandle<Void>
}

final class OracleWorld: Sendable {
  let seed: UInt64
  let store: OracleStore
  let journal: OracleJournal
  let intercepted: Bool
  let scopes: [OracleSlice: OracleScope]
  let emptyA: ScopedStore<OracleEmptyA, OracleDependencies>
  let emptyB: ScopedStore<OracleEmptyB, OracleDependencies>
  /// The features mounted with an output handler, which dispatches a root bump per output: at a field, an optional
  /// field and an element, from the store and from a scope of its whole state.
  let outputs: [OracleScope]
  /// Other scopes of the same slices, mounted another way (through a scope of the whole state): `scope(for:op:)`
  /// picks one of them or the main one.
  let alternates: [OracleSlice: [OracleScope]]
  /// Whether the store has ``OracleHold``'s interceptor (runs with interceptors do).
  let hasHoldInterceptor: Bool
  /// Whether the run has no commit log (and no listener at all): see ``OracleJournal/localFailures(finalState:)``.
  let unlogged: Bool
  /// The store's recorder, in runs that have one (time travel and drains need it).
  let recorder: StoreRecorder<OracleState>?
  /// The store's undo histories, in runs that have them.
  let histories: OracleHistories?
  /// The scope of the undo session's slice.
  let sessionScope: OracleScope
  let sent = LockedValue<[OracleSent]>([])
  /// The threads `raceSubscription` started, and how many of them have finished.
  let racers = LockedValue(0)
  let racersDone = EventCounter()
  /// Side effects sent from threads, awaited before the final shutdown so that nothing commits during it.
  let sentEffects = LockedValue<[OracleHandle]>([])
  let pendingRuns = LockedValue<[OraclePendingRun]>([])
  /// How to unsubscribe each observer that can be removed, by observer number.
  let removers = LockedValue<[Int: @Sendable () -> Void]>([:])
  /// The tasks consuming streams, and the functions that read what each `ObservableStore` ends showing.
  let consumers = LockedValue<[Task<Void, Never>]>([])
  let finishers = LockedValue<[@Sendable () async -> Void]>([])
  /// The calls of ``registerInCommitWindow()`` so far.
  let windowRegistrations = LockedValue(0)
  /// Record, just before the fence, whether each `ObservableStore` still follows the store (for failure messages).
  let followingProbes = LockedValue<[@Sendable () async -> Void]>([])

  static let slices: [OracleSlice] = [.feature, .inner, .child] + OracleSlice.itemIDs.map(OracleSlice.item)

  init(
    seed: UInt64, store: OracleStore, journal: OracleJournal, intercepted: Bool,
    recorder: StoreRecorder<OracleState>?, histories: OracleHistories?, hasHoldInterceptor: Bool, unlogged: Bool
  ) {
    self.hasHoldInterceptor = hasHoldInterceptor
    self.unlogged = unlogged
    self.seed = seed
    self.store = store
    self.journal = journal
    self.intercepted = intercepted
    self.recorder = recorder
    self.histories = histories
    sessionScope = store.scope(\.session, dependencies: \.self)
    let handler: FeatureOutputHandler<OracleOutput, OracleState, OracleDependencies> = { output, app in
      FuzzCoverage.note(.contextDispatchUpdater)
      try await app.dispatch(OracleRootBump(op: output.op))
    }
    // A scope of the whole state, from which the same slices are mounted again.
    let whole = store.scope(\.self, dependencies: \.self)
    FuzzCoverage.note(.storeScopeFieldOutputs)
    FuzzCoverage.note(.storeScopeOptionalOutputs)
    FuzzCoverage.note(.storeScopeElementOutputs)
    FuzzCoverage.note(.scopeScopeFieldOutputs)
    FuzzCoverage.note(.scopeScopeOptionalOutputs)
    FuzzCoverage.note(.scopeScopeElementOutputs)
    outputs = [
      store.scope(\.feature, dependencies: \.self, outputs: handler),
      store.scope(\.child, dependencies: \.self, outputs: handler),
      store.scope(\.items, id: 2, dependencies: \.self, outputs: handler),
      whole.scope(\.feature, dependencies: \.self, outputs: handler),
      whole.scope(\.child, dependencies: \.self, outputs: handler),
      whole.scope(\.items, id: 3, dependencies: \.self, outputs: handler),
    ]
    FuzzCoverage.note(.storeScopeField)
    FuzzCoverage.note(.storeScopeOptional)
    FuzzCoverage.note(.storeScopeElement)
    FuzzCoverage.note(.scopeScopeField)
    FuzzCoverage.note(.scopeScopeOptional)
    FuzzCoverage.note(.scopeScopeElement)
    var scopes: [OracleSlice: OracleScope] = [:]
    var alternates: [OracleSlice: [OracleScope]] = [:]
    scopes[.feature] = store.scope(\.feature, dependencies: \.self)
    alternates[.feature] = [whole.scope(\.feature, dependencies: \.self)]
    scopes[.inner] = store.scope(\.outer, dependencies: \.self).scope(\.inner, dependencies: \.self)
    alternates[.inner] = [whole.scope(\.outer, dependencies: \.self).scope(\.inner, dependencies: \.self)]
    scopes[.child] = store.scope(\.child, dependencies: \.self)
    alternates[.child] = [whole.scope(\.child, dependencies: \.self)]
    for id in OracleSlice.itemIDs {
      scopes[.item(id)] = store.scope(\.items, id: id, dependencies: \.self)
      alternates[.item(id)] = [whole.scope(\.items, id: id, dependencies: \.self)]
    }
    self.scopes = scopes
    self.alternates = alternates
    emptyA = store.scope(\.emptyA, dependencies: \.self)
    emptyB = store.scope(\.emptyB, dependencies: \.self)
  }

  /// The commit the store is at, as far as a caller can tell; -1 before start-up. (A store that has shut down is not
  /// ready either, but stays at its last commit.) The store's own count of its commits: undos and moves in time make
  /// states repeat, so no state says where in the log it is.
  func position() -> Int {
    store.isReady || journal.shutdownTick.current != nil ? Int(store.core.withLock { $0.commitCount }) : -1
  }

  // MARK: - Updaters

  /// The scope through which operation `op` reaches `slice`: the main one, or one mounted another way.
  func scope(for slice: OracleSlice, op: Int) -> OracleScope {
    let choices = [scopes[slice]!] + (alternates[slice] ?? [])
    return choices[(op / 10) % choices.count]
  }

  /// An updater for an operation, at the root or through a scope.
  enum Target {
    case rootBump(op: Int)
    /// A root updater that Katana 6's observer interceptor (in runs that install it) reacts to.
    case trigger(op: Int)
    case toggleChild(op: Int)
    case toggleItem(op: Int, id: Int)
    case bump(OracleSlice, op: Int)
    case rename(OracleSlice, op: Int, to: Int)

    /// Whether the updater is the root's (not a scope's).
    var isRoot: Bool {
      switch self {
      case .rootBump, .trigger, .toggleChild, .toggleItem: true
      case .bump, .rename: false
      }
    }

    var name: String {
      switch self {
      case .rootBump: "root (OracleRootBump)"
      case .trigger: "root (OracleTrigger)"
      case .toggleChild: "root (OracleToggleChild)"
      case .toggleItem(_, let id): "root (OracleToggleItem id \(id))"
      case .bump(let slice, _): "\(slice) (OracleBumpCell)"
      case .rename(let slice, _, let to): "\(slice) (OracleRename to \(to))"
      }
    }
  }

  func target(op: Int, _ generator: inout SeededGenerator) -> Target {
    let features = OracleFeatures.current
    switch generator.next() % 10 {
    case 0, 1: return .rootBump(op: op)
    case 2: return generator.next() % 2 == 0 ? .trigger(op: op) : .rootBump(op: op)
    case 3: return features.appearing ? .toggleChild(op: op) : .rootBump(op: op)
    case 4: return features.appearing ? .toggleItem(op: op, id: Int(generator.next() % 6) + 1) : .rootBump(op: op)
    case 5: return .bump(.feature, op: op)
    case 6: return .bump(.inner, op: op)
    case 7: return .bump(.child, op: op)
    default:
      let id = Int(generator.next() % 6) + 1
      if generator.next() % 2 == 0, features.renames { return .rename(.item(id), op: op, to: OracleSlice.renamed(id)) }
      return .bump(.item(id), op: op)
    }
  }

  func behaviour(_ op: Int) -> OracleBehaviour { OracleBehaviour.of(op, seed: seed, intercepted: intercepted) }

  /// Dispatches `target`'s updater, typed, or type-erased (`anyDispatch`: the same route, checked at run time).
  func dispatch(_ target: Target, erased: Bool) async throws {
    guard erased else {
      FuzzCoverage.note(target.isRoot ? .storeDispatchUpdater : .scopeDispatchUpdater)
      switch target {
      case .rootBump(let op): try await store.dispatch(OracleRootBump(op: op))
      case .trigger(let op): try await store.dispatch(OracleTrigger(op: op))
      case .toggleChild(let op): try await store.dispatch(OracleToggleChild(op: op))
      case .toggleItem(let op, let id): try await store.dispatch(OracleToggleItem(op: op, id: id))
      case .bump(let slice, let op): try await scope(for: slice, op: op).dispatch(OracleBumpCell(op: op))
      case .rename(let slice, let op, let to):
        try await scope(for: slice, op: op).dispatch(OracleRename(op: op, to: to))
      }
      return
    }
    FuzzCoverage.note(target.isRoot ? .storeAnyDispatch : .scopeAnyDispatch)
    switch target {
    case .rootBump(let op): _ = try await store.anyDispatch(OracleRootBump(op: op))
    case .trigger(let op): _ = try await store.anyDispatch(OracleTrigger(op: op))
    case .toggleChild(let op): _ = try await store.anyDispatch(OracleToggleChild(op: op))
    case .toggleItem(let op, let id): _ = try await store.anyDispatch(OracleToggleItem(op: op, id: id))
    case .bump(let slice, let op): _ = try await scope(for: slice, op: op).anyDispatch(OracleBumpCell(op: op))
    case .rename(let slice, let op, let to):
      _ = try await scope(for: slice, op: op).anyDispatch(OracleRename(op: op, to: to))
    }
  }

  /// Sends `target`'s updater, typed, or type-erased (`anySend`, whose handle is the typed route's).
  func send(_ target: Target, erased: Bool) -> OracleHandle {
    guard erased else {
      FuzzCoverage.note(target.isRoot ? .storeSendUpdater : .scopeSendUpdater)
      switch target {
      case .rootBump(let op): return OracleHandle(store.send(OracleRootBump(op: op)))
      case .trigger(let op): return OracleHandle(store.send(OracleTrigger(op: op)))
      case .toggleChild(let op): return OracleHandle(store.send(OracleToggleChild(op: op)))
      case .toggleItem(let op, let id): return OracleHandle(store.send(OracleToggleItem(op: op, id: id)))
      case .bump(let slice, let op): return OracleHandle(scope(for: slice, op: op).send(OracleBumpCell(op: op)))
      case .rename(let slice, let op, let to):
        return OracleHandle(scope(for: slice, op: op).send(OracleRename(op: op, to: to)))
      }
    }
    FuzzCoverage.note(target.isRoot ? .storeAnySend : .scopeAnySend)
    switch target {
    case .rootBump(let op): return OracleHandle(store.anySend(OracleRootBump(op: op)))
    case .trigger(let op): return OracleHandle(store.anySend(OracleTrigger(op: op)))
    case .toggleChild(let op): return OracleHandle(store.anySend(OracleToggleChild(op: op)))
    case .toggleItem(let op, let id): return OracleHandle(store.anySend(OracleToggleItem(op: op, id: id)))
    case .bump(let slice, let op): return OracleHandle(scope(for: slice, op: op).anySend(OracleBumpCell(op: op)))
    case .rename(let slice, let op, let to):
      return OracleHandle(scope(for: slice, op: op).anySend(OracleRename(op: op, to: to)))
    }
  }

  /// An awaited dispatch of an updater, typed, type-erased, or (for a bump) a returning updater's, recorded with the
  /// ticks at which it started and returned.
  func awaitedDispatch(op: Int, _ generator: inout SeededGenerator) async {
    let target = target(op: op, &generator)
    let erased = generator.next() % 4 == 0
    let returning = !erased && generator.next() % 3 == 0
    if returning, let result = await dispatchReturning(target) {
      return record(op: op, target: target.name + " (returning)", awaited: true, result: result, tick: journal.tick())
    }
    let result = await outcome { try await dispatch(target, erased: erased) }
    record(
      op: op, target: target.name + (erased ? " (erased)" : ""), awaited: true, result: result, tick: journal.tick())
  }

  /// Dispatches the returning form of `target`'s bump (at the root or through a scope) and keeps its value for the
  /// model; nil for a target that has none.
  func dispatchReturning(_ target: Target) async -> Result<Void, any Error>? {
    switch target {
    case .rootBump(let op):
      FuzzCoverage.note(.storeDispatchReturningUpdater)
      return await outcome {
        try await journal.bodies.returning(op: op, via: "the store") {
          .root(try await store.dispatch(OracleReturningRootBump(op: op)))
        }
      }
    case .bump(let slice, let op):
      FuzzCoverage.note(.scopeDispatchReturningUpdater)
      return await outcome {
        try await journal.bodies.returning(op: op, via: "\(slice)'s scope") {
          .cell(try await scope(for: slice, op: op).dispatch(OracleReturningBumpCell(op: op)))
        }
      }
    case .trigger, .toggleChild, .toggleItem, .rename:
      return nil
    }
  }

  /// Sends an updater, typed or type-erased, and sometimes cancels its handle right away (it is then withdrawn, or
  /// applied if its turn came first: never both, never twice).
  func sendUpdater(op: Int, _ generator: inout SeededGenerator) {
    let target = target(op: op, &generator)
    let erased = generator.next() % 4 == 0
    let cancels = generator.next() % 6 == 0
    let before = journal.tick()
    let handle = send(target, erased: erased)
    let after = journal.tick()
    if cancels { handle.cancel() }
    sent.withLock {
      $0.append(
        OracleSent(
          op: op, target: target.name + (erased ? " (erased)" : "") + (cancels ? ", cancelled" : ""),
          behaviour: behaviour(op), entered: before...after, cancelled: cancels, handle: handle))
    }
  }

  /// Records what a dispatch of `op` did.
  ///
  /// - Parameters:
  ///   - behaviour: What the interceptor did with it (by default, what the seed says; `.pass` for an item that skips
  ///     the interceptors, a replay's).
  ///   - cancelled: Whether its handle was cancelled (it may then have failed with `CancellationError`).
  ///   - entered: For a send, the ticks taken just before `send` was called and once it returned: it entered the
  ///     store's mailbox in between. Refused as away from live, it must have been sent while a travel could be under
  ///     way: one asked for before it had certainly entered, and not over before it was sent. (An awaited dispatch
  ///     enters at some point before it returns, which no tick brackets: it is not checked.)
  func record(
    op: Int, target: String, awaited: Bool, behaviour: OracleBehaviour? = nil, cancelled: Bool = false,
    result: Result<Void, any Error>, entered: ClosedRange<Int>? = nil, tick: Int
  ) {
    let behaviour = behaviour ?? self.behaviour(op)
    var error: String?
    if case .failure(let failure) = result {
      error = String(describing: failure)
      if !Self.isExpected(failure, behaviour: behaviour, cancelled: cancelled) {
        journal.problem("op \(op) to \(target): unexpected error \(failure)")
      }
      if let entered, Self.isTimeTravelRefusal(failure), !journal.mayBeAway(sent: entered) {
        let windows = journal.awayWindows.current.map { "\($0.from)-\($0.to.map(String.init) ?? "...")" }
        journal.problem(
          "op \(op) to \(target): refused as away from live (\(failure)), but it entered the store's mailbox between "
            + "ticks \(entered.lowerBound) and \(entered.upperBound), before any travel not over by then was asked for "
            + "(travels, from the call of travel to the end of the return after it: \(windows))")
      }
    }
    journal.dispatches.withLock {
      $0.append(
        OracleDispatchRecord(
          op: op, target: target, awaited: awaited, behaviour: behaviour, returnTick: tick, error: error))
    }
  }

  static func isExpected(_ error: any Error, behaviour: OracleBehaviour, cancelled: Bool = false) -> Bool {
    if error is ScopeError || error is OracleSkipped { return true }
    if error is OracleError { return behaviour == .fail }
    if case ReplayError.updaterFailed(_, _, let underlying) = error {
      return isExpected(underlying, behaviour: behaviour, cancelled: cancelled)
    }
    if case StoreError.storeShutDown = error { return true }
    if isTimeTravelRefusal(error) { return true }
    if error is CancellationError { return cancelled }
    return false
  }

  /// Whether `error` is the store's refusal while away from live (time travel).
  static func isTimeTravelRefusal(_ error: any Error) -> Bool {
    if case TimeTravelError.awayFromLive = error { return true }
    if case ReplayError.updaterFailed(_, _, let underlying) = error { return isTimeTravelRefusal(underlying) }
    return false
  }

  // MARK: - Side effects and cancellation by id

  /// A report of what each operation a side effect handed on did: recorded as an awaited dispatch (the way's call
  /// returned once its commit was delivered), which a cancellation by id or a shutdown may have cancelled.
  func reporter(_ what: String) -> OracleReport {
    { [self] op, result in
      record(op: op, target: what, awaited: true, cancelled: true, result: result, tick: journal.tick())
    }
  }

  /// A side effect the seed picks, with its operations: at the root, through a feature's scope, or a returning one.
  enum Effect {
    case root(OracleRootWork)
    case cell(OracleScope, OracleCellWork)
    case returning(OracleScope?, OracleReturningWork)
  }

  func effect(op: Int, scopes choices: [OracleSlice], _ generator: inout SeededGenerator) -> Effect {
    let nested = (1...Int(generator.next() % 2 + 1)).map { op + $0 }
    let ways = nested.map { _ in OracleWay.pick(&generator) }
    let waysText = ways.map { "\($0)" }.joined(separator: ", ")
    switch generator.next() % 5 {
    case 0, 1:
      let runID = generator.next() % 2 == 0 ? Int(generator.next() % 3) : nil
      return .root(
        OracleRootWork(
          nested: nested, ways: ways, runID: runID, cancelInFlight: generator.next() % 2 == 0, bodies: journal.bodies,
          report: reporter("a root side effect's body (\(waysText))")))
    case 2, 3:
      let slice = choices[Int(generator.next() % UInt64(choices.count))]
      return .cell(
        scopes[slice]!,
        OracleCellWork(
          nested: nested, ways: ways, report: reporter("\(slice)'s side effect's body (\(waysText))"),
          bodies: journal.bodies))
    default:
      let scoped = generator.next() % 2 == 0
      let slice = choices[Int(generator.next() % UInt64(choices.count))]
      return .returning(
        scoped ? scopes[slice]! : nil, OracleReturningWork(op: op + 1, scoped: scoped, how: Int(generator.next() % 3)))
    }
  }

  /// Sends a side effect from synchronous code (a thread), without waiting for it.
  func sendSideEffect(op: Int, _ generator: inout SeededGenerator) {
    switch effect(op: op, scopes: [.feature, .inner, .child, .item(2)], &generator) {
    case .root(let work):
      FuzzCoverage.note(.storeSendSideEffect)
      sentEffects.withLock { $0.append(OracleHandle(store.send(work))) }
    case .cell(let scope, let work):
      FuzzCoverage.note(.scopeSendSideEffect)
      sentEffects.withLock { $0.append(OracleHandle(scope.send(work))) }
    case .returning(let scope, let work):
      let handle = scope.map { $0.send(work) } ?? store.send(work)
      FuzzCoverage.note(scope == nil ? .storeSendReturning : .scopeSendReturning)
      sentEffects.withLock { $0.append(OracleHandle(returning: handle, op: work.op, report: reporter("\(work)"))) }
    }
  }

  func sideEffect(op: Int, _ generator: inout SeededGenerator, awaited: Bool) async {
    let result: Result<Void, any Error>
    switch effect(op: op, scopes: [.feature, .inner, .child, .item(1)], &generator) {
    case .root(let work):
      FuzzCoverage.note(awaited ? .storeDispatchSideEffect : .storeSendSideEffect)
      result = awaited ? await outcome { try await store.dispatch(work) } : await store.send(work).result
    case .cell(let scope, let work):
      FuzzCoverage.note(awaited ? .scopeDispatchSideEffect : .scopeSendSideEffect)
      result = awaited ? await outcome { try await scope.dispatch(work) } : await scope.send(work).result
    case .returning(let scope, let work):
      let returned: Result<Int, any Error>
      if awaited {
        FuzzCoverage.note(scope == nil ? .storeDispatchReturning : .scopeDispatchReturning)
        do {
          if let scope {
            returned = .success(try await scope.dispatch(work))
          } else {
            returned = .success(try await store.dispatch(work))
          }
        } catch {
          returned = .failure(error)
        }
      } else {
        FuzzCoverage.note(scope == nil ? .storeSendReturning : .scopeSendReturning)
        FuzzCoverage.note(.handleResult)
        returned = await (scope.map { $0.send(work) } ?? store.send(work)).result
      }
      result = Self.checked(returned, op: work.op)
      record(op: work.op, target: "\(work)", awaited: true, cancelled: true, result: result, tick: journal.tick())
    }
    if case .failure(let error) = result, !(error is CancellationError), !Self.isExpected(error, behaviour: .fail) {
      journal.problem("side effect op \(op): unexpected error \(error)")
    }
  }

  /// A returning side effect's outcome, its value checked: it returns its operation.
  static func checked(_ returned: Result<Int, any Error>, op: Int) -> Result<Void, any Error> {
    returned.flatMap { value in value == op ? .success(()) : .failure(OracleWrongValue(expected: op, got: value)) }
  }

  /// Sends a run under an id and, right after it, a cancel of that id: from the same place (the run never starts,
  /// SPEC 4.7), or from another feature whose state is also empty (the run is not affected, SPEC 4.9).
  func runCheck(marker: Int, kind: UInt64) {
    let id = OracleRunID(value: marker)
    let started = journal.started
    let began = journal.began
    let tick: @Sendable () -> Int = { [journal] in journal.tick() }
    let sentTick = journal.tick()
    let readiness = store.isReady ? "" : " (sent before the store was ready)"
    let handle: DispatchHandle<Void>
    let description: String
    let mustNotStart: Bool
    let features = OracleFeatures.current
    let kinds: [UInt64] = (features.programOrder ? [0, 1] : []) + (features.emptyFeatures ? [2] : [])
    guard !kinds.isEmpty else { return }
    switch kinds[Int(kind % UInt64(kinds.count))] {
    case 0:
      handle = store.send(
        OracleMarkedRun<OracleState>(id: id, marker: marker, started: started, began: began, tick: tick))
      FuzzCoverage.note(.storeCancelID)
      store.cancel(id: id)
      description = "store.send(a run under id \(marker)), then store.cancel(id:)"
      mustNotStart = true
    case 1:
      let scope = scopes[.feature]!
      handle = scope.send(
        OracleMarkedRun<OracleCell>(id: id, marker: marker, started: started, began: began, tick: tick))
      FuzzCoverage.note(.scopeCancelID)
      scope.cancel(id: id)
      description = "feature.send(a run under id \(marker)), then feature.cancel(id:)"
      mustNotStart = true
    default:
      handle = emptyA.send(
        OracleMarkedRun<OracleEmptyA>(id: id, marker: marker, started: started, began: began, tick: tick))
      emptyB.cancel(id: id)
      description =
        "emptyA.send(a run under id \(marker)), then emptyB.cancel(id:) (scope ids \(emptyA.id) and \(emptyB.id))"
      mustNotStart = false
    }
    let cancelledTick = journal.tick()
    pendingRuns.withLock {
      $0.append(
        OraclePendingRun(
          marker: marker, description: description + readiness, mustNotStart: mustNotStart, sentTick: sentTick,
          cancelledTick: cancelledTick, handle: handle))
    }
  }

  // MARK: - Observers

  /// Sends updaters of `slice` from a new thread, so that their commits race the subscription about to be made
  /// (operations `op + 5` to `op + 9`).
  func raceSubscription(to slice: OracleSlice, op: Int) {
    racers.withLock { $0 += 1 }
    Thread { [self] in
      defer { racersDone.increment() }
      // An element is renamed back and forth through its own scope (every rename reaches beyond the scope's place)
      // when renames are on; other slices are bumped.
      var element = slice
      for nested in 5...9 {
        var target = Target.bump(slice, op: op + nested)
        if case .item(let id) = element, OracleFeatures.current.renames, nested % 2 == 1 {
          target = .rename(element, op: op + nested, to: OracleSlice.renamed(id))
          element = .item(OracleSlice.renamed(id))
        }
        let before = journal.tick()
        let handle = send(target, erased: false)
        let after = journal.tick()
        sent.withLock {
          $0.append(
            OracleSent(
              op: op + nested, target: target.name, behaviour: behaviour(op + nested), entered: before...after,
              cancelled: false, handle: handle))
        }
      }
    }.start()
  }

  /// Adds a listener of the root (nil) or of a slice. A root listener may, from inside its first call, add a scope
  /// listener and remove an observer.
  func addListener(slice: OracleSlice?, origin: String, nests: Bool = false) {
    let journal = journal
    let log = journal.newObserver(kind: slice == nil ? .rootListener : .scopeListener, slice: slice, origin: origin)
    let a = position()
    let unsubscribe: StoreUnsubscribe
    // One listener in three is the type-erased kind (`any State` before and after).
    let erased = log.number % 3 == 2
    if let slice, erased {
      FuzzCoverage.note(.scopeAddAnyListener)
      unsubscribe = scopes[slice]!.addAnyListener { old, new in
        guard let old = old as? OracleCell, let new = new as? OracleCell else {
          return journal.problem("\(log.title) got \(type(of: old)) and \(type(of: new)), not the slice")
        }
        journal.call(log, old: .cell(old), new: .cell(new), commit: "slice \(new)") {
          spin(journal.listenerWork)
        }
      }
    } else if let slice {
      FuzzCoverage.note(.scopeAddListener)
      unsubscribe = scopes[slice]!.addListener { old, new in
        journal.call(log, old: .cell(old), new: .cell(new), commit: "slice \(new)") {
          spin(journal.listenerWork)
        }
      }
    } else if erased {
      FuzzCoverage.note(.storeAddAnyListener)
      unsubscribe = store.addAnyListener { old, new in
        guard let old = old as? OracleState, let new = new as? OracleState else {
          return journal.problem("\(log.title) got \(type(of: old)) and \(type(of: new)), not the state")
        }
        journal.call(log, old: .state(old), new: .state(new), commit: "commit \(new.version)") {
          spin(journal.listenerWork)
        }
      }
    } else {
      FuzzCoverage.note(.storeAddListener)
      let nested = LockedValue(nests)
      unsubscribe = store.addListener { [weak self] old, new in
        journal.call(log, old: .state(old), new: .state(new), commit: "commit \(new.version)") {
          spin(journal.listenerWork)
          let nests = nested.withLock { nests in
            defer { nests = false }
            return nests
          }
          guard nests, let self else { return }
          let slice = Self.slices[(log.number &+ Int(truncatingIfNeeded: self.seed)) % Self.slices.count]
          self.addListener(slice: slice, origin: "from inside listener #\(log.number), during commit \(new.version)")
          // And removes an observer (perhaps itself) from inside the call.
          var generator = SeededGenerator(seed: self.seed &+ UInt64(log.number))
          self.unsubscribe(&generator)
        }
      }
    }
    log.window.withLock { $0 = (a, position()) }
    // A registration that may have come after shutdown gets nothing.
    log.afterShutdown.withLock { $0 = journal.shutdownTick.current != nil }
    removers.withLock { $0[log.number] = unsubscribe }
  }

  /// Subscribes a stream of the kind and slice `generator` picks, consumed by a task of its own.
  func subscribeStream(_ generator: inout SeededGenerator, op: Int, origin: String) async {
    let exact = generator.next() % 2 == 0
    let buffering: StreamBuffering = exact ? .bufferingNewest(1 << 20) : .latest
    let slice = Self.slices[Int(generator.next() % UInt64(Self.slices.count))]
    let scope = scopes[slice]!
    if generator.next() % 2 == 0 { raceSubscription(to: slice, op: op) }
    switch generator.next() % 6 {
    case 0:
      FuzzCoverage.note(.storeStates)
      await consume(store.states(buffering: buffering), kind: .rootStates, slice: nil, exact: exact, origin: origin) {
        (nil, .state($0))
      }
    case 1:
      FuzzCoverage.note(.storeValues)
      if generator.next() % 2 == 0 {
        await consume(
          store.values(of: { $0.items.map(\.id) }, buffering: buffering), kind: .rootValues, slice: nil,
          projectsIDs: true, exact: exact, origin: origin
        ) { (nil, .ids($0)) }
      } else {
        await consume(
          store.values(of: \.feature, buffering: buffering), kind: .rootValues, slice: nil, exact: exact,
          origin: origin
        ) { (nil, .cell($0)) }
      }
    case 2:
      FuzzCoverage.note(.storeChanges)
      await consume(
        store.changes(buffering: .bufferingNewest(1 << 20)), kind: .rootChanges, slice: nil, exact: true,
        origin: origin
      ) { (.state($0.old), .state($0.new)) }
    case 3:
      FuzzCoverage.note(.scopeStates)
      await consume(scope.states(buffering: buffering), kind: .scopeStates, slice: slice, exact: exact, origin: origin)
      { (nil, .cell($0)) }
    case 4:
      FuzzCoverage.note(.scopeValues)
      await consume(
        scope.values(of: Self.slowProjection(), buffering: buffering), kind: .scopeValues, slice: slice, exact: exact,
        origin: origin
      ) { (nil, .cell($0)) }
    default:
      FuzzCoverage.note(.scopeChanges)
      await consume(
        scope.changes(buffering: .bufferingNewest(1 << 20)), kind: .scopeChanges, slice: slice, exact: true,
        origin: origin
      ) { (.cell($0.old), .cell($0.new)) }
    }
  }

  /// Registers an observer in the window between a commit's critical section and its delivery (called from the store's
  /// `afterCommit` test hook, on the committing thread, for one commit in sixteen, at most twelve times a run): the
  /// state it starts with already has the commit, which it must not get again (a subscriber registered after a
  /// commit is never delivered it). An exact stream of the whole state, or of an element's slice (renamed elements
  /// widen their commits to every subscriber), through the registration streams use.
  func registerInCommitWindow() {
    let count = windowRegistrations.withLock { count -> Int in
      count += 1
      return count
    }
    // In runs without a commit log, where the path of commits nobody observes runs, every other window, up to 96
    // times, and always an observer of the whole state, which leaves after its second value: the only deliveries on
    // that path are of renames widened to every subscriber, and an observer that stayed would keep later commits off
    // it. (Alternating with element observers, which stay, the fuzzer caught a put-back of bug 3 of issue 32, the
    // widened subscriber list read in a second critical section, in 1 run of 2; this way, in 3 of 3.)
    let every = unlogged ? 2 : 16
    guard count % every == 0, count / every <= (unlogged ? 96 : 12) else { return }
    let a = position()
    let unsubscribe: @Sendable () -> Void
    let log: OracleObserverLog
    if unlogged || count / every % 2 == 0 {
      log = journal.newObserver(
        kind: .rootStates, slice: nil, exact: true, origin: "between a commit and its delivery (commit \(a))")
      // It leaves after its second value (from inside that delivery): an observer of the whole state is concerned by
      // every commit, and while one is there no commit takes the path of a commit nobody observes.
      let leave = LockedValue<(@Sendable () -> Void)?>(nil)
      let push: @Sendable (OracleState) -> Void = { [journal] state in
        let tick = journal.tick()
        let count = log.events.withLock { events -> Int in
          events.append(OracleEvent(start: tick, end: tick, old: nil, new: .state(state)))
          return events.count
        }
        if count == 2, let remove = leave.withLock({ $0 }) {
          log.unsubscribedAt.withLock { $0 = journal.tick() }
          remove()
        }
      }
      unsubscribe =
        store.core.observe(
          location: nil, needsOldState: false, start: .underLock(push), receive: { _, new in push(new) },
          startupState: push, finish: {}) ?? {}
      leave.withLock { $0 = unsubscribe }
    } else {
      let slice = OracleSlice.item(count / every / 2 % 6 + 1)
      log = journal.newObserver(
        kind: .scopeStates, slice: slice, exact: true, origin: "between a commit and its delivery (commit \(a))")
      let memory = SliceMemory<OracleCell>()
      let push: @Sendable (OracleCell?) -> Void = { [journal] slice in
        guard let new = memory.newValue(slice) else { return }
        let tick = journal.tick()
        log.events.withLock { $0.append(OracleEvent(start: tick, end: tick, old: nil, new: .cell(new))) }
      }
      unsubscribe = scopes[slice]!.core.observe(initial: push, receive: push, startupState: push, finish: {})
    }
    log.window.withLock { $0 = (a, position()) }
    // A registration that may have come after shutdown gets nothing.
    log.afterShutdown.withLock { $0 = journal.shutdownTick.current != nil }
    removers.withLock { $0[log.number] = unsubscribe }
  }

  /// Subscribes a projection of a slice while a thread sends updaters of it: a commit racing the subscription.
  func subscribeRacingProjection(_ generator: inout SeededGenerator, op: Int, origin: String) async {
    let slice = Self.slices[Int(generator.next() % 3)]
    let exact = generator.next() % 2 == 0
    raceSubscription(to: slice, op: op)
    await consume(
      scopes[slice]!.values(of: Self.slowProjection(), buffering: exact ? .bufferingNewest(1 << 20) : .latest),
      kind: .scopeValues, slice: slice, exact: exact, origin: origin + " (racing updaters of its slice)"
    ) { (nil, .cell($0)) }
  }

  /// A projection whose first call takes a moment (user code may): it widens the window between a subscription's
  /// first value and a commit racing it. Later calls are quick.
  static func slowProjection() -> @Sendable (OracleCell) -> OracleCell {
    let first = LockedValue(true)
    return { cell in
      let isFirst = first.withLock { isFirst in
        defer { isFirst = false }
        return isFirst
      }
      if isFirst { spin(50_000) }
      return cell
    }
  }

  /// Starts a task that subscribes to `stream` and records what it yields; returns once it has subscribed.
  private func consume<Element: Sendable>(
    _ stream: StoreStream<Element>, kind: OracleObserverKind, slice: OracleSlice?, projectsIDs: Bool = false,
    exact: Bool, origin: String, _ convert: @escaping @Sendable (Element) -> (OracleValue?, OracleValue)
  ) async {
    let journal = journal
    let log = journal.newObserver(kind: kind, slice: slice, projectsIDs: projectsIDs, exact: exact, origin: origin)
    let subscribed = Gate()
    let task = Task {
      let a = position()
      var iterator = stream.makeAsyncIterator()
      log.window.withLock { $0 = (a, position()) }
      // A subscription that may have come after shutdown gets nothing.
      log.afterShutdown.withLock { $0 = journal.shutdownTick.current != nil }
      subscribed.open()
      while let element = await iterator.next() {
        let (old, new) = convert(element)
        let tick = journal.tick()
        log.events.withLock { $0.append(OracleEvent(start: tick, end: tick, old: old, new: new)) }
      }
    }
    removers.withLock {
      $0[log.number] = {
        task.cancel()
      }
    }
    consumers.withLock { $0.append(task) }
    await subscribed.wait()
  }

  /// Creates an `ObservableStore` of the store or of a slice's scope, which the run reads at the end.
  func makeObservableStore(slice: OracleSlice?, origin: String, op: Int, acts: UInt64) async {
    #if canImport(Observation)
      guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
      let journal = journal
      let a = position()
      // The model subscribes as it is made, on the main actor: the window brackets that (its task reports, for
      // failure messages, what it found when it first ran). Its log is made, and its hooks set, in the same turn on the
      // main actor as the model, before its task can run.
      let makeLog: @Sendable () -> OracleObserverLog = {
        let log = journal.newObserver(
          kind: slice == nil ? .observableRoot : .observableScope, slice: slice, origin: origin)
        log.window.withLock { $0 = (a, a) }
        return log
      }
      // What the model's task found when it first ran: the commit, the number of states its subscription held, and
      // the slice then.
      let subscribed: @Sendable (OracleObserverLog) -> @Sendable (Int) -> Void = { [self] log in
        { [self] buffered in
          log.modelSubscribedAt.withLock { $0 = position() }
          log.modelBufferedAtSubscription.withLock { $0 = buffered }
          log.modelSliceAtSubscription.withLock {
            if let slice {
              $0 = scopes[slice]!.stateIfPresent.map(OracleValue.cell)
            } else {
              $0 = .state(store.state)
            }
          }
        }
      }
      let log: OracleObserverLog
      let finisher: @Sendable () async -> Void
      if let slice {
        let scope = scopes[slice]!
        // A fifth of the models of a slice are made with the failable initialiser (a feature state without `init()`
        // has only that one; in an optional context a `State`'s slice gets it too): nil only if the slice is missing.
        let failable = acts % 5 == 4
        let made = await MainActor.run { () -> (ObservableStore<OracleCell, OracleDependencies>, OracleObserverLog)? in
          let model: ObservableStore<OracleCell, OracleDependencies>
          if failable {
            FuzzCoverage.note(.observableInitScopeIfPresent)
            let optional: ObservableStore<OracleCell, OracleDependencies>? = ObservableStore(scope: scope)
            guard let optional else { return nil }
            model = optional
          } else {
            FuzzCoverage.note(.observableInitScope)
            model = ObservableStore(scope: scope)
          }
          let log = makeLog()
          model.didApply = { state in log.applied(.cell(state), tick: journal.tick()) }
          model.didSubscribe = subscribed(log)
          return (model, log)
        }
        guard let (model, madeLog) = made else {
          journal.missingAtCreation.withLock { $0.append((slice, a, position(), origin)) }
          return
        }
        log = madeLog
        await MainActor.run { act(on: model, op: op, acts: acts, what: "\(slice)'s model") }
        finisher = {
          await MainActor.run { model.updates }?.value
          FuzzCoverage.note(.observableState)
          let shown = await MainActor.run { model.state }
          log.finalShown.withLock { $0 = .cell(shown) }
        }
        followingProbes.withLock {
          $0.append {
            let following = await MainActor.run { model.isFollowing }
            log.modelFollowingAtFence.withLock { $0 = following }
          }
        }
      } else {
        let store = store
        let (model, madeLog) = await MainActor.run {
          FuzzCoverage.note(.observableInitStore)
          let model = ObservableStore(store: store)
          let log = makeLog()
          model.didApply = { state in log.applied(.state(state), tick: journal.tick()) }
          model.didSubscribe = subscribed(log)
          return (model, log)
        }
        log = madeLog
        await MainActor.run { act(on: model, op: op, acts: acts, what: "the store's model") }
        finisher = {
          await MainActor.run { model.updates }?.value
          FuzzCoverage.note(.observableState)
          let shown = await MainActor.run { model.state }
          log.finalShown.withLock { $0 = .state(shown) }
        }
        followingProbes.withLock {
          $0.append {
            let following = await MainActor.run { model.isFollowing }
            log.modelFollowingAtFence.withLock { $0 = following }
          }
        }
      }
      await MainActor.run {}
      let b = position()
      log.window.withLock { $0 = (a, max($0.1, b)) }
      finishers.withLock { $0.append(finisher) }
    #endif
  }

  #if canImport(Observation)
    /// What a view does with its model: reads it, and sends through it, directly or through a binding.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor
    func act<S: State>(on model: ObservableStore<S, OracleDependencies>, op: Int, acts: UInt64, what: String) {
      FuzzCoverage.note(.observableSubscript)
      FuzzCoverage.note(.observableDynamicMember)
      if let root = model as? ObservableStore<OracleState, OracleDependencies> {
        _ = (root[\.lastOp], root.lastOp)
      } else if let cell = model as? ObservableStore<OracleCell, OracleDependencies> {
        _ = (cell[\.lastOp], cell.lastOp)
      }
      let isRoot = S.self == OracleState.self
      let item: (bump: any StateUpdater, effect: any SideEffect, returning: OracleReturningWork) =
        isRoot
        ? (
          OracleRootBump(op: op + 1),
          OracleRootWork(
            nested: [op + 2], ways: [.typed], runID: nil, cancelInFlight: false, bodies: journal.bodies,
            report: reporter("\(what)'s side effect")),
          OracleReturningWork(op: op + 3, scoped: false, how: 0)
        )
        : (
          OracleBumpCell(op: op + 1),
          OracleCellWork(nested: [op + 2], ways: [.typed], report: reporter("\(what)'s side effect")),
          OracleReturningWork(op: op + 3, scoped: true, how: 0)
        )
      switch acts % 6 {
      case 0:
        break
      case 1:
        FuzzCoverage.note(.observableSendUpdater)
        let before = journal.tick()
        let handle = Self.send(item.bump, through: model)
        let after = journal.tick()
        sent.withLock {
          $0.append(
            OracleSent(
              op: op + 1, target: "\(what)'s send", behaviour: behaviour(op + 1), entered: before...after,
              cancelled: false, handle: handle))
        }
      case 2:
        FuzzCoverage.note(.observableSendSideEffect)
        sentEffects.withLock { $0.append(Self.send(item.effect, through: model)) }
      case 3:
        FuzzCoverage.note(.observableSendReturning)
        let handle = model.send(item.returning)
        sentEffects.withLock {
          $0.append(OracleHandle(returning: handle, op: op + 3, report: reporter("\(what)'s returning side effect")))
        }
      case 4:
        // The binding's setter sends and drops the handle: the commit must come at most once (checked as a send
        // whose interceptor may call `next` from a task it does not await).
        FuzzCoverage.note(.observableFieldBindingUpdater)
        FuzzCoverage.note(.fieldBindingGet)
        FuzzCoverage.note(.fieldBindingSet)
        Self.setBinding(of: model, to: op + 4)
        journal.dispatches.withLock {
          $0.append(
            OracleDispatchRecord(
              op: op + 4, target: "\(what)'s binding", awaited: false, behaviour: .nextFromUnawaitedTask,
              returnTick: journal.tick(), error: nil))
        }
      default:
        FuzzCoverage.note(.observableFieldBindingSideEffect)
        Self.setEffectBinding(
          of: model, to: op + 5, bodies: journal.bodies, report: reporter("\(what)'s binding's side effect"))
      }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor
    static func send<S: State>(_ item: any Dispatchable, through model: ObservableStore<S, OracleDependencies>)
      -> OracleHandle
    {
      if let root = model as? ObservableStore<OracleState, OracleDependencies> {
        if let bump = item as? OracleRootBump { return OracleHandle(root.send(bump)) }
        if let work = item as? OracleRootWork { return OracleHandle(root.send(work)) }
      }
      if let cell = model as? ObservableStore<OracleCell, OracleDependencies> {
        if let bump = item as? OracleBumpCell { return OracleHandle(cell.send(bump)) }
        if let work = item as? OracleCellWork { return OracleHandle(cell.send(work)) }
      }
      return OracleHandle(DispatchHandle<Void>.failed(OracleSkipped()))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor
    static func setBinding<S: State>(of model: ObservableStore<S, OracleDependencies>, to op: Int) {
      if let root = model as? ObservableStore<OracleState, OracleDependencies> {
        let binding = root.fieldBinding(\.lastOp) { OracleRootBump(op: $0) }
        _ = binding.get()
        binding.set(op)
      } else if let cell = model as? ObservableStore<OracleCell, OracleDependencies> {
        let binding = cell.fieldBinding(\.lastOp) { OracleBumpCell(op: $0) }
        _ = binding.get()
        binding.set(op)
      }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor
    static func setEffectBinding<S: State>(
      of model: ObservableStore<S, OracleDependencies>, to op: Int, bodies: OracleBodies, report: @escaping OracleReport
    ) {
      if let root = model as? ObservableStore<OracleState, OracleDependencies> {
        let binding = root.fieldBinding(\.lastOp) {
          OracleRootWork(
            nested: [$0], ways: [.typed], runID: nil, cancelInFlight: false, bodies: bodies, report: report)
        }
        binding.set(op)
      } else if let cell = model as? ObservableStore<OracleCell, OracleDependencies> {
        let binding = cell.fieldBinding(\.lastOp) { OracleCellWork(nested: [$0], ways: [.typed], report: report) }
        binding.set(op)
      }
    }
  #endif

  /// Removes an observer picked by `generator` (a listener, or a stream's consuming task).
  func unsubscribe(_ generator: inout SeededGenerator) {
    let candidates = removers.current.keys.sorted()
    guard !candidates.isEmpty else { return }
    let number = candidates[Int(generator.next() % UInt64(candidates.count))]
    guard let remove = removers.withLock({ $0.removeValue(forKey: number) }) else { return }
    let log = journal.observers.current[number]
    log.unsubscribedAt.withLock { $0 = journal.tick() }
    remove()
  }

  // MARK: - The interceptor

  /// Behaves per operation as the seed says (`OracleBehaviour`).
  static func interceptor(journal: OracleJournal, seed: UInt64) -> StoreInterceptor {
    { _ in { next in { item in try await intercept(item, next: next, journal: journal, seed: seed) } } }
  }

  /// What the world's interceptor does with `item`, in either form.
  static func intercept(
    _ item: any Dispatchable, next: @escaping StoreInterceptorNext, journal: OracleJournal, seed: UInt64
  ) async throws {
    let base = (item as? any ScopedDispatchable)?.base ?? item
    guard let op = (base as? any OracleOperation)?.op else { return try await next(item) }
    switch OracleBehaviour.of(op, seed: seed, intercepted: true) {
    case .pass:
      try await next(item)
    case .suspend:
      for _ in 0..<(op % 3 + 1) { await Task.yield() }
      try await next(item)
    case .fail:
      throw OracleError(op: op)
    case .substitute:
      // A returning root bump's substitute has another type: its dispatch has no value to return.
      try await next(item is OracleRootBump || item is OracleReturningRootBump ? OracleRootBump(op: -op) : item)
    case .nextFromAwaitedTask:
      try await Task { try await next(item) }.value
    case .nextFromUnawaitedTask:
      let task = Task {
        do {
          try await next(item)
        } catch {
          if case StoreError.nextCalledOutOfScope = error { return }
          if case StoreError.storeShutDown = error { return }
          if error is ScopeError || isTimeTravelRefusal(error) { return }
          journal.problem("op \(op): a next called from a task the interceptor did not await threw \(error)")
        }
      }
      journal.detached.withLock { $0.append(task) }
      // Sometimes give the task a head start (on this thread, or on another one while this handler works), so
      // that its `next` comes while this handler still runs.
      switch op / 10 % 3 {
      case 0: break
      case 1: await Task.yield()
      default: spin(20_000)
      }
    }
  }
}

/// The world's interceptor written as a `DispatchInterceptor` (the faster form), in the runs that take it.
struct OracleDispatchInterceptor: DispatchInterceptor {
  let journal: OracleJournal
  let seed: UInt64

  func intercept(_ item: any Dispatchable, next: DispatchInterceptorNext) async throws {
    FuzzCoverage.note(.dispatchInterceptorIntercept)
    try await OracleWorld.intercept(
      item,
      next: { item in
        FuzzCoverage.note(.dispatchInterceptorNextCall)
        try await next(item)
      }, journal: journal, seed: seed)
  }
}
