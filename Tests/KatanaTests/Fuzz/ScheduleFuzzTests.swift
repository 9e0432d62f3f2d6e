// A seeded schedule fuzzer over the real store (SPEC 8): tasks and threads do random operations on one store
// at once (awaited dispatches, `send`, handle and task cancellation, work under ids and cancellation by id,
// listeners and streams coming and going, interceptors that suspend, throw, drop the item, call `next` twice
// in a row or at once, or late), with a shutdown at a random point; then invariants are checked in closed
// form. The seed picks every operation and every interceptor behaviour; it is printed with any failure, and
// `KATANA_FUZZ_SEED=<seed> swift test --filter ScheduleFuzz` replays that plan (the thread interleaving is
// the machine's). `KATANA_SOAK=<factor>` runs more seeds and operations.
import Foundation
import KatanaTestSupport
import Testing

@testable import Katana

/// The state the fuzzer checks: every application of an updater, by operation number.
struct FuzzState: State {
  var log: [Int] = []
}

/// Applies operation `op`: appends it to the log.
struct Apply: StateUpdater {
  let op: Int
  func updateState(_ state: inout FuzzState) { state.log.append(op) }
}

/// A side effect that dispatches nested updaters, possibly under an id.
struct Work: SideEffect {
  let op: Int
  let nested: [Int]
  let runID: Int?
  let cancelInFlight: Bool

  func sideEffect(_ context: SideEffectContext<FuzzState, FuzzDependencies>) async throws {
    let body: @Sendable () async throws -> Void = {
      for op in nested {
        await Task.yield()
        try await context.dispatch(Apply(op: op))
      }
    }
    if let runID {
      try await context.run(id: runID, cancelInFlight: cancelInFlight, operation: body)
    } else {
      try await body()
    }
  }
}

/// A side effect that only ends when it is cancelled.
struct AwaitCancellation: SideEffect {
  func sideEffect(_ context: SideEffectContext<FuzzState, FuzzDependencies>) async throws {
    await Gate().wait()
  }
}

/// A side effect that cancels the runs under an id.
struct CancelRuns: SideEffect {
  let runID: Int
  func sideEffect(_ context: SideEffectContext<FuzzState, FuzzDependencies>) async throws {
    context.cancel(id: runID)
  }
}

final class FuzzDependencies: SideEffectDependencyContainer {
  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {}
}

struct FuzzError: Error, Equatable {
  let op: Int
}

/// What the interceptor does with an operation's updater, decided by the seed.
enum FuzzBehaviour: CaseIterable {
  case pass, suspend, fail, drop, nextTwiceInARow, nextTwiceAtOnce, lateNext

  static func of(_ op: Int, seed: UInt64) -> FuzzBehaviour {
    var generator = SeededGenerator(seed: seed &+ UInt64(op) &* 0x9E37_79B9)
    // Mostly plain dispatches; every behaviour still shows up in every run.
    let roll = Int(generator.next() % 20)
    switch roll {
    case 0: return .fail
    case 1: return .drop
    case 2: return .nextTwiceInARow
    case 3: return .nextTwiceAtOnce
    case 4: return .lateNext
    case 5..<9: return .suspend
    default: return .pass
    }
  }
}

/// Everything the actors record, to check against the final state.
final class FuzzRecord: Sendable {
  /// Per operation: how many calls of `next` returned normally (each applied the updater once).
  let nextSuccesses = LockedValue<[Int: Int]>([:])
  /// Per operation: what its dispatch returned ("ok") or threw.
  let outcomes = LockedValue<[Int: String]>([:])
  /// Late `next` calls, by the error they got.
  let lateNext = LockedValue<[String]>([])
  let listenerInFlight = LockedValue(0)
  let listenerOverlaps = LockedValue(0)
  let listenerCalls = LockedValue(0)
  let streamRegressions = LockedValue(0)
  let unexpectedErrors = LockedValue<[String]>([])
  /// Steps the actors have taken, and handles awaited after them: what the run's failsafe watches.
  let steps = LockedValue(0)

  func stepped() {
    steps.withLock { $0 += 1 }
  }

  func succeeded(_ op: Int) {
    nextSuccesses.withLock { $0[op, default: 0] += 1 }
  }

