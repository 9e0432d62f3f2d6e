import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

/// The rest of Katana 6's store surface: `PartialStore` and `AnyStore`, custom `Executor`s, and dependency
/// containers whose `dispatch` returns promises.
final class LegacyStoreSurfaceXCTests: XCTestCase {
  override func invokeTest() {
    // On the pre-macOS 15 fallbacks too, in .ci/run's second run (KATANA_TASK_EXECUTOR_FALLBACKS=forced).
    onTaskExecutorPathOfThisRun { super.invokeTest() }
  }

  func testStore_promiseOverloads_pickTheItemsKind_withoutAmbiguity() {
    let store = makeStore()
    // The annotations are the test: each line compiles only if overload resolution picks the right one.
    let updater: Promise<Void> = store.dispatch(Increment())
    let sideEffect: Promise<Void> = store.dispatch(LogEffect(entry: "a"))
    let returning: Promise<Int> = store.dispatch(Answer(value: 3))
    let erasedUpdater: Promise<Void> = store.dispatch(ResetCounter())  // an `AnyStateUpdater`, through `AnyStore`
    let any: Promise<any Sendable> = store.anyDispatch(Answer(value: 4))
    XCTAssertNotNil(value(of: all(updater, sideEffect, erasedUpdater)))
    XCTAssertEqual(value(of: returning), 3)
    XCTAssertEqual(value(of: any) as? Int, 4)
    XCTAssertEqual(store.state, CounterState(counter: 0, log: ["a"]))
  }

  func testAnyStore_dispatchOverloads_pickTheItemsKind() {
    let store = makeStore()
    let erased: any AnyStore = store
    let returning: Promise<Int> = erased.dispatch(Answer(value: 5))
    let sideEffect: Promise<Void> = erased.dispatch(IncrementTwice())
    let updater: Promise<Void> = erased.dispatch(AddLog(entry: "a"))
    XCTAssertEqual(value(of: returning), 5)
    XCTAssertNotNil(value(of: all(sideEffect, updater)))
    XCTAssertEqual(erased.anyState as? CounterState, CounterState(counter: 2, log: ["a"]))
    XCTAssertEqual(value(of: erased.anyDispatch(Answer(value: 6))) as? Int, 6)
    XCTAssertEqual(value(of: dispatchThroughGenericCode(store)), 7)
  }

  func testPartialStore_readsTheState_dispatches_andListens() {
    let store = makeStore()
    let partial = PartialStore(store)
    let calls = LockedValue<[String]>([])
    let unsubscribe = partial.addListener { old, new in calls.withLock { $0.append("\(old.counter)->\(new.counter)") } }
    partial.addAnyListener { _, new in calls.withLock { $0.append("any \((new as? CounterState)?.counter ?? -1)") } }

    XCTAssertNotNil(value(of: partial.dispatch(Increment())))
    unsubscribe()
    XCTAssertEqual(value(of: partial.dispatch(Answer(value: 8))), 8)
    XCTAssertNotNil(value(of: partial.dispatch(IncrementTwice())))
    XCTAssertEqual(value(of: partial.anyDispatch(Answer(value: 9))) as? Int, 9)

    XCTAssertEqual(partial.state.counter, 3)
    XCTAssertEqual(calls.current, ["0->1", "any 1", "any 2", "any 3"])
  }

  func testPartialStorePromises_retryThroughTheStore_whileTheStoreLives_evenOnceTheWrapperIsGone() {
    var store: CounterStore? = makeStore()
    let attempts = LockedValue(0)
    let flaky = Run { _ in
      let attempt = attempts.incremented()
      if attempt == 1 { throw TestError(code: attempt) }
    }
    let promise = PartialStore(store!).dispatch(flaky)  // the wrapper is released at once
    XCTAssertNotNil(value(of: promise.retry(2)))
    XCTAssertEqual(attempts.current, 2)

    let failing = PartialStore(store!).anyDispatch(Fail(code: 1))
    XCTAssertNotNil(error(of: failing))
    store = nil
    XCTAssertEqual(error(of: failing.retry(2)) as? StoreError, .storeShutDown)
  }

