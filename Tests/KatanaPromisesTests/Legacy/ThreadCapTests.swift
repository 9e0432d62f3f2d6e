import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import Testing

// Blocked legacy code needs a thread per blocked body. libdispatch stops adding threads at 255 on Linux, so
// legacy side effects and interceptor handlers that wait for more legacy work than that must not depend on
// Dispatch for threads: every one of these tests blocks 1,000 bodies at once (a barrier proves it), each
// waiting for work that itself needs a thread to block on.

@Suite(
  "1,000 blocked legacy bodies at once, above Dispatch's thread cap", .serialized, .timeLimit(.failsafeMinutes(3)),
  .taskExecutorPathOfThisRun)
struct ThreadCapTests {
  static let count = 1_000
  /// 20 seconds, times `failsafeScale` (CI's thread-sanitizer pass: 80).
  static let failsafe: TimeInterval = 20 * failsafeScale

  @Test func legacySideEffects_eachBlockingOnANestedLegacySideEffect_allFinish() async throws {
    let store = makeStore()
    try await store.waitUntilReady()
    let barrier = ThreadBarrier(parties: Self.count, timeout: Self.failsafe)
    let watchdog = Watchdog(seconds: Self.failsafe)
    let promises = (0..<Self.count).map { index in
      store.dispatch(
        Run { context in
          try barrier.arriveAndWait()
          // The nested side effect blocks too, on a state updater.
          try Hydra.await(watchdog.guarding(context.dispatch(LogEffect(entry: "\(index)"))))
        })
    }
    _ = try await watchdog.guarding(all(promises)).value
    #expect(Set(store.state.log) == Set((0..<Self.count).map { "\($0)" }))
    #expect(store.state.log.count == Self.count)
  }

  @Test func sideEffects_blockingOnUpdatersThroughASynchronousInterceptor_allFinish() async throws {
    // The interceptor's handler blocks in `next` for the whole side effect, and again for each updater.
    let store = makeStore(interceptors: [synchronousInterceptor { _ in { next in { item in try next(item) } } }])
    try await store.waitUntilReady()
    let barrier = ThreadBarrier(parties: Self.count, timeout: Self.failsafe)
    let watchdog = Watchdog(seconds: Self.failsafe)
    let promises = (0..<Self.count).map { index in
      store.dispatch(
        Run { context in
          try barrier.arriveAndWait()
          try Hydra.await(watchdog.guarding(context.dispatch(AddLog(entry: "\(index)"))))
        })
    }
    _ = try await watchdog.guarding(all(promises)).value
    #expect(Set(store.state.log) == Set((0..<Self.count).map { "\($0)" }))
    #expect(store.state.log.count == Self.count)
  }
}
