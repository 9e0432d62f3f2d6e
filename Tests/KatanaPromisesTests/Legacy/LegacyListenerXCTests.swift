import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

/// Katana 6 section 2.7: listeners on the listeners executor.
final class LegacyListenerXCTests: XCTestCase {
  override func invokeTest() {
    // On the pre-macOS 15 fallbacks too, in .ci/run's second run (KATANA_TASK_EXECUTOR_FALLBACKS=forced).
    onTaskExecutorPathOfThisRun { super.invokeTest() }
  }

  func testListeners_runOnTheListenersExecutor_oncePerUpdate_inCommitOrder() {
    let listenersQueue = MarkedQueue("test.listeners")
    let store = CounterStore(
      interceptors: [], stateInitializer: { CounterState() },
      configuration: .init(listenersAsyncProvider: listenersQueue.queue))
    let calls = LockedValue<[String]>([])
    let callsOffTheQueue = LockedValue(0)
    store.addListener { old, new in
      if !listenersQueue.isCurrent { callsOffTheQueue.withLock { $0 += 1 } }
      calls.withLock { $0.append("\(old.counter)->\(new.counter)") }
    }

    XCTAssertNotNil(value(of: all((0..<20).map { _ in store.dispatch(Increment()) })))
    XCTAssertNotNil(value(of: store.dispatch(Answer(value: 1))), "a side effect changes nothing by itself")
    // Each call was handed to the queue before its dispatch resolved.
    listenersQueue.drain()
    XCTAssertEqual(calls.current, (0..<20).map { "\($0)->\($0 + 1)" })
    XCTAssertEqual(callsOffTheQueue.current, 0)
  }

  func testListeners_areNotCalledForTheInitialState() {
    let store = makeStore(initialState: CounterState(counter: 10))
    let calls = LockedValue<[String]>([])
    store.addListener { old, new in calls.withLock { $0.append("\(old.counter)->\(new.counter)") } }
    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    XCTAssertEqual(calls.current, ["10->11"])
  }

  func testUnsubscribe_stopsFurtherCalls_andIsIdempotent() {
    var store: CounterStore? = makeStore()
    let calls = LockedValue(0)
    let unsubscribe = store!.addListener { _, _ in calls.withLock { $0 += 1 } }
    XCTAssertNotNil(value(of: store!.dispatch(Increment())))
    unsubscribe()
    unsubscribe()
    XCTAssertNotNil(value(of: store!.dispatch(Increment())))
    XCTAssertEqual(calls.current, 1)
    store = nil
    unsubscribe()
  }

  func testUnsubscribeOnTheListenersExecutor_skipsCallsThatHaveNotRunYet() {
    // As in Katana 6, where listener calls and removal both ran on the executor: once a view controller
    // has unsubscribed on the main queue, its listener is not called again.
    let store = makeStore()
    let calls = LockedValue(0)
    // The store starts on the main queue: let it.
    XCTAssertNotNil(value(of: store.dispatch(AddLog(entry: "ready"))))
    let unsubscribe = store.addListener { _, _ in calls.withLock { $0 += 1 } }

    // Wait without running the main queue: the listener call stays queued there.
    let handedOver = DispatchSemaphore(value: 0)
    store.dispatch(Increment()).then(in: .background) { handedOver.signal() }
    XCTAssertEqual(handedOver.wait(timeout: .now() + failsafeSeconds), .success)
    unsubscribe()

    XCTAssertNotNil(value(of: store.dispatch(Increment())), "runs the main queue, and the queued call")
    XCTAssertEqual(calls.current, 0)
  }

  func testListener_mayDispatch() {
    let store = makeStore()
    let dispatched = expectation(description: "dispatched from the listener")
    store.addListener { [weak store] old, new in
      guard old.counter == 0, new.counter == 1, let store else { return }
      store.dispatch(AddLog(entry: "from listener")).then { dispatched.fulfill() }
    }
    store.dispatch(Increment())
    wait(for: [dispatched], timeout: failsafeSeconds)
    XCTAssertEqual(store.state, CounterState(counter: 1, log: ["from listener"]))
  }

  func testListenerNewState_mayBeOlderThanTheStoresState() {
    // Katana 6 documented it (PR #218): a dispatch resolves once its listener calls are scheduled, not run.
    let listenersQueue = MarkedQueue("test.listeners")
    let release = ThreadLatch()
    listenersQueue.block(until: release)
    let store = CounterStore(
      interceptors: [], stateInitializer: { CounterState() },
      configuration: .init(listenersAsyncProvider: listenersQueue.queue))
    let calls = LockedValue<[String]>([])
    store.addListener { [weak store] old, new in
      let current = store?.state.counter ?? -1
      calls.withLock { $0.append("\(old.counter)->\(new.counter) (store: \(current))") }
    }

    XCTAssertNotNil(value(of: all((0..<3).map { _ in store.dispatch(Increment()) })))
    XCTAssertEqual(store.state.counter, 3)
    XCTAssertEqual(calls.current, [])

    release.open()
    listenersQueue.drain()
    XCTAssertEqual(calls.current, ["0->1 (store: 3)", "1->2 (store: 3)", "2->3 (store: 3)"])
  }

  func testListenerAddedAfterACommit_doesNotGetIt_evenIfTheExecutorHasNotRunTheCallsYet() {
    // Katana 6 handed the executor a block that called the listeners registered when it ran, so a listener
    // added in between got the earlier change. Here each call belongs to the listeners registered at commit.
    let listenersQueue = MarkedQueue("test.listeners")
    let release = ThreadLatch()
    listenersQueue.block(until: release)
    let store = CounterStore(
      interceptors: [], stateInitializer: { CounterState() },
      configuration: .init(listenersAsyncProvider: listenersQueue.queue))
    let calls = LockedValue<[String]>([])
    store.addListener { old, new in calls.withLock { $0.append("early \(old.counter)->\(new.counter)") } }
    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    store.addListener { old, new in calls.withLock { $0.append("late \(old.counter)->\(new.counter)") } }

    release.open()
    listenersQueue.drain()
    XCTAssertEqual(calls.current, ["early 0->1"])
  }

  func testAddAnyListener_getsTheStatesAsAnyState() {
    let store = makeStore()
    let calls = LockedValue<[String]>([])
    store.addAnyListener { old, new in
      let old = old as? CounterState
      let new = new as? CounterState
      calls.withLock { $0.append("\(old?.counter ?? -1)->\(new?.counter ?? -1)") }
    }
    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    XCTAssertEqual(calls.current, ["0->1"])
  }
}
