import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

// The seeds' examples after stage 1, run by XCTest cases written the way Katana 6 suites were: promise
// chains observed on the main queue (`then(in: .main)`) with expectations, and `Hydra.await` on the main
// thread. The expectations' timeouts are failsafes only: every wait ends on an event.

/// A side effect that fails until its third attempt: for `retry`.
private struct FlakyIncrement: Stage1.AppSideEffect {
  let attempts: LockedBox<Int>

  func sideEffect(_ context: SideEffectContext<Stage1.CounterState, Stage1.AppDependencies>) throws {
    let attempt = attempts.withLock { attempts -> Int in
      attempts += 1
      return attempts
    }
    guard attempt >= 3 else { throw TestError(code: attempt) }
    try Hydra.await(context.dispatch(Stage1.IncrementCounter()))
  }
}

final class Stage1XCTests: XCTestCase {
  override func invokeTest() {
    // On the pre-macOS 15 fallbacks too, in .ci/run's second run (KATANA_TASK_EXECUTOR_FALLBACKS=forced).
    onTaskExecutorPathOfThisRun { super.invokeTest() }
  }

  typealias CounterState = Stage1.CounterState

  func testOverview_appliesTheIncrement_andCallsListenersOnTheMainQueue() {
    let store = Stage1.overview()
    let changes = LockedBox<[Int]>([])
    let listened = expectation(description: "listener")
    store.addListener { _, newState in
      XCTAssertTrue(Thread.isMainThread)
      changes.withLock { $0.append(newState.counter) }
      listened.fulfill()
    }
    wait(for: [listened], timeout: 30)
    XCTAssertEqual(store.state.counter, 1)
    XCTAssertEqual(changes.value, [1])
  }

  // MIGRATION-SNIPPET-BEGIN: stage1-xctest
  func testGenerateRandomNumber_updatesTheCounter() {
    let store = Stage1.testStore(number: 42)
    let expectation = self.expectation(description: "side effect done")
    store.dispatch(Stage1.GenerateRandomNumberFromBackendAndWait()).then(in: .main) {
      XCTAssertEqual(store.state.counter, 42)
      expectation.fulfill()
    }
    self.wait(for: [expectation], timeout: 30)
  }
  // MIGRATION-SNIPPET-END: stage1-xctest

  // MIGRATION-SNIPPET-BEGIN: stage1-xctest-shared-state
  @MainActor func testListener_seesEveryChange() {
    let changes = LockedBox<[Int]>([])
    let store = Stage1.testStore(number: 42)
    let listened = expectation(description: "listener")
    store.addListener { _, newState in
      changes.withLock { $0.append(newState.counter) }
      listened.fulfill()
    }
    store.dispatch(Stage1.IncrementCounter())
    waitForExpectations(timeout: 30)
    XCTAssertEqual(changes.value, [1])
  }
  // MIGRATION-SNIPPET-END: stage1-xctest-shared-state

  func testGenerateRandomNumber_promiseChain_updatesTheCounterAfterTheSideEffectReturned() {
    let store = Stage1.testStore(number: 7)
    let updated = expectation(description: "counter updated")
    store.addListener { _, newState in
      XCTAssertEqual(newState.counter, 7)
      updated.fulfill()
    }
    let returned = expectation(description: "side effect returned")
    store.dispatch(Stage1.GenerateRandomNumberFromBackend()).then(in: .main) { returned.fulfill() }
    wait(for: [returned, updated], timeout: 30)
    XCTAssertEqual(store.state.counter, 7)
  }

  func testPurchaseProduct_returnsTheValidatedPurchase() throws {
    let store = Stage1.testStore()
    let result = try Hydra.await(failsafe(store.dispatch(Stage1.PurchaseProduct(productID: "pro"))))
    let receipt = Stage1.Receipt(productID: "pro")
    XCTAssertEqual(result, .success(Stage1.PurchaseResult(validation: Stage1.Validation(receipt: receipt))))
  }

