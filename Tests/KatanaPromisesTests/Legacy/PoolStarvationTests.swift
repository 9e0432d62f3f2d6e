import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import Testing

// Katana 6's side effects block their thread in `Hydra.await`. Swift's cooperative pool has one thread per
// core (two here): 32 such side effects blocking on it at once would starve it, and the nested dispatches they
// wait for (which need the pool) would never run. A `.katana6` store runs them on threads of their own; a
// blocking wait inside a task throws instead of blocking.
//
// Every blocking wait here has a short failsafe, so that a regression fails within the suite's time limit
// instead of hanging the run.

@Suite(
  "Pool starvation: 32 blocking legacy side effects on a 2-core machine", .timeLimit(.failsafeMinutes(3)),
  .taskExecutorPathOfThisRun)
struct PoolStarvationTests {
  static let count = 32

  /// What each side effect blocks on.
  enum Nested: String, CaseIterable, Sendable {
    /// A nested side effect, which itself blocks on a state updater.
    case sideEffect
    /// A state updater.
    case stateUpdater
  }

  @Test(arguments: Nested.allCases)
  func legacySideEffects_allBlockedAtOnce_onNestedDispatches_complete(nested: Nested) async throws {
    let store = CounterStore(interceptors: [], stateInitializer: { CounterState() }, configuration: .katana6)
    // Every side effect waits at the barrier until all 32 are running, so all of them block at the same time.
    let barrier = ThreadBarrier(parties: Self.count, timeout: Self.blockingFailsafe)
    let promises = dispatchBlockingSideEffects(to: store, nested: nested, barrier: barrier)
    _ = try await watchdog(all(promises), seconds: Self.settlingFailsafe).value
    #expect(Set(store.state.log) == Set((0..<Self.count).map { "\($0)" }))
    #expect(store.state.log.count == Self.count)
  }

  @Test func hydraAwait_insideTasks_throwsInvalidContext_insteadOfBlockingThePool() async throws {
    let store = CounterStore(interceptors: [], stateInitializer: { CounterState() }, configuration: .katana6)
    let errors = await withTaskGroup(of: (any Error)?.self) { group in
      for index in 0..<Self.count {
        group.addTask { Result { try blockOnDispatch(to: store, entry: "\(index)") }.error }
      }
      var errors: [(any Error)?] = []
      for await error in group { errors.append(error) }
      return errors
    }
    #expect(errors.count == Self.count)
    #expect(errors.allSatisfy { $0 as? PromiseError == .invalidContext })
    // The pool is free: async work goes on, and the dispatches made before each wait threw were applied.
    try await store.dispatch(AddLog(entry: "after"))
    #expect(store.state.log.count == Self.count + 1)
    #expect(store.state.log.last == "after")
  }

  @Test func defaultConfiguration_legacySideEffectsBlocking_failFastWithInvalidContext() async throws {
    // Without `.katana6`, side effects run on the pool, in the dispatching task: `Hydra.await` there throws
    // instead of starving the pool.
    let store = CounterStore(interceptors: [], stateInitializer: { CounterState() })
    let promises = dispatchBlockingSideEffects(to: store, nested: .stateUpdater, barrier: nil)
    for promise in promises {
      await #expect(throws: PromiseError.invalidContext) {
        try await watchdog(promise, seconds: Self.settlingFailsafe).value
      }
    }
    try await store.dispatch(AddLog(entry: "after"))
    #expect(store.state.log.last == "after")
  }

  /// How long a blocked thread waits before failing: short, so that 16 rounds of 2 blocked pool threads (a
  /// regression) still end within the suite's time limit.
  static let blockingFailsafe: TimeInterval = 3

  /// How long a test waits, without blocking a thread, for its 32 dispatches to settle. Alone they settle within
  /// 0.1 s; under the thread sanitizer, in a full run (the fuzzers' threads busy on both cores), the store's tasks
  /// waited up to 8.5 s for a pool thread, and a failsafe of 10 s failed 2 runs in 4. Within the suite's time
  /// limit, and longer than 16 rounds of `blockingFailsafe` (a regression that starves the pool).
  static let settlingFailsafe: TimeInterval = 55
}

/// Dispatches ``PoolStarvationTests/count`` legacy side effects that (after the barrier, if any) block on a
/// nested dispatch that appends their index to the log. Synchronous, so that `dispatch` is the promise one.
private func dispatchBlockingSideEffects(
  to store: CounterStore, nested: PoolStarvationTests.Nested, barrier: ThreadBarrier?
) -> [Promise<Void>] {
  (0..<PoolStarvationTests.count).map { index in
    store.dispatch(
      Run { context in
        try barrier?.arriveAndWait()
        let entry = "\(index)"
        switch nested {
        case .sideEffect:
          try Hydra.await(watchdog(context.dispatch(LogEffect(entry: entry)), seconds: 10))
        case .stateUpdater:
          try Hydra.await(watchdog(context.dispatch(AddLog(entry: entry)), seconds: 10))
        }
      })
  }
}

/// Dispatches an updater and blocks until it is applied: Katana 6 code that runs inside a task now.
private func blockOnDispatch(to store: CounterStore, entry: String) throws {
  try Hydra.await(watchdog(store.dispatch(AddLog(entry: entry)), seconds: PoolStarvationTests.blockingFailsafe))
}

extension Result {
  /// The error, if this is a failure.
  fileprivate var error: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
