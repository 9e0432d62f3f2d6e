import KatanaTesting
import Testing

@testable import Catalog

@Suite("Catalog: adding a product hands it to the container's addToCart", .timeLimit(.minutes(1)))
struct AddToCartTests {
  @Test func add_handsTheProductOver_whileShowingProgress_thenSaysItIsInTheCart() async throws {
    // What `addToCart` saw: the product, and the catalog's progress marker at that moment.
    let handedOver = Locked<[(Product, [Product.ID: Int])]>([])
    let store = TestStore(initialState: CatalogState(query: "mat", results: [matcha, whisk])) { _, getState in
      CatalogDependencies(
        products: StubProducts(),
        addToCart: { product in handedOver.withLock { $0.append((product, getState().adding)) } })
    }

    try await store.dispatch(AddProductToCart(productID: whisk.id))
    await store.receive(StartAdding(productID: whisk.id)) { $0.adding = [whisk.id: 1] }
    await store.receive(FinishAdding(product: whisk, failure: nil)) {
      $0.adding = [:]
      $0.notice = .added(productName: "Bamboo matcha whisk")
    }
    #expect(handedOver.current.map(\.0) == [whisk])
    #expect(handedOver.current.map(\.1) == [[whisk.id: 1]])
    await store.finish()
  }

  @Test func add_refusedByTheCart_showsWhy_andRethrows() async throws {
    let refusal = StubFailure(description: "out of stock")
    let store = TestStore(
      initialState: CatalogState(query: "mat", results: [matcha, whisk]),
      dependencies: CatalogDependencies(products: StubProducts(), addToCart: { _ in throw refusal }))

    await #expect(throws: refusal) { try await store.dispatch(AddProductToCart(productID: matcha.id)) }
    await store.receive(StartAdding(productID: matcha.id)) { $0.adding = [matcha.id: 1] }
    await store.receive(FinishAdding(product: matcha, failure: "out of stock")) {
      $0.adding = [:]
      $0.notice = .couldNotAdd(productName: "Ceremonial matcha", reason: "out of stock")
    }
    await store.finish()
  }

  @Test func add_ofAProductNotInTheResults_throwsUnknownProduct_andChangesNothing() async throws {
    let store = TestStore(
      initialState: CatalogState(query: "mat", results: [matcha]),
      dependencies: CatalogDependencies(
        products: StubProducts(), addToCart: { product in Issue.record("\(product) was handed over") }))

    await #expect(throws: CatalogError.unknownProduct(whisk.id)) {
      try await store.dispatch(AddProductToCart(productID: whisk.id))
    }
    await store.finish()
  }

  @Test func twoTaps_addTwo_andTheProgressCountsBoth() async throws {
    let clock = TestClock()
    var configuration = TestStoreConfiguration()
    configuration.clock = clock
    let handedOver = Locked<[Product]>([])
    // The cart takes a second to answer, on the store's clock.
    let store = TestStore(
      initialState: CatalogState(query: "mat", results: [matcha, whisk]),
      dependencies: CatalogDependencies(
        products: StubProducts(),
        addToCart: { product in
          try await clock.sleep(for: .seconds(1))
          handedOver.withLock { $0.append(product) }
        }),
      configuration: configuration)

    let first = store.send(AddProductToCart(productID: whisk.id))
    let second = store.send(AddProductToCart(productID: whisk.id))
    await store.receive(StartAdding(productID: whisk.id)) { $0.adding = [whisk.id: 1] }
    await store.receive(StartAdding(productID: whisk.id)) { $0.adding = [whisk.id: 2] }
    try await clock.waitForSleepers(count: 2)
    await clock.advance(by: .seconds(1))
    await store.receive(FinishAdding(product: whisk, failure: nil)) {
      $0.adding = [whisk.id: 1]
      $0.notice = .added(productName: "Bamboo matcha whisk")
    }
    await store.receive(FinishAdding(product: whisk, failure: nil)) { $0.adding = [:] }
    try await first.value
    try await second.value
    #expect(handedOver.current == [whisk, whisk])
    await store.finish()
  }

  @Test func add_whoseTaskIsCancelled_stillClearsTheProgress() async throws {
    let clock = TestClock()
    var configuration = TestStoreConfiguration()
    configuration.clock = clock
    let store = TestStore(
      initialState: CatalogState(query: "mat", results: [whisk]),
      dependencies: CatalogDependencies(
        products: StubProducts(), addToCart: { _ in try await clock.sleep(for: .seconds(1)) }),
      configuration: configuration)

    let tap = store.send(AddProductToCart(productID: whisk.id))
    await store.receive(StartAdding(productID: whisk.id)) { $0.adding = [whisk.id: 1] }
    try await clock.waitForSleepers(count: 1)
    tap.cancel()
    await store.receive(FinishAdding(product: whisk, failure: "the add was cancelled")) {
      $0.adding = [:]
      $0.notice = .couldNotAdd(productName: "Bamboo matcha whisk", reason: "the add was cancelled")
    }
    await #expect(throws: CancellationError.self) { try await tap.value }
    await store.finish()
  }

  @Test func catalogAlone_hasNoCart() async throws {
    let store = TestStore<CatalogState, CatalogDependencies>(
      initialState: CatalogState(query: "mat", results: [whisk]))

    await #expect(throws: CatalogError.noCart) { try await store.dispatch(AddProductToCart(productID: whisk.id)) }
    await store.receive(StartAdding(productID: whisk.id)) { $0.adding = [whisk.id: 1] }
    await store.receive(FinishAdding.self) {
      $0.adding = [:]
      $0.notice = .couldNotAdd(productName: "Bamboo matcha whisk", reason: "\(CatalogError.noCart)")
    }
    await store.finish()
  }
}
