import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

/// Katana 6 section 2.4: when each dispatch promise settles, and with what; and the promise-specific
/// behaviours Katana 6 code relies on (eager, cancellable).
final class LegacyDispatchPromiseXCTests: XCTestCase {
  override func invokeTest() {
    // On the pre-macOS 15 fallbacks too, in .ci/run's second run (KATANA_TASK_EXECUTOR_FALLBACKS=forced).
    onTaskExecutorPathOfThisRun { super.invokeTest() }
  }

  func testUpdaterPromise_thenOnMain_seesTheListenersOfThatUpdateAlreadyRun() {
    // Katana 6's testListeners_areInvokedOnStateChange relies on this order.
    let store = makeStore()
    let log = LockedValue<[String]>([])
    store.addListener { old, new in log.withLock { $0.append("listener \(old.counter)->\(new.counter)") } }

    let done = expectation(description: "then ran")
    store.dispatch(Increment())
    store.dispatch(Increment()).then {
      XCTAssertTrue(Thread.isMainThread)
      XCTAssertEqual(store.state.counter, 2)
      log.withLock { $0.append("then") }
      done.fulfill()
    }
    wait(for: [done], timeout: failsafeSeconds)
    XCTAssertEqual(log.current, ["listener 0->1", "listener 1->2", "then"])
  }

  func testSideEffectPromise_resolvesWhenTheBodyReturns() {
    let store = makeStore()
    let returned = LockedValue(false)
    let promise = store.dispatch(
      Run { context in
        try Hydra.await(context.dispatch(Increment()))
        returned.withLock { $0 = true }
      })
    XCTAssertNotNil(value(of: promise))
    XCTAssertTrue(returned.current)
    XCTAssertEqual(store.state.counter, 1)
  }

  func testSideEffectPromise_rejectsWithTheBodysError() {
    // Katana 6's testDispatch_propagatesErrors (the fix for "promise resolved even if the side effect throws").
    let store = makeStore()
    XCTAssertEqual(error(of: store.dispatch(Fail(code: 3))) as? TestError, TestError(code: 3))
  }

  func testReturningSideEffectPromise_resolvesWithItsValue() {
    let store = makeStore()
    XCTAssertEqual(value(of: store.dispatch(Answer(value: 42))), 42)
  }

  func testAnyDispatch_resolvesWithTheOutcome() {
    let store = makeStore()
    XCTAssertTrue(value(of: store.anyDispatch(Increment())) is Void)
    XCTAssertEqual(value(of: store.anyDispatch(Answer(value: 42))) as? Int, 42)
    XCTAssertTrue(value(of: store.anyDispatch(LogEffect(entry: "a"))) is Void)
    XCTAssertEqual(store.state, CounterState(counter: 1, log: ["a"]))
  }

  func testContextDispatch_settlesLikeTheStores() {
    let store = makeStore()
    let promise = store.dispatch(
      RunReturning { context in
        try Hydra.await(context.dispatch(Increment()))
        try Hydra.await(context.dispatch(LogEffect(entry: "nested")))
        let answer = try Hydra.await(context.dispatch(Answer(value: 40)))
        let erased = try Hydra.await(context.anyDispatch(Answer(value: 2)))
        return answer + (erased as? Int ?? 0)
      })
    XCTAssertEqual(value(of: promise), 42)
    XCTAssertEqual(store.state, CounterState(counter: 1, log: ["nested"]))
  }

  func testDispatchPromise_isEager_withoutAnyObserver() {
    let store = makeStore()
    let ran = expectation(description: "side effect ran")
    store.dispatch(Run { _ in ran.fulfill() })
    store.dispatch(Increment())
    wait(for: [ran], timeout: failsafeSeconds)
    // A later dispatch settles after the earlier, unobserved updater was applied.
    XCTAssertNotNil(value(of: store.dispatch(AddLog(entry: "later"))))
    XCTAssertEqual(store.state.counter, 1)
  }

  func testCancellingAQueuedUpdatersPromise_withdrawsTheUpdater() {
    let held = expectation(description: "first updater holds the turn")
    let release = ThreadLatch()
    let hold = interceptor { _, next, item in
      if (item as? AddLog)?.entry == "hold" {
        held.fulfill()
        try release.wait()
      }
      try next(item)
    }
    let store = makeStore(interceptors: [hold])
    let first = store.dispatch(AddLog(entry: "hold"))
    wait(for: [held], timeout: failsafeSeconds)

    let withdrawn = store.dispatch(AddLog(entry: "withdrawn"))
    withdrawn.cancel()
    release.open()

    XCTAssertNotNil(value(of: first))
    XCTAssertNotNil(value(of: store.dispatch(AddLog(entry: "after"))))
    XCTAssertEqual(store.state.log, ["hold", "after"])
    XCTAssertTrue(error(of: withdrawn) is CancellationError)
  }

  func testCancellingARunningSideEffectsPromise_cancelsItsTask() {
    let store = makeStore()
    let started = expectation(description: "started")
    let cancelled = expectation(description: "cancelled")
    let promise = store.dispatch(AwaitCancellation(started: started, cancelled: cancelled))
    wait(for: [started], timeout: failsafeSeconds)
    promise.cancel()
    wait(for: [cancelled], timeout: failsafeSeconds)
  }
}

/// An async side effect (they work in a `.katana6` store too) that waits until its task is cancelled.
private struct AwaitCancellation: SideEffect {
  let started: XCTestExpectation
  let cancelled: XCTestExpectation

  func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) async throws {
    let gate = Gate()
    await withTaskCancellationHandler {
      started.fulfill()
      await gate.wait()
    } onCancel: {
      cancelled.fulfill()
      gate.open()
    }
  }
}
