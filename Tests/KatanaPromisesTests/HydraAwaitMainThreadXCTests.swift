import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

/// `Hydra.await` on the main thread, outside any task: where XCTest runs synchronous test methods, and
/// where Katana 6 test suites blocked on promises.
///
/// Each wait has a failsafe (``failsafe(_:)``): a regression fails the test instead of hanging the run.
final class HydraAwaitMainThreadXCTests: XCTestCase {
  func testMainThread_runsMainContextCallbacksWhileWaiting() throws {
    XCTAssertTrue(Thread.isMainThread)
    let chain = Promise(resolved: 1).then { $0 + 1 }.then(in: .background) { $0 * 10 }.then { $0 + 1 }
    XCTAssertEqual(try Hydra.await(failsafe(chain)), 21)
  }

  func testMainThread_runsOtherMainQueueWork_asARunLoopWaitDoes() throws {
    let promise = Promise<Int> { resolve, _, _ in
      DispatchQueue.main.async { resolve(3) }
    }
    XCTAssertEqual(try Hydra.await(failsafe(promise)), 3)
  }

  func testMainThread_waitsForAValueFromAnotherThread() throws {
    let promise = Promise<Int>()
    DispatchQueue.global().async { promise.resolve(4) }
    XCTAssertEqual(try Hydra.await(failsafe(promise)), 4)
  }

  func testMainThread_nestedAwaitInsideAMainCallback() throws {
    let outer = Promise(resolved: 1).then { value -> Int in
      // A Katana 6 pattern: a `then` on main that blocks for another promise.
      let inner = try Hydra.await(failsafe(Promise(resolved: value).then { $0 + 1 }))
      return inner * 10
    }
    XCTAssertEqual(try Hydra.await(failsafe(outer)), 20)
  }

  func testMainThread_keepsTheMainQueueOrder() throws {
    let log = LockedValue<[String]>([])
    let source = Promise<Int>()
    let chained = source.then { _ in log.withLock { $0.append("then") } }
    // Both wait on the main queue before the wait starts, the block first.
    DispatchQueue.main.async { log.withLock { $0.append("block posted first") } }
    source.resolve(1)
    try Hydra.await(failsafe(chained))
    XCTAssertEqual(log.current, ["block posted first", "then"])
  }

  func testMainQueueBlock_onTheMainThread_withRunLoopSources_stillRunsTheCallbacks() {
    // The block runs from the run loop (XCTest's wait), which cannot run the main queue again inside it,
    // and a timer keeps that nested run loop busy.
    let waited = expectation(description: "waited")
    let result = LockedValue<Int?>(nil)
    DispatchQueue.main.async {
      let timer = Timer(timeInterval: 0.01, repeats: true) { _ in }
      RunLoop.main.add(timer, forMode: .default)
      defer { timer.invalidate() }
      let value = try? Hydra.await(failsafe(Promise(resolved: 1).then { $0 + 1 }.then { $0 * 10 }))
      result.withLock { $0 = value }
      waited.fulfill()
    }
    wait(for: [waited], timeout: 60)
    XCTAssertEqual(result.current, 20)
  }

  func testThenOnMain_withAnExpectation_asKatana6TestsWait() {
    let done = expectation(description: "then ran")
    Promise(resolved: 5).then(in: .main) { value in
      XCTAssertEqual(value, 5)
      XCTAssertTrue(Thread.isMainThread)
      done.fulfill()
    }
    wait(for: [done], timeout: 30)
  }
}