  func outcome(_ op: Int, _ result: Result<Void, any Error>) {
    let text: String
    switch result {
    case .success: text = "ok"
    case .failure(let error): text = String(describing: error)
    }
    outcomes.withLock { $0[op] = text }
  }

  func unexpected(_ text: String) {
    unexpectedErrors.withLock { $0.append(text) }
  }
}

/// The interceptor under test: behaves per operation as the seed says, and counts every `next` that returned.
func fuzzInterceptor(seed: UInt64, record: FuzzRecord) -> StoreInterceptor {
  { _ in
    { next in
      { item in
        guard let apply = item as? Apply else { return try await next(item) }
        let op = apply.op
        func callNext() async throws {
          try await next(item)
          record.succeeded(op)
        }
        switch FuzzBehaviour.of(op, seed: seed) {
        case .pass:
          try await callNext()
        case .suspend:
          for _ in 0..<(op % 3 + 1) { await Task.yield() }
          try await callNext()
        case .fail:
          throw FuzzError(op: op)
        case .drop:
          return
        case .nextTwiceInARow:
          try await callNext()
          try await callNext()
        case .nextTwiceAtOnce:
          async let first = outcome { try await callNext() }
          async let second = outcome { try await callNext() }
          for result in await [first, second] {
            if case .failure(let error) = result {
              if case StoreError.nextCalledConcurrently = error { continue }
              throw error
            }
          }
        case .lateNext:
          try await callNext()
          // A task that outlives the handler keeps its `next`: calling it once the dispatch has returned (while
          // other dispatches hold the turn) must fail.
          let dispatchDone = Gate()
          let task = Task {
            await dispatchDone.waitIgnoringCancellation()
            do {
              try await next(Apply(op: op))
              record.succeeded(op)
              record.lateNext.withLock { $0.append("applied") }
            } catch {
              record.lateNext.withLock { $0.append(String(describing: error)) }
            }
          }
          LateNextGates.shared.add(op: op, gate: dispatchDone, task: task)
        }
      }
    }
  }
}

/// The late `next` calls, each released once the dispatch it belongs to has returned.
final class LateNextGates: Sendable {
  static let shared = LateNextGates()

  private struct Late: @unchecked Sendable {  // Sendable: the task is only awaited.
    let gate: Gate
    let task: Task<Void, Never>
  }

  private let pending = LockedValue<[Int: Late]>([:])

  func add(op: Int, gate: Gate, task: Task<Void, Never>) {
    pending.withLock { $0[op] = Late(gate: gate, task: task) }
  }

  /// Releases the late call of `op`, whose dispatch has returned.
  func open(_ op: Int) {
    pending.withLock { $0[op] }?.gate.open()
  }

  /// Releases every late call and waits for them.
  func finishAll() async {
    let all = pending.withLock { pending in
      defer { pending = [:] }
      return Array(pending.values)
    }
    for late in all { late.gate.open() }
    for late in all { await late.task.value }
  }
}

typealias FuzzStore = Store<FuzzState, FuzzDependencies>

/// One seeded run.
struct FuzzRun {
  let seed: UInt64
  let taskActors: Int
  let threadActors: Int
  let operationsPerActor: Int

  /// Operation numbers: actor * 100_000 + step * 10 + nested index.
  static func op(actor: Int, step: Int, nested: Int = 0) -> Int { actor * 100_000 + step * 10 + nested }