  func testPurchaseProduct_mapsStoreKitAndValidationFailures() throws {
    let storeKit = Stage1.StoreKitError(reason: "cancelled")
    let rejectingStoreKit = Stage1.testStore(monetization: Stage1.FakeMonetization(purchaseError: storeKit))
    XCTAssertEqual(
      try Hydra.await(failsafe(rejectingStoreKit.dispatch(Stage1.PurchaseProduct(productID: "pro")))),
      .failure(.storekitRejected(storeKit)))

    let validation = Stage1.ValidationError(reason: "forged")
    let rejectingReceipt = Stage1.testStore(monetization: Stage1.FakeMonetization(validationError: validation))
    XCTAssertEqual(
      try Hydra.await(failsafe(rejectingReceipt.dispatch(Stage1.PurchaseProduct(productID: "pro")))),
      .failure(.validationRejected(validation)))
  }

  func testAppReturningSideEffect_returnsTheTypedValue() throws {
    let store = Stage1.testStore()
    try Hydra.await(failsafe(store.dispatch(Stage1.IncrementCounter())))
    XCTAssertEqual(try Hydra.await(failsafe(store.dispatch(Stage1.ReadCounter()))), 1)
  }

  func testSideEffectPage_synchronousSideEffectIsDoneWhenItsPromiseResolves() throws {
    let store = Stage1.testStore(number: 5)
    try Hydra.await(failsafe(store.dispatch(Stage1.AddRandomNumber())))
    XCTAssertEqual(store.state.counter, 5)
    try Hydra.await(failsafe(store.dispatch(Stage1.AddRandomNumber())))
    XCTAssertEqual(store.state.counter, 10)
  }

  func testSideEffectPage_asynchronousSideEffectUpdatesLater() throws {
    let store = Stage1.testStore(number: 5)
    let updated = expectation(description: "counter updated")
    store.addListener { _, newState in
      XCTAssertEqual(newState.counter, 5)
      updated.fulfill()
    }
    try Hydra.await(failsafe(store.dispatch(Stage1.AddRandomNumberLater())))
    wait(for: [updated], timeout: 30)
  }

  func testDependencies_sameContainerForEverySideEffect_andItsDispatchReturnsPromises() throws {
    let store = Stage1.testStore()
    let dependencies = store.dependencies
    let done = expectation(description: "dispatched from the container")
    dependencies.dispatch(Stage1.IncrementCounter()).then(in: .main) { _ in
      XCTAssertEqual(store.state.counter, 1)
      done.fulfill()
    }
    wait(for: [done], timeout: 30)
    let seen = try Hydra.await(failsafe(store.dispatch(SeenDependencies())))
    XCTAssertTrue(seen === dependencies)
  }

  func testLogger_logsHandledItemsExceptTheBlackListed() throws {
    // The README's store prints to standard output; this one hands the same entries to a recorder.
    let readmeStore = Stage1.storeWithLogger()
    try Hydra.await(failsafe(readmeStore.dispatch(Stage1.IncrementCounter())))
    XCTAssertEqual(readmeStore.state.counter, 1)

    let logged = LockedBox<[String]>([])
    let logger = DispatchableLogger.interceptor(blackList: [Stage1.NotToLog.self]) { item in
      logged.withLock { $0.append(DispatchableLogger.message(for: item)) }
    }
    let store = Stage1.testStore(interceptors: [logger])
    try Hydra.await(failsafe(store.dispatch(Stage1.IncrementCounter())))
    try Hydra.await(failsafe(store.dispatch(Stage1.NotToLog())))
    try Hydra.await(failsafe(store.dispatch(Stage1.GenerateRandomNumberFromBackendAndWait())))
    XCTAssertEqual(
      logged.value,
      [
        "[Dispatchable]: KatanaMigrationTests.Stage1.IncrementCounter",
        "[Dispatchable]: KatanaMigrationTests.Stage1.SetCounter",
        "[Dispatchable]: KatanaMigrationTests.Stage1.GenerateRandomNumberFromBackendAndWait",
      ])
  }

  func testObserverInterceptor_onStartRunsAfterWhatWasDispatchedBeforeTheStoreWasReady() {
    // On the main thread the store cannot start (its state initializer runs on the main queue) before this
    // method waits, so the increment is dispatched before the store is ready.
    let store = Stage1.storeWithObserver()
    let changes = LockedBox<[Int]>([])
    let listened = expectation(description: "listener")
    listened.expectedFulfillmentCount = 2
    store.addListener { _, newState in
      changes.withLock { $0.append(newState.counter) }
      listened.fulfill()
    }
    store.dispatch(Stage1.IncrementCounter())
    wait(for: [listened], timeout: 30)
    XCTAssertEqual(changes.value, [1, 100])
  }

