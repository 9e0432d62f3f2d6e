import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

/// Katana 6 section 2.2 (state updaters: one at a time, in call order) and 2.3 (side effects: concurrent),
/// through the promise-returning `dispatch` of a `.katana6` store.
final class LegacyOrderingXCTests: XCTestCase {
  override func invokeTest() {
    // On the pre-macOS 15 fallbacks too, in .ci/run's second run (KATANA_TASK_EXECUTOR_FALLBACKS=forced).
    onTaskExecutorPathOfThisRun { super.invokeTest() }
  }

  func testDispatch_whenNotChained_updatersApplyInCallOrder() {
    // Katana 6's test slowed the first updaters down with sleeps; here an interceptor holds the first one
    // until the others are queued behind it.
    let firstStarted = expectation(description: "first updater intercepted")
    let release = ThreadLatch()
    let holdFirst = interceptor { _, next, item in
      if (item as? AddLog)?.entry == "1" {
        firstStarted.fulfill()
        try release.wait()
      }
      try next(item)
    }
    let store = makeStore(interceptors: [holdFirst])

    let first = store.dispatch(AddLog(entry: "1"))
    wait(for: [firstStarted], timeout: failsafeSeconds)
    let second = store.dispatch(AddLog(entry: "2"))
    let third = store.dispatch(AddLog(entry: "3"))
    XCTAssertEqual(store.state.log, [], "no updater overtakes the one holding the turn")
    XCTAssertTrue(second.isPending)
    XCTAssertTrue(third.isPending)
    release.open()

    _ = value(of: all(first, second, third))
    XCTAssertEqual(store.state.log, ["1", "2", "3"])
  }

  func testDispatch_manyUpdatersFromOneThread_applyInCallOrder() {
    let store = makeStore()
    let promises = (0..<200).map { store.dispatch(AddLog(entry: "\($0)")) }
    _ = value(of: all(promises))
    XCTAssertEqual(store.state.log, (0..<200).map { "\($0)" })
  }

  func testDispatch_fromSeveralThreads_eachThreadsUpdatersApplyInItsOrder() {
    let store = makeStore()
    let threads = 4
    let perThread = 50
    let promises = LockedValue<[Promise<Void>]>([])
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
      for index in 0..<perThread {
        let promise = store.dispatch(AddLog(entry: "\(thread)-\(index)"))
        promises.withLock { $0.append(promise) }
      }
    }
    _ = value(of: all(promises.current))

    let log = store.state.log
    XCTAssertEqual(log.count, threads * perThread)
    for thread in 0..<threads {
      let mine = log.filter { $0.hasPrefix("\(thread)-") }
      XCTAssertEqual(mine, (0..<perThread).map { "\(thread)-\($0)" })
    }
  }

  func testSideEffects_runConcurrently() {
    // Each side effect blocks until all of them have started: they can only finish if they run at the same
    // time (otherwise the barrier's failsafe rejects them).
    let store = makeStore()
    let barrier = ThreadBarrier(parties: 8)
    let promises = (0..<8).map { _ in store.dispatch(Run { _ in try barrier.arriveAndWait() }) }
    XCTAssertNotNil(value(of: all(promises)))
  }

  func testBlockedSideEffect_doesNotHoldUpUpdaters() {
    let store = makeStore()
    let release = ThreadLatch()
    let blocked = store.dispatch(Run { _ in try release.wait() })

    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    XCTAssertEqual(store.state.counter, 1)
    XCTAssertTrue(blocked.isPending)

    release.open()
    XCTAssertNotNil(value(of: blocked))
  }

  func testSideEffects_runOffTheMainThread_andOffEachOthersThreads() {
    let store = makeStore()
    let threads = LockedValue<[Thread]>([])
    let barrier = ThreadBarrier(parties: 2)
    let record = Run { _ in
      threads.withLock { $0.append(Thread.current) }
      try barrier.arriveAndWait()
    }
    _ = value(of: all(store.dispatch(record), store.dispatch(record)))
    XCTAssertEqual(threads.current.count, 2)
    XCTAssertFalse(threads.current.contains { $0.isMainThread })
    XCTAssertFalse(threads.current[0] === threads.current[1])
  }
}
