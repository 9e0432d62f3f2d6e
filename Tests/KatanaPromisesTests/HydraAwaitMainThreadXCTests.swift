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

  func testMainQueueBlock_withRunLoopSources_runsTheCallbacksAsTheyArrive_onceOneWentStale() {
    // As in an app, whose main run loop always has sources: the nested run loop keeps returning, but it cannot
    // run the main queue inside a main-queue block, so a callback there runs only once it has waited past the
    // stale-job bound (100 ms). The first such callback shows the run loop does not service the main queue:
    // the rest must run as they arrive, not each after the bound again.
    let callbacks = 20
    let staleJobSeconds = 0.1
    let waited = expectation(description: "waited")
    let result = LockedValue<Int?>(nil)
    // For each callback, how long after its predecessor returned it started (its promise settled then).
    let gaps = LockedValue<[TimeInterval]>([])
    DispatchQueue.main.async {
      let timer = Timer(timeInterval: 0.01, repeats: true) { _ in }
      RunLoop.main.add(timer, forMode: .default)
      defer { timer.invalidate() }
      let lastReturn = LockedValue(Date())
      var chain = Promise(resolved: 0)
      for _ in 0..<callbacks {
        chain = chain.then { value -> Int in
          gaps.withLock { $0.append(Date().timeIntervalSince(lastReturn.current)) }
          lastReturn.withLock { $0 = Date() }
          return value + 1
        }
      }
      let value = try? Hydra.await(failsafe(chain))
      result.withLock { $0 = value }
      waited.fulfill()
    }
    wait(for: [waited], timeout: 60)
    XCTAssertEqual(result.current, callbacks)
    // Each callback that ran as a stale job waited at least the bound, by construction: the first one must,
    // not every one.
    let stale = gaps.current.filter { $0 >= staleJobSeconds }
    XCTAssertLessThanOrEqual(
      stale.count, callbacks / 2, "callbacks that waited past the stale-job bound: \(gaps.current)")
  }

  func testMainThread_aLongMainQueueBlockDuringTheWait_keepsRunningTheRunLoop() {
    // A main-queue block that runs past the stale-job bound inside the wait's run loop leaves a callback that
    // arrived meanwhile stale, although this run loop does service the main queue: the wait must not take it
    // for proof of the contrary, or the plain main-queue block that the callback posts would never run.
    let source = Promise<Int>()
    let done = Promise<Int>()
    let chain = source.then { value -> Int in
      DispatchQueue.main.async { done.resolve(value) }
      return value
    }
    DispatchQueue.main.async {
      source.resolve(1)  // the callback arrives now, behind this block
      // Not a synchronisation: this is the long block under test, past the bound (100 ms).
      Thread.sleep(forTimeInterval: 0.2)
    }
    XCTAssertEqual(try Hydra.await(failsafe(chain.then { _ in done })), 1)
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