  func testCustomExecutors_runTheStateInitializerAndTheListeners() {
    let initializerExecutor = CountingExecutor("test.initializer")
    let listenersExecutor = CountingExecutor("test.listeners")
    let initializerOnItsExecutor = LockedValue<Bool?>(nil)
    let store = CounterStore(
      interceptors: [],
      stateInitializer: {
        initializerOnItsExecutor.withLock { $0 = initializerExecutor.marked.isCurrent }
        return CounterState()
      },
      configuration: .init(
        stateInitializerAsyncProvider: initializerExecutor, listenersAsyncProvider: listenersExecutor))
    let listenerOnItsExecutor = LockedValue<[Bool]>([])
    store.addListener { _, _ in listenerOnItsExecutor.withLock { $0.append(listenersExecutor.marked.isCurrent) } }

    XCTAssertNotNil(value(of: all((0..<3).map { _ in store.dispatch(Increment()) })))
    listenersExecutor.marked.drain()
    XCTAssertEqual(initializerOnItsExecutor.current, true)
    XCTAssertGreaterThanOrEqual(initializerExecutor.calls, 1)
    XCTAssertEqual(listenerOnItsExecutor.current, [true, true, true])
    XCTAssertEqual(listenersExecutor.calls, 3)
  }

  func testExecutor_executeAsync_isKatana6sNameForExecute() {
    let ran = expectation(description: "ran")
    let executor: any Executor = DispatchQueue.main
    executor.executeAsync { ran.fulfill() }
    wait(for: [ran], timeout: failsafeSeconds)
  }

  func testPromiseDispatch_inADependencyContainer_returnsPromisesOfTheOutcome() {
    let store = makeStore()
    let dependencies = store.dependencies
    XCTAssertEqual(value(of: dependencies.dispatch(Answer(value: 4))) as? Int, 4)
    XCTAssertTrue(value(of: dependencies.dispatch(Increment())) is Void)
    // Chained calls run one after the other.
    let chained = dependencies.dispatch(AddLog(entry: "a")).then(in: .background) { _ in
      dependencies.dispatch(AddLog(entry: "b"))
    }
    XCTAssertNotNil(value(of: chained))
    // Katana 6's pattern: a side effect blocking on its container's dispatch.
    let fromSideEffect = store.dispatch(
      Run { context in try Hydra.await(context.dependencies.dispatch(AddLog(entry: "c"))) })
    XCTAssertNotNil(value(of: fromSideEffect))
    XCTAssertEqual(store.state, CounterState(counter: 1, log: ["a", "b", "c"]))
  }

  func testPromiseDispatch_isEager_withoutAnyObserver() {
    let store = makeStore()
    let ran = expectation(description: "dispatched without an observer")
    _ = store.dependencies.dispatch(Run { _ in ran.fulfill() })
    wait(for: [ran], timeout: failsafeSeconds)
  }

  func testPromiseDispatch_retry_dispatchesAgain() {
    let store = makeStore()
    let attempts = LockedValue(0)
    let flaky = failingUntil(attempt: 2, counting: attempts)
    XCTAssertEqual(value(of: store.dependencies.dispatch(flaky).retry(2)) as? Int, 2)
  }
}

/// Code written against Katana 6's `AnyStore`, generic over the store.
private func dispatchThroughGenericCode<S: AnyStore>(_ store: S) -> Promise<Int> {
  store.dispatch(Answer(value: 7))
}

/// A Katana 6-style custom executor: runs closures in order on a queue of its own, and counts them.
private final class CountingExecutor: Executor {
  let marked: MarkedQueue
  private let count = LockedValue(0)

  init(_ label: String) { marked = MarkedQueue(label) }

  var calls: Int { count.current }

  func execute(_ closure: @escaping @Sendable () -> Void) {
    count.withLock { $0 += 1 }
    marked.queue.async(execute: closure)
  }
}