  func testSignposts_storeRuns() throws {
    let store = Stage1.storeWithSignposts()
    try Hydra.await(failsafe(store.dispatch(Stage1.IncrementCounter())))
    XCTAssertEqual(store.state.counter, 1)
  }

  func testSynchronousInterceptors_trackAndReject() throws {
    let tracker = Stage1.RecordingTracker()
    let store = Stage1.storeWithInterceptors(tracker: tracker)
    try Hydra.await(failsafe(store.dispatch(Stage1.IncrementCounter())))
    try Hydra.await(failsafe(store.dispatch(Stage1.IncrementCounter())))
    XCTAssertThrowsError(try Hydra.await(failsafe(store.dispatch(Stage1.IncrementCounter())))) { error in
      XCTAssertTrue(error is Stage1.CounterLimitReached)
    }
    XCTAssertEqual(store.state.counter, 2)
    // The analytics interceptor comes first: it saw the rejection as an error from `next`, and tracked nothing.
    XCTAssertEqual(tracker.events.current.count, 2)
  }

  func testPartialStore_readsAndDispatches() throws {
    let store = Stage1.testStore()
    let viewModel = Stage1.makeViewModel(store: store)
    let done = expectation(description: "incremented")
    store.addListener { _, _ in done.fulfill() }
    viewModel.increment()
    wait(for: [done], timeout: 30)
    XCTAssertEqual(viewModel.counterText, "1")
  }

  @MainActor func testListener_updatesUIOnTheMainActor() {
    let store = Stage1.testStore()
    let label = Stage1.CounterLabel()
    let unsubscribe = Stage1.bind(label, to: store)
    let done = expectation(description: "then after the listener")
    store.dispatch(Stage1.IncrementCounter()).then(in: .main) {
      // Listeners run on the main queue, handed over before the dispatch's promise resolves, so this
      // callback, which also runs there, comes after them.
      MainActor.assumeIsolated { XCTAssertEqual(label.text, "1") }
      done.fulfill()
    }
    wait(for: [done], timeout: 30)
    unsubscribe()
  }

  func testConfiguration_listenersRunOnTheGivenQueue() {
    let listenerQueue = DispatchQueue(label: "listeners")
    let store = Stage1.storeWithListenerQueue(listenerQueue)
    let listened = expectation(description: "listener")
    store.addListener { _, _ in
      dispatchPrecondition(condition: .onQueue(listenerQueue))
      listened.fulfill()
    }
    store.dispatch(Stage1.IncrementCounter())
    wait(for: [listened], timeout: 30)
  }

  func testCustomExecutor_runsTheListeners() {
    let queue = DispatchQueue(label: "listeners")
    let store = Stage1.storeWithListenerExecutor(Stage1.QueueExecutor(queue: queue))
    let listened = expectation(description: "listener")
    store.addListener { _, _ in
      dispatchPrecondition(condition: .onQueue(queue))
      listened.fulfill()
    }
    store.dispatch(Stage1.IncrementCounter())
    wait(for: [listened], timeout: 30)
  }

  func testDependenciesInitializer_injectsTheFakes() throws {
    let store = Stage1.storeWithFakes()
    try Hydra.await(failsafe(store.dispatch(Stage1.GenerateRandomNumberFromBackendAndWait())))
    XCTAssertEqual(store.state.counter, 42)
  }

  func testRetry_dispatchesTheSideEffectAgain() throws {
    let store = Stage1.testStore()
    let attempts = LockedBox(0)
    try Hydra.await(failsafe(store.dispatch(FlakyIncrement(attempts: attempts)).retry(3)))
    XCTAssertEqual(attempts.value, 3)
    XCTAssertEqual(store.state.counter, 1)
  }
}

/// Returns the dependency container it gets.
private struct SeenDependencies: ReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) throws -> Stage1.AppDependencies {
    try context.typed(Stage1.CounterState.self, Stage1.AppDependencies.self).dependencies
  }
}
