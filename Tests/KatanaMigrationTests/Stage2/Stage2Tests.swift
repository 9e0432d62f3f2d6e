import Katana
import KatanaTestSupport
import KatanaTesting
import Testing

// The seeds' examples after stage 2, run by Swift Testing suites: the XCTest cases of `Stage1XCTests` moved
// to `async` tests (awaiting the dispatch instead of an expectation) and to KatanaTesting's `TestStore`.

@Suite("Stage 2: the README's examples on async/await", .timeLimit(.failsafeMinutes(3)))
struct Stage2StoreTests {
  typealias CounterState = Stage2.CounterState

  @Test func overview_appliesTheIncrement_andListenersHaveSeenIt() async throws {
    let store = try await Stage2.overview()
    #expect(store.state.counter == 1)
    let changes = Recorder<Int>()
    store.addListener { _, newState in changes.append(newState.counter) }
    try await Stage2.incrementFromSynchronousCode(store).value
    #expect(changes.values == [2])
  }

  // MIGRATION-SNIPPET-BEGIN: stage2-test
  @Test func generateRandomNumber_updatesTheCounter() async throws {
    let store = Stage2.testStore(number: 42)
    try await store.dispatch(Stage2.GenerateRandomNumberFromBackend())
    #expect(store.state.counter == 42)
  }
  // MIGRATION-SNIPPET-END: stage2-test

  @Test func purchaseProduct_returnsTheValidatedPurchase_orTheMappedFailure() async throws {
    let receipt = Stage2.Receipt(productID: "pro")
    let success = try await Stage2.testStore().dispatch(Stage2.PurchaseProduct(productID: "pro"))
    #expect(success == .success(Stage2.PurchaseResult(validation: Stage2.Validation(receipt: receipt))))

    let storeKit = Stage2.StoreKitError(reason: "cancelled")
    let rejectingStoreKit = Stage2.testStore(monetization: Stage2.FakeMonetization(purchaseError: storeKit))
    #expect(
      try await rejectingStoreKit.dispatch(Stage2.PurchaseProduct(productID: "pro"))
        == .failure(.storekitRejected(storeKit)))

    let validation = Stage2.ValidationError(reason: "forged")
    let rejectingReceipt = Stage2.testStore(monetization: Stage2.FakeMonetization(validationError: validation))
    #expect(
      try await rejectingReceipt.dispatch(Stage2.PurchaseProduct(productID: "pro"))
        == .failure(.validationRejected(validation)))
  }

  @Test func purchaseProduct_inAStoreOfAnotherType_throwsWrongContextType() async throws {
    let store = Store<CounterState, EmptySideEffectDependencyContainer>()
    let error = await #expect(throws: StoreError.self) {
      try await store.dispatch(Stage2.PurchaseProduct(productID: "pro"))
    }
    guard case .wrongContextType = error else {
      Issue.record("Expected StoreError.wrongContextType, got \(String(describing: error))")
      return
    }
  }

  @Test func appReturningSideEffect_returnsTheTypedValue() async throws {
    let store = Stage2.testStore()
    try await store.dispatch(Stage2.IncrementCounter())
    #expect(try await store.dispatch(Stage2.ReadCounter()) == 1)
  }

  @Test func sideEffectPage_awaitingSideEffectIsDone_whenItsDispatchReturns() async throws {
    let store = Stage2.testStore(number: 5)
    try await store.dispatch(Stage2.AddRandomNumber())
    #expect(store.state.counter == 5)
  }

  @Test func sideEffectPage_sentWork_updatesLater() async throws {
    let store = Stage2.testStore(number: 5)
    let changes = Recorder<Int>()
    store.addListener { _, newState in changes.append(newState.counter) }
    try await store.dispatch(Stage2.AddRandomNumberLater())
    await changes.wait(forCount: 1)
    #expect(changes.values == [5])
  }

  @Test func dependencies_dispatchIsAsync() async throws {
    let store = Stage2.testStore()
    _ = try await store.dependencies.dispatch(Stage2.IncrementCounter())
    #expect(store.state.counter == 1)
  }

  @Test func builtInInterceptors_runAsBefore() async throws {
    let store = Stage2.storeWithLoggerAndObserver()
    // The onStart item runs once the store has started.
    for await counter in store.values(of: \.counter) where counter == 100 { break }
    try await store.dispatch(Stage2.IncrementCounter())
    #expect(store.state.counter == 101)
  }

  @Test func asyncInterceptors_trackAndReject() async throws {
    let tracker = Stage2.RecordingTracker()
    let store = Stage2.storeWithInterceptors(tracker: tracker)
    try await store.dispatch(Stage2.IncrementCounter())
    try await store.dispatch(Stage2.IncrementCounter())
    await #expect(throws: Stage2.CounterLimitReached()) { try await store.dispatch(Stage2.IncrementCounter()) }
    #expect(store.state.counter == 2)
    #expect(tracker.events.current.count == 2)
  }

  @Test func viewModel_readsAndSends() async throws {
    let store = Stage2.testStore()
    let viewModel = Stage2.CounterViewModel(store: store)
    let changes = Recorder<Int>()
    store.addListener { _, newState in changes.append(newState.counter) }
    viewModel.increment()
    await changes.wait(forCount: 1)
    #expect(viewModel.counterText == "1")
  }

  @MainActor @Test func streamBinding_updatesTheLabelOnTheMainActor() async throws {
    let store = Stage2.testStore()
    let label = Stage2.CounterLabel()
    let texts = Recorder<String>()
    label.onSet = { texts.append($0) }
    let binding = Stage2.bind(label, to: store)
    await texts.wait(forCount: 1)  // the current value, once the stream is subscribed
    try await store.dispatch(Stage2.IncrementCounter())
    await texts.wait(forCount: 2)
    #expect(texts.values == ["0", "1"])
    binding.cancel()
  }
}

@Suite("Stage 2: the README's examples with TestStore", .timeLimit(.failsafeMinutes(3)))
struct Stage2TestStoreTests {
  typealias CounterState = Stage2.CounterState

  // MIGRATION-SNIPPET-BEGIN: stage2-test-store
  @Test func generateRandomNumber_dispatchesSetCounter() async throws {
    let store = TestStore(initialState: CounterState()) { dispatch, _ in
      Stage2.AppDependencies(
        APIManager: Stage2.FakeAPI(number: 42), monetization: Stage2.FakeMonetization(), dispatch: dispatch)
    }
    try await store.dispatch(Stage2.GenerateRandomNumberFromBackend())
    await store.receive(Stage2.SetCounter.self) { $0.counter = 42 }
    await store.finish()
  }
  // MIGRATION-SNIPPET-END: stage2-test-store

  @Test func purchaseProduct_returnsItsValue_andDispatchesTheValidation() async throws {
    let store = TestStore(initialState: CounterState()) { dispatch, _ in
      Stage2.AppDependencies(
        APIManager: Stage2.FakeAPI(number: 42), monetization: Stage2.FakeMonetization(), dispatch: dispatch)
    }
    let result = try await store.dispatch(Stage2.PurchaseProduct(productID: "pro"))
    #expect(result.map(\.validation.receipt.productID) == .success("pro"))
    await store.receive(Stage2.Monetization.Validate.self)
    await store.finish()
  }
}
