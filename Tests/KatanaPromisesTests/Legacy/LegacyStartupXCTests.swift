import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

/// Katana 6 section 2.6: the store's start-up phases with Katana 6's configuration.
final class LegacyStartupXCTests: XCTestCase {
  override func invokeTest() {
    // On the pre-macOS 15 fallbacks too, in .ci/run's second run (KATANA_TASK_EXECUTOR_FALLBACKS=forced).
    onTaskExecutorPathOfThisRun { super.invokeTest() }
  }

  func testStateInitializer_runsOnTheStateInitializerExecutor_andDispatchesMadeEarlierWaitInOrder() {
    let initializerQueue = MarkedQueue("test.state-initializer")
    let release = ThreadLatch()
    initializerQueue.block(until: release)
    let ranOnQueue = LockedValue<Bool?>(nil)
    let store = CounterStore(
      interceptors: [],
      stateInitializer: {
        ranOnQueue.withLock { $0 = initializerQueue.isCurrent }
        return CounterState(counter: 10, log: ["initial"])
      },
      configuration: .init(stateInitializerAsyncProvider: initializerQueue.queue))

    XCTAssertFalse(store.isReady)
    XCTAssertEqual(store.state, CounterState(), "the empty state until the initializer has run")
    let promises = ["a", "b", "c"].map { store.dispatch(AddLog(entry: $0)) }
    XCTAssertTrue(promises.allSatisfy(\.isPending))
    XCTAssertNil(ranOnQueue.current)

    release.open()
    XCTAssertNotNil(value(of: all(promises)))
    XCTAssertTrue(store.isReady)
    XCTAssertEqual(ranOnQueue.current, true)
    XCTAssertEqual(store.state, CounterState(counter: 10, log: ["initial", "a", "b", "c"]))
  }

  func testKatana6Configuration_runsTheStateInitializerOnTheMainThread() {
    let onMain = LockedValue<Bool?>(nil)
    let store = CounterStore(
      interceptors: [],
      stateInitializer: {
        onMain.withLock { $0 = Thread.isMainThread }
        return CounterState()
      },
      configuration: .katana6)
    XCTAssertFalse(store.isReady, "it starts asynchronously, even on the main queue")
    XCTAssertNotNil(value(of: store.dispatch(Increment())))
    XCTAssertEqual(onMain.current, true)
  }

  func testSideEffectDispatchedBeforeReady_runsOnceTheUpdatersDispatchedBeforeItAreApplied() {
    // Katana 6 resumed its side-effect queue first: a pre-ready side effect ran before every pre-ready
    // updater. Here every pre-ready item keeps its place: the side effect sees the updater dispatched first.
    let initializerQueue = MarkedQueue("test.state-initializer")
    let release = ThreadLatch()
    initializerQueue.block(until: release)
    let seen = Recorder<String>()
    let store = CounterStore(
      interceptors: [recordingInterceptor(seen)],
      stateInitializer: { CounterState(log: ["initial"]) },
      configuration: .init(stateInitializerAsyncProvider: initializerQueue.queue))

    let logSeenBySideEffect = LockedValue<[String]>([])
    let first = store.dispatch(AddLog(entry: "a"))
    let sideEffect = store.dispatch(Run { context in logSeenBySideEffect.withLock { $0 = context.getState().log } })
    let last = store.dispatch(AddLog(entry: "b"))
    release.open()

    XCTAssertNotNil(value(of: all(first, sideEffect, last)))
    XCTAssertEqual(Array(logSeenBySideEffect.current.prefix(2)), ["initial", "a"])
    XCTAssertEqual(seen.values.first, "AddLog(a)")
    XCTAssertEqual(store.state.log, ["initial", "a", "b"])
  }

  func testDependenciesInitializer_mayDispatch_theItemRunsOnceTheStoreIsReady() {
    var fromDependencies: Promise<any Sendable>?
    var stateSeenByDependencies: CounterState?
    let store = CounterStore(
      interceptors: [],
      stateInitializer: { CounterState(counter: 10, log: ["initial"]) },
      dependenciesInitializer: { dispatch, getState in
        let dependencies = AppDependencies(dispatch: dispatch, getState: { getState() })
        fromDependencies = dependencies.dispatch(AddLog(entry: "fromDeps"))
        // Katana 6 asserted in debug builds; here it is the empty state, as in Katana 6's release builds.
        stateSeenByDependencies = getState()
        return dependencies
      },
      configuration: .katana6)

    XCTAssertEqual(stateSeenByDependencies, CounterState())
    guard let fromDependencies else { return XCTFail("the dependencies initializer did not run") }
    XCTAssertNotNil(value(of: fromDependencies))
    XCTAssertEqual(store.state.log, ["initial", "fromDeps"])
  }

  func testFailingStateInitializer_rejectsEveryDispatch_withStartupFailed() {
    // Katana 6's initializer could not fail. An `async throws` one can: dispatches reject instead of waiting
    // forever.
    let store = CounterStore(
      interceptors: [], stateInitializer: { throw TestError(code: 5) }, configuration: .katana6)
    let waiting = store.dispatch(Increment())
    XCTAssertEqual(error(of: waiting) as? StoreError, .startupFailed(TestError(code: 5)))
    XCTAssertEqual(error(of: store.dispatch(Answer(value: 1))) as? StoreError, .startupFailed(TestError(code: 5)))
    XCTAssertFalse(store.isReady)
  }
}