  func run() async -> [String] {
    let record = FuzzRecord()
    weak var weakStore: FuzzStore?
    weak var weakCore: StoreCore<FuzzState, FuzzDependencies>?
    var failures: [String] = []
    var generator = SeededGenerator(seed: seed)
    let shutdownAt = Int(generator.next() % UInt64(max(1, operationsPerActor * 2)))
    do {
      // Odd seeds track activity, as the test store does, and wait for idleness.
      var configuration = StoreConfiguration()
      configuration.tracksActivity = seed % 2 == 1
      let store = FuzzStore(
        interceptors: [fuzzInterceptor(seed: seed, record: record)], stateInitializer: { FuzzState() },
        configuration: configuration)
      weakStore = store
      weakCore = store.core
      let listener = installChecks(on: store, record: record)
      let handles = LockedValue<[(Int, DispatchHandle<Void>)]>([])
      let stream = Task { await consumeStream(store: store, record: record) }
      let finished = await withFailsafe(seconds: 60, progress: record.steps.current) {
        await withTaskGroup(of: Void.self) { group in
          for actor in 0..<taskActors {
            group.addTask {
              await runTaskActor(actor, store: store, record: record, shutdownAt: actor == 0 ? shutdownAt : nil)
            }
          }
          for actor in taskActors..<(taskActors + threadActors) {
            group.addTask {
              await runThreadActor(actor, store: store, record: record, handles: handles)
            }
          }
        }
        // Every sent item completes, whatever its fate.
        for (op, handle) in handles.current {
          let result = await handle.result
          record.stepped()
          if op >= 0 { record.outcome(op, result) }
        }
        if store.core.tracksActivity {
          // Everything has returned: the store is idle (or waiting for it would hang).
          try? await store.core.waitUntilIdle()
        }
        return true
      }
      if finished == nil {
        failures.append("seed \(seed): some awaited call never returned (no step for 60 s: failsafe)")
        return failures
      }
      stream.cancel()
      await stream.value
      listener()
      await store.shutdown()
      await LateNextGates.shared.finishAll()
      failures += check(store: store, record: record)
    }
    // Tasks that have returned (the failsafe's, the store's own) release what they captured a moment after
    // reporting that they returned: let them finish tearing down.
    let deadline = ContinuousClock.now.advanced(by: .seconds(5))
    while weakStore != nil || weakCore != nil, ContinuousClock.now < deadline { await Task.yield() }
    if weakStore != nil { failures.append("seed \(seed): the store was not released") }
    if weakCore != nil { failures.append("seed \(seed): the store's core was not released") }
    return failures
  }

  /// A listener that checks that deliveries never overlap; returns its unsubscribe.
  func installChecks(on store: FuzzStore, record: FuzzRecord) -> StoreUnsubscribe {
    store.addListener { old, new in
      if record.listenerInFlight.withLock({
        $0 += 1
        return $0
      }) > 1 {
        record.listenerOverlaps.withLock { $0 += 1 }
      }
      if new.log.count < old.log.count { record.unexpected("listener saw the log shrink") }
      record.listenerCalls.withLock { $0 += 1 }
      // A little work, so that a second delivery running at the same time would be caught overlapping.
      spin(3_000)
      record.listenerInFlight.withLock { $0 -= 1 }
    }
  }

  func runTaskActor(_ actor: Int, store: FuzzStore, record: FuzzRecord, shutdownAt: Int?) async {
    var generator = SeededGenerator(seed: seed &+ UInt64(actor) &* 7919)
    for step in 0..<operationsPerActor {
      record.stepped()
      if step == shutdownAt {
        await store.shutdown()
      }
      let op = Self.op(actor: actor, step: step)
      switch generator.next() % 10 {
      case 0, 1, 2, 3:
        record.outcome(op, await outcome { try await store.dispatch(Apply(op: op)) })
        LateNextGates.shared.open(op)
      case 4:
        // A dispatch whose task is cancelled at a random moment.
        let task = Task { await outcome { try await store.dispatch(Apply(op: op)) } }
        if generator.next() % 2 == 0 { await Task.yield() }
        task.cancel()
        record.outcome(op, await task.value)
      case 5, 6:
        let nested = (1...Int(generator.next() % 3 + 1)).map { Self.op(actor: actor, step: step, nested: $0) }
        let runID = generator.next() % 2 == 0 ? Int(generator.next() % 3) : nil
        let work = Work(op: op, nested: nested, runID: runID, cancelInFlight: generator.next() % 2 == 0)
        let result = await outcome { try await store.dispatch(work) }
        if case .failure(let error) = result, !Self.isExpected(error) {
          record.unexpected("op \(op) (side effect): \(error)")
        }
      case 7:
        let result = await outcome { try await store.dispatch(CancelRuns(runID: Int(generator.next() % 3))) }
        if case .failure(let error) = result, !Self.isExpected(error) {
          record.unexpected("op \(op) (cancel by id): \(error)")
        }
      case 8:
        store.cancel(id: Int(generator.next() % 3))
      default:
        if store.core.tracksActivity {
          // A wait for idleness, cancelled at a random moment (or not: the store becomes idle at the end).
          let waiter = Task { try? await store.core.waitUntilIdle() }
          if generator.next() % 4 != 0 {
            for _ in 0..<Int(generator.next() % 3) { await Task.yield() }
            waiter.cancel()
            await waiter.value
          }
        } else {
          _ = store.state.log.count
          await Task.yield()
        }
      }
    }
  }

