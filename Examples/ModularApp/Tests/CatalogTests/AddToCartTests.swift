import KatanaTesting
import Testing

@testable import Catalog

/// A test store of the catalog alone, showing `results`: nothing above it handles its outputs, so the test
/// store records them for `receiveOutput`.
private func makeStore(
  results: [Product], configuration: TestStoreConfiguration = TestStoreConfiguration(),
  fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
) -> TestStore<CatalogState, CatalogDependencies> {
  TestStore(
    initialState: CatalogState(query: "mat", results: results),
    dependencies: CatalogDependencies(products: StubProducts()), configuration: configuration,
    fileID: fileID, filePath: filePath, line: line, column: column)
}

@Suite("Catalog: adding a product emits it to the app", .timeLimit(.minutes(1)))
struct AddToCartTests {
  @Test func add_emitsTheProduct_whileShowingProgress_thenSaysItIsInTheCart() async throws {
    let store = makeStore(results: [matcha, whisk])
    // What the catalog showed while the app handled the output.
    let progressSeen = Locked<[[Product.ID: Int]]>([])
    store.handleOutputs(CatalogOutput.self) { [weak store] _ in
      progressSeen.withLock { $0.append(store?.state.adding ?? [:]) }
    }

    try await store.dispatch(AddProductToCart(productID: whisk.id))
    await store.receive(StartAdding(productID: whisk.id)) { $0.adding = [whisk.id: 1] }
    await store.receiveOutput(CatalogOutput.addToCart(whisk))
    await store.receive(FinishAdding(product: whisk, failure: nil)) {
      $0.adding = [:]
      $0.notice = .added(productName: "Bamboo matcha whisk")
    }
    #expect(progressSeen.current == [[whisk.id: 1]])
    await store.finish()
  }

  @Test func add_refusedByTheApp_showsWhy_andRethrows() async throws {
    let refusal = StubFailure(description: "out of stock")
    let store = makeStore(results: [matcha, whisk])
    store.handleOutputs(CatalogOutput.self) { _ in throw refusal }

    await #expect(throws: refusal) { try await store.dispatch(AddProductToCart(productID: matcha.id)) }
    await store.receive(StartAdding(productID: matcha.id)) { $0.adding = [matcha.id: 1] }
    await store.receiveOutput(CatalogOutput.addToCart(matcha))
    await store.receive(FinishAdding(product: matcha, failure: "out of stock")) {
      $0.adding = [:]
      $0.notice = .couldNotAdd(productName: "Ceremonial matcha", reason: "out of stock")
    }
    await store.finish()
  }

  @Test func add_ofAProductNotInTheResults_throwsUnknownProduct_andEmitsNothing() async throws {
    let store = makeStore(results: [matcha])

    await #expect(throws: CatalogError.unknownProduct(whisk.id)) {
      try await store.dispatch(AddProductToCart(productID: whisk.id))
    }
    // An output would fail the end of this exhaustive test.
    await store.finish()
  }

  @Test func twoTaps_addTwo_andTheProgressCountsBoth() async throws {
    let clock = TestClock()
    var configuration = TestStoreConfiguration()
    configuration.clock = clock
    let store = makeStore(results: [matcha, whisk], configuration: configuration)
    // The app takes a second to answer, on the store's clock.
    store.handleOutputs(CatalogOutput.self) { _ in try await clock.sleep(for: .seconds(1)) }

    let first = store.send(AddProductToCart(productID: whisk.id))
    let second = store.send(AddProductToCart(productID: whisk.id))
    await store.receive(StartAdding(productID: whisk.id)) { $0.adding = [whisk.id: 1] }
    await store.receive(StartAdding(productID: whisk.id)) { $0.adding = [whisk.id: 2] }
    await store.receiveOutput(CatalogOutput.addToCart(whisk))
    await store.receiveOutput(CatalogOutput.addToCart(whisk))
    await clock.advance(by: .seconds(1))
    await store.receive(FinishAdding(product: whisk, failure: nil)) {
      $0.adding = [whisk.id: 1]
      $0.notice = .added(productName: "Bamboo matcha whisk")
    }
    await store.receive(FinishAdding(product: whisk, failure: nil)) { $0.adding = [:] }
    try await first.value
    try await second.value
    await store.finish()
  }

  @Test func add_whoseTaskIsCancelled_stillClearsTheProgress() async throws {
    let clock = TestClock()
    var configuration = TestStoreConfiguration()
    configuration.clock = clock
    let store = makeStore(results: [whisk], configuration: configuration)
    store.handleOutputs(CatalogOutput.self) { _ in try await clock.sleep(for: .seconds(1)) }

    let tap = store.send(AddProductToCart(productID: whisk.id))
    await store.receive(StartAdding(productID: whisk.id)) { $0.adding = [whisk.id: 1] }
    await store.receiveOutput(CatalogOutput.addToCart(whisk))
    try await clock.waitForSleepers(count: 1)
    tap.cancel()
    await store.receive(FinishAdding(product: whisk, failure: "the add was cancelled")) {
      $0.adding = [:]
      $0.notice = .couldNotAdd(productName: "Bamboo matcha whisk", reason: "the add was cancelled")
    }
    await #expect(throws: CancellationError.self) { try await tap.value }
    await store.finish()
  }

  @Test func catalogAlone_nothingAnswers_soTheProductShowsAsAdded() async throws {
    let store = TestStore<CatalogState, CatalogDependencies>(
      initialState: CatalogState(query: "mat", results: [whisk]))

    try await store.dispatch(AddProductToCart(productID: whisk.id))
    await store.receive(StartAdding(productID: whisk.id)) { $0.adding = [whisk.id: 1] }
    await store.receiveOutput(CatalogOutput.addToCart(whisk))
    await store.receive(FinishAdding.self) {
      $0.adding = [:]
      $0.notice = .added(productName: "Bamboo matcha whisk")
    }
    await store.finish()
  }
}
