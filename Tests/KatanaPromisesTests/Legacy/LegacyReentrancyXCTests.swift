import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

/// Katana 6 sections 2.9 (reentrancy) and 2.10 (error propagation): side effects that block on nested
/// dispatches, and blocking waits where they cannot work.
final class LegacyReentrancyXCTests: XCTestCase {
  override func invokeTest() {
    // On the pre-macOS 15 fallbacks too, in .ci/run's second run (KATANA_TASK_EXECUTOR_FALLBACKS=forced).
    onTaskExecutorPathOfThisRun { super.invokeTest() }
  }

  func testSideEffect_awaitingANestedUpdater_seesItInGetState() {
    let store = makeStore()
    let promise = store.dispatch(
      RunReturning { context in
        let typed = try context.typed(CounterState.self, AppDependencies.self)
        try Hydra.await(typed.dispatch(Increment()))
        let afterFirst = typed.getState().counter
        try Hydra.await(typed.dispatch(Increment()))
        return afterFirst * 10 + typed.getState().counter
      })
    XCTAssertEqual(value(of: promise), 12)
  }

  func testSideEffects_awaitingNestedSideEffects_severalLevelsDeep() {
    let store = makeStore()
    XCTAssertNotNil(value(of: store.dispatch(Nest(depth: 5))))
    XCTAssertEqual(store.state.log, ["5", "4", "3", "2", "1", "0"])
  }

  func testNestedFailure_rejectsTheOuterPromise_withTheSameError() {
    // Katana 6 [ran]: rejected(Boom()), through `try Hydra.await(context.dispatch(failing))`.
    let store = makeStore()
    let outer = store.dispatch(
      Run { context in
        try Hydra.await(context.dispatch(Run { context in try Hydra.await(context.dispatch(Fail(code: 9))) }))
      })
    XCTAssertEqual(error(of: outer) as? TestError, TestError(code: 9))
  }

  func testNestedFailure_canBeCaughtByTheOuterSideEffect() {
    let store = makeStore()
    let outer = store.dispatch(
      RunReturning { context in
        do {
          try Hydra.await(context.dispatch(Fail(code: 4)))
          return 0
        } catch let error as TestError {
          return error.code
        }
      })
    XCTAssertEqual(value(of: outer), 4)
  }

  func testHydraAwaitInTheMainContext_throwsInvalidContext_insideASideEffect() {
    let store = makeStore()
    let promiseForm = store.dispatch(Run { context in try Hydra.await(in: .main, context.dispatch(Increment())) })
    XCTAssertEqual(error(of: promiseForm) as? PromiseError, .invalidContext)
    let bodyForm = store.dispatch(
      Run { _ in
        let _: Int = try Hydra.await(in: .main) { resolve, _, _ in resolve(1) }
      })
    XCTAssertEqual(error(of: bodyForm) as? PromiseError, .invalidContext)
  }

  func testHydraAwaitInTheMainContext_throwsInvalidContext_onTheMainThread() {
    let store = makeStore()
    XCTAssertThrowsError(try Hydra.await(in: .main, store.dispatch(Increment()))) { error in
      XCTAssertEqual(error as? PromiseError, .invalidContext)
    }
  }

  func testHydraAwait_onTheMainThread_waitsForADispatch_whileTheMainQueueRuns() throws {
    // A Katana 6 test could block its main thread on a dispatch; the store's start-up and listeners need
    // the main queue, which the wait keeps running.
    let store = makeStore()
    let calls = LockedValue(0)
    store.addListener { _, _ in calls.withLock { $0 += 1 } }
    try Hydra.await(failsafe(store.dispatch(IncrementTwice())))
    XCTAssertEqual(store.state.counter, 2)
    XCTAssertEqual(try Hydra.await(failsafe(store.dispatch(Answer(value: 42)))), 42)
    // The listener calls were queued on the main queue before the promises resolved.
    try Hydra.await(failsafe(Promise<Void>(resolved: ()).then { () }))
    XCTAssertEqual(calls.current, 2)
  }

  func testDispatch_fromANotificationObserver_onAnotherThread() {
    let store = makeStore()
    let center = NotificationCenter()
    let name = Notification.Name("LegacyReentrancyXCTests.ping")
    let handled = expectation(description: "handled")
    let observer = center.addObserver(forName: name, object: nil, queue: nil) { [weak store] _ in
      store?.dispatch(Increment()).then { handled.fulfill() }
    }
    defer { center.removeObserver(observer) }
    DispatchQueue.global().async { center.post(name: name, object: nil) }
    wait(for: [handled], timeout: failsafeSeconds)
    XCTAssertEqual(store.state.counter, 1)
  }
}

/// Logs its depth, then blocks on the same side effect one level down.
private struct Nest: SideEffect {
  let depth: Int
  func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) throws {
    try Hydra.await(context.dispatch(AddLog(entry: "\(depth)")))
    if depth > 0 { try Hydra.await(context.dispatch(Nest(depth: depth - 1))) }
  }
}