  func runThreadActor(
    _ actor: Int, store: FuzzStore, record: FuzzRecord, handles: LockedValue<[(Int, DispatchHandle<Void>)]>
  ) async {
    let seed = seed
    let operations = operationsPerActor
    // The thread's closure outlives the continuation's resumption: it reaches the store through a box it
    // empties first, so that the checks that the store is released do not race with the thread's exit.
    let box = LockedValue<FuzzStore?>(store)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      Thread {
        // The store is only reachable inside this function, which returns before the continuation resumes.
        func work() {
          guard let store = box.current else { return }
          var generator = SeededGenerator(seed: seed &+ UInt64(actor) &* 104_729)
          var mine: [(Int, DispatchHandle<Void>)] = []
          var cancellations: [DispatchHandle<Void>] = []
          var unsubscribe: StoreUnsubscribe?
          for step in 0..<operations {
            record.stepped()
            let op = FuzzRun.op(actor: actor, step: step)
            switch generator.next() % 10 {
            case 0, 1, 2, 3, 4:
              mine.append((op, store.send(Apply(op: op))))
            case 5:
              let nested = [FuzzRun.op(actor: actor, step: step, nested: 1)]
              let runID = generator.next() % 2 == 0 ? Int(generator.next() % 3) : nil
              let handle = store.send(Work(op: op, nested: nested, runID: runID, cancelInFlight: false))
              if generator.next() % 2 == 0 { handle.cancel() }
            case 9 where generator.next() % 2 == 0:
              // Only its handle's cancellation ends it: a lost cancellation hangs the run.
              let handle = store.send(AwaitCancellation())
              cancellations.append(handle)
              if generator.next() % 2 == 0 { handle.cancel() }
            case 6:
              // Cancel one of this thread's sent updaters, possibly already applied.
              if let (_, handle) = mine.randomElement(using: &generator) { handle.cancel() }
            case 7:
              if let unsubscribe {
                unsubscribe()
              } else {
                unsubscribe = store.addListener { _, _ in record.listenerCalls.withLock { $0 += 1 } }
              }
              if generator.next() % 2 == 0 { unsubscribe = nil }
            case 8:
              store.cancel(id: Int(generator.next() % 3))
            default:
              _ = store.state.log.count
              _ = store.isReady
            }
          }
          unsubscribe?()
          unsubscribe = nil
          for handle in cancellations { handle.cancel() }
          handles.withLock { $0 += mine + cancellations.map { (-1, $0) } }
          mine = []
          cancellations = []
        }
        work()
        box.withLock { $0 = nil }
        continuation.resume()
      }.start()
    }
  }

  func consumeStream(store: FuzzStore, record: FuzzRecord) async {
    var last = -1
    var received = 0
    for await count in store.values(of: \.log.count) {
      if count < last { record.streamRegressions.withLock { $0 += 1 } }
      last = count
      received += 1
      if received >= 20 { break }
    }
  }

  static func isExpected(_ error: any Error) -> Bool {
    if error is CancellationError || error is FuzzError { return true }
    if let error = error as? StoreError {
      switch error {
      case .storeShutDown: return true
      default: return false
      }
    }
    return false
  }

  /// The closed-form checks.
  func check(store: FuzzStore, record: FuzzRecord) -> [String] {
    var failures: [String] = []
    let log = store.state.log
    var applied: [Int: Int] = [:]
    for op in log { applied[op, default: 0] += 1 }
    let successes = record.nextSuccesses.current
    for op in Set(applied.keys).union(successes.keys) where applied[op, default: 0] != successes[op, default: 0] {
      failures.append(
        "op \(op): applied \(applied[op, default: 0]) times, next returned \(successes[op, default: 0]) times")
    }
    // What each top-level dispatch returned agrees with its interceptor behaviour and what was applied.
    for (op, outcome) in record.outcomes.current {
      let count = applied[op, default: 0]
      switch FuzzBehaviour.of(op, seed: seed) {
      case .fail:
        if count != 0 || (outcome != "ok" && !outcome.contains("FuzzError") && !Self.isExpectedText(outcome)) {
          failures.append("op \(op) (fail): applied \(count), outcome \(outcome)")
        }
      case .drop:
        if count != 0 { failures.append("op \(op) (drop): applied \(count)") }
      case .pass, .suspend, .lateNext:
        if (outcome == "ok") != (count == 1) || count > 1 {
          failures.append("op \(op) (\(FuzzBehaviour.of(op, seed: seed))): applied \(count), outcome \(outcome)")
        }
      case .nextTwiceInARow:
        if outcome == "ok", count != 2 { failures.append("op \(op) (twice in a row): applied \(count)") }
      case .nextTwiceAtOnce:
        if outcome == "ok", count != 1, count != 2 { failures.append("op \(op) (twice at once): applied \(count)") }
      }
      if outcome != "ok", !Self.isExpectedText(outcome), !outcome.contains("FuzzError") {
        failures.append("op \(op): unexpected error \(outcome)")
      }
    }
    // Per dispatcher (task or thread), its updaters applied in its order (an updater applied twice by one
    // dispatch is applied twice in a row: its turn is not released in between).
    var lastPerActor: [Int: Int] = [:]
    for op in log where op % 10 == 0 {
      let actor = op / 100_000
      if let last = lastPerActor[actor], op < last || (op == last && !Self.appliesTwice(op, seed: seed)) {
        failures.append("actor \(actor): op \(op) applied after op \(last)")
      }
      lastPerActor[actor] = op
    }
    for late in record.lateNext.current
    where late != String(describing: StoreError.nextCalledOutOfScope(String(reflecting: Apply.self)))
      && late != String(describing: StoreError.storeShutDown)
    {
      failures.append("a late next got: \(late)")
    }
    if record.listenerOverlaps.current > 0 {
      failures.append("\(record.listenerOverlaps.current) overlapping listener calls")
    }
    if record.streamRegressions.current > 0 { failures.append("a stream went backwards") }
    failures += record.unexpectedErrors.current
    if store.ownedTaskCount != 0 { failures.append("\(store.ownedTaskCount) store-owned tasks left after shutdown") }
    if store.runningEffectCount != 0 { failures.append("\(store.runningEffectCount) effects under ids left") }
    if store.core.observerCount != 0 { failures.append("\(store.core.observerCount) observers left after shutdown") }
    if store.core.retainedTaskIdentities != 0 {
      failures.append("\(store.core.retainedTaskIdentities) task identities kept at rest")
    }
    return failures.map { "seed \(seed): \($0)" }
  }

  static func appliesTwice(_ op: Int, seed: UInt64) -> Bool {
    let behaviour = FuzzBehaviour.of(op, seed: seed)
    return behaviour == .nextTwiceInARow || behaviour == .nextTwiceAtOnce
  }

  static func isExpectedText(_ text: String) -> Bool {
    text == String(describing: CancellationError()) || text == String(describing: StoreError.storeShutDown)
  }
}

