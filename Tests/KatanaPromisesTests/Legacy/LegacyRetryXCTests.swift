import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

/// Katana 6 section 2.11: `retry` on a dispatch promise dispatches the item again, interceptors included.
final class LegacyRetryXCTests: XCTestCase {
  override func invokeTest() {
    // On the pre-macOS 15 fallbacks too, in .ci/run's second run (KATANA_TASK_EXECUTOR_FALLBACKS=forced).
    onTaskExecutorPathOfThisRun { super.invokeTest() }
  }

  func testRetry_ofAStoreDispatch_runsTheInterceptorsAndTheBodyAgain() {
    // Katana 6 [ran]: retry(5) of a side effect failing twice: 3 interceptor runs, 3 bodies, resolved.
    let seen = Recorder<String>()
    let store = makeStore(interceptors: [recordingInterceptor(seen)])
    let bodies = LockedValue(0)
    let flaky = Run { _ in
      let attempt = bodies.incremented()
      if attempt < 3 { throw TestError(code: attempt) }
    }
    XCTAssertNotNil(value(of: store.dispatch(flaky).retry(5)))
    XCTAssertEqual(bodies.current, 3)
    XCTAssertEqual(seen.values, ["Run", "Run", "Run"])
  }

  func testRetry_ofAReturningSideEffect_resolvesWithTheRetriedResult() {
    // Katana 6's testRetry_whenReturningSideEffect_returnsRetriedResult.
    let store = makeStore()
    let attempts = LockedValue(0)
    let flaky = RunReturning { _ in
      let attempt = attempts.incremented()
      if attempt < 2 { throw TestError(code: attempt) }
      return attempt * 100
    }
    XCTAssertEqual(value(of: store.dispatch(flaky).retry(2)), 200)
  }

  func testRetry_ofAnUpdaterDispatch_appliesItAgain_whenAnInterceptorRejectedIt() {
    let rejections = LockedValue(1)
    let rejectOnce = interceptor { _, next, item in
      let reject = rejections.withLock { count -> Bool in
        defer { count -= 1 }
        return count > 0
      }
      if reject { throw TestError(code: 1) }
      try next(item)
    }
    let store = makeStore(interceptors: [rejectOnce])
    XCTAssertNotNil(value(of: store.dispatch(Increment()).retry(2)))
    XCTAssertEqual(store.state.counter, 1)
  }

  func testRetry_whenEveryAttemptFails_rejectsWithTheLastError() {
    let store = makeStore()
    let attempts = LockedValue(0)
    let failing = Run { _ in
      let attempt = attempts.incremented()
      throw TestError(code: attempt)
    }
    XCTAssertEqual(error(of: store.dispatch(failing).retry(3)) as? TestError, TestError(code: 3))
    XCTAssertEqual(attempts.current, 3)
  }

  func testRetry_ofAContextDispatch_dispatchesAgain() {
    // Katana 6 ran the body once: a context's promise was derived (`anyDispatch(x).then(in: .background)`).
    let store = makeStore()
    let attempts = LockedValue(0)
    let flaky = failingUntil(attempt: 3, counting: attempts)
    let outer = store.dispatch(RunReturning { context in try Hydra.await(context.dispatch(flaky).retry(3)) })
    XCTAssertEqual(value(of: outer), 3)
    XCTAssertEqual(attempts.current, 3)
  }

  func testRetry_ofAnAnyDispatch_dispatchesAgain() {
    // Katana 6 ran the body once here too.
    let store = makeStore()
    let attempts = LockedValue(0)
    let flaky = failingUntil(attempt: 2, counting: attempts)
    XCTAssertEqual(value(of: store.anyDispatch(flaky).retry(2)) as? Int, 2)
    XCTAssertEqual(attempts.current, 2)
  }

  func testRetry_ofAPromiseDerivedFromADispatch_doesNotDispatchAgain() {
    // As in Katana 6: retrying a `then` re-runs the `then`, not the dispatch.
    let store = makeStore()
    let attempts = LockedValue(0)
    let failing = Run { _ in
      attempts.withLock { $0 += 1 }
      throw TestError(code: 1)
    }
    let derived = store.dispatch(failing).then(in: .background) { () }
    XCTAssertEqual(error(of: derived.retry(3)) as? TestError, TestError(code: 1))
    XCTAssertEqual(attempts.current, 1)
  }
}
