import Foundation
import Katana
import KatanaPromises

/// SPEC 7's promise path: `store.dispatch(x).then { }` against a bare main-queue round trip and post of the same
/// run, and `Hydra.await` round trips from threads outside the cooperative pool.
extension BenchmarkFixture {
  /// A task posts an empty block to the main queue and waits for it to run.
  public static let mainQueueRoundTrip = BenchmarkFixture(
    name: "baseline: main-queue round trip", isBaseline: true, relativeCost: 20,
    explanation: "A task posts an empty block to the main queue and waits for it to run: the floor for "
      + "an awaited promise whose `then` runs on the main queue, with no promise or store involved."
  ) { operations in
    PreparedFixture(operations: operations) {
      for _ in 0..<operations { await KatanaBenchmarkFixtures.mainQueueRoundTrip() }
    }
  }

  /// A task posts blocks that count to the main queue back to back, then waits for the last.
  public static let mainQueuePosts = BenchmarkFixture(
    name: "baseline: main-queue posts, pipelined", isBaseline: true, relativeCost: 4,
    explanation: "A task posts blocks that count to the main queue back to back, then waits for the last: "
      + "the floor for pipelined promises whose `then` runs on the main queue."
  ) { operations in
    let completed = Counter()
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { DispatchQueue.main.async { completed.add(1) } }
      await KatanaBenchmarkFixtures.mainQueueRoundTrip()
    } verify: {
      guard completed.value == operations else {
        throw CorrectnessError(description: "main-queue baseline lost blocks")
      }
    }
  }

  /// `store.dispatch(Increment()).then { }`, waited for before the next dispatch.
  public static let awaitedPromise = BenchmarkFixture(
    name: "promise: awaited dispatch", relativeCost: 20,
    explanation: "store.dispatch(Increment()).then { } (Hydra's default context: the main queue), waited "
      + "for before the next dispatch."
  ) { operations in
    let store = try await makeStore()
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations {
        let dispatched: Promise<Void> = store.dispatch(Increment())
        try await dispatched.then { _ in }.value
      }
    } verify: {
      try expectCounter(of: store, operations, "promise path lost updates")
    }
  }

  /// The awaited case on the main actor.
  public static let awaitedPromiseOnMainActor = BenchmarkFixture(
    name: "promise: awaited dispatch, main actor", relativeCost: 20,
    explanation: "The awaited case run on the main actor, where app code calls it: the `then` callback "
      + "and the resumption then share the main queue, with no thread hop."
  ) { operations in
    let store = try await makeStore()
    return PreparedFixture(operations: operations) {
      try await awaitedPromiseDispatches(store, operations)
    } verify: {
      try expectCounter(of: store, operations, "promise path lost updates")
    }
  }

  /// The pipelined case on the main actor.
  public static let pipelinedPromiseOnMainActor = BenchmarkFixture(
    name: "promise: pipelined dispatch, main actor", relativeCost: 4,
    explanation: "The pipelined case run on the main actor."
  ) { operations in
    let store = try await makeStore()
    let completed = Counter()
    return PreparedFixture(operations: operations) {
      try await pipelinedPromiseDispatches(store, operations, completed)
    } verify: {
      guard store.state.counter == operations, completed.value == operations else {
        throw CorrectnessError(description: "promise pipeline lost work")
      }
    }
  }

  /// `try Hydra.await(store.dispatch(Increment()))` on a thread outside the cooperative pool.
  public static let hydraAwaitUpdater = BenchmarkFixture(
    name: "promise: Hydra.await round trip, state updater",
    explanation: "try Hydra.await(store.dispatch(Increment())) in a loop on a thread outside the "
      + "cooperative pool, as Katana 6 code blocks."
  ) { operations in
    let store = try await makeStore()
    return PreparedFixture(operations: operations) {
      try await onLegacyThread {
        for _ in 0..<operations { try Hydra.await(store.dispatch(Increment())) }
      }
    } verify: {
      try expectCounter(of: store, operations, "Hydra.await path lost updates")
    }
  }

  /// A synchronous Katana 6 side effect on a `.katana6` store, blocking on a nested dispatch.
  public static let hydraAwaitKatana6SideEffect = BenchmarkFixture(
    name: "promise: Hydra.await round trip, side effect (.katana6)", relativeCost: 100,
    explanation: "try Hydra.await(store.dispatch(SyncIncrement())): a synchronous Katana 6 side effect, "
      + "run on its own thread by a .katana6 store, that itself blocks on a nested dispatch."
  ) { operations in
    let store = BenchStore(initialState: BenchState(), configuration: .katana6)
    try await store.waitUntilReady()
    return PreparedFixture(operations: operations) {
      try await onLegacyThread {
        for _ in 0..<operations { try Hydra.await(store.dispatch(SyncIncrement())) }
      }
    } verify: {
      try expectCounter(of: store, operations, "Hydra.await path lost updates")
    }
  }

  /// `store.dispatch(Increment()).then { }` issued back to back, then the last promise waited for.
  public static let pipelinedPromise = BenchmarkFixture(
    name: "promise: pipelined dispatch", relativeCost: 4,
    explanation: "store.dispatch(Increment()).then { } issued back to back from one thread, then the last "
      + "promise waited for: ns per dispatch."
  ) { operations in
    let store = try await makeStore()
    let completed = Counter()
    return PreparedFixture(operations: operations) {
      var last: Promise<Void>?
      for _ in 0..<operations {
        let dispatched: Promise<Void> = store.dispatch(Increment())
        last = dispatched.then { _ in completed.add(1) }
      }
      try await last?.value
    } verify: {
      guard store.state.counter == operations, completed.value == operations else {
        throw CorrectnessError(
          description: "promise pipeline lost work: \(store.state.counter) updates, \(completed.value) "
            + "callbacks, of \(operations)")
      }
    }
  }
}

/// Runs `body` on a thread outside the cooperative pool, where it may block, and returns what it returns.
public func onLegacyThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
    Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
  }
}

/// A Katana 6 side effect: synchronous, blocking on a nested dispatch.
public struct SyncIncrement: SideEffect {
  /// The side effect.
  public init() {}

  public func sideEffect(_ context: SideEffectContext<BenchState, EmptySideEffectDependencyContainer>) throws {
    try Hydra.await(context.dispatch(Increment()))
  }
}

/// Posts an empty block to the main queue and returns once it ran.
public func mainQueueRoundTrip() async {
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    DispatchQueue.main.async { continuation.resume() }
  }
}

/// `store.dispatch(x).then { }`, awaited each time, on the main actor.
@MainActor
func awaitedPromiseDispatches(_ store: BenchStore, _ operations: Int) async throws {
  for _ in 0..<operations {
    let dispatched: Promise<Void> = store.dispatch(Increment())
    try await dispatched.then { _ in }.value
  }
}

/// `store.dispatch(x).then { }` issued back to back on the main actor, then the last one awaited.
@MainActor
func pipelinedPromiseDispatches(_ store: BenchStore, _ operations: Int, _ completed: Counter) async throws {
  var last: Promise<Void>?
  for _ in 0..<operations {
    let dispatched: Promise<Void> = store.dispatch(Increment())
    last = dispatched.then { _ in completed.add(1) }
  }
  try await last?.value
}