@Suite("Schedule fuzzer", .timeLimit(.failsafeMinutes(5)))
struct ScheduleFuzzTests {
  /// The seeds one run covers: a fixed list in CI (more with `KATANA_SOAK`), or the one to replay.
  static var seeds: [UInt64] {
    if let value = ProcessInfo.processInfo.environment["KATANA_FUZZ_SEED"], let seed = UInt64(value) { return [seed] }
    return (0..<UInt64(48 * soakFactor)).map { 0xC0FFEE &+ $0 &* 7_777 }
  }

  @Test func randomOperations_fromTasksAndThreads_keepEveryInvariant() async {
    var failures: [String] = []
    var operations = 0
    for seed in Self.seeds {
      let run = FuzzRun(seed: seed, taskActors: 3, threadActors: 2, operationsPerActor: 60)
      operations += 5 * 60
      failures += await run.run()
      if failures.count > 20 { break }
    }
    for failure in failures.prefix(20) {
      Issue.record(
        "\(failure)\n  replay: KATANA_FUZZ_SEED=\(failure.split(separator: ":")[0].dropFirst(5)) swift test --filter ScheduleFuzz"
      )
    }
    if ProcessInfo.processInfo.environment["KATANA_EXPLORATION_REPORT"] != nil {
      print("[fuzz] \(Self.seeds.count) seeds, \(operations) operations")
    }
  }
}
