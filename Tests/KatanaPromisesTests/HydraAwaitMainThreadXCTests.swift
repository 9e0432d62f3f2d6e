import Dispatch
import Foundation
import KatanaPromises
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
