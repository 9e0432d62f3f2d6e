import Cart
import Catalog
import Katana
import KatanaTesting
import Testing

@testable import ShopApp

@Suite("App: each feature observes and cancels only its own work", .timeLimit(.minutes(1)))
struct FeatureIsolationTests {
  @Test func cartListener_isNotCalledForTheCatalogsCommits() async throws {
    let clock = TestClock()
    let shop = try await shopShowingMatcha(clock: clock)
    let cartChanges = Locked<[Int]>([])
    let stop = shop.cart.addListener { _, new in cartChanges.withLock { $0.append(new.itemCount) } }
    defer { stop() }

    // A whole debounced search: three catalog commits.
    let typing = shop.catalog.searchFieldChanged("sencha")
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .milliseconds(300))
    try await typing.value
    #expect(shop.catalog.state.results == [sencha])
    #expect(cartChanges.current == [])

    // Adding from the catalog: two catalog commits, one cart commit.
    try await shop.catalog.dispatch(AddProductToCart(productID: sencha.id))
    #expect(cartChanges.current == [1])
  }

  @Test func checkoutID_isTheCarts_andOnlyTheCartsScopeCancelsIt() async throws {
    let clock = TestClock()
    let shop = try await shopShowingMatcha(backend: ShopBackend(latency: .seconds(1), clock: clock), clock: clock)
    try await {
      let add = shop.catalog.send(AddProductToCart(productID: whisk.id))
      try await clock.waitForSleepers(count: 1)  // the inventory's latency
      await clock.advance(by: .seconds(1))
      try await add.value
    }()

    // The same id value, in the root store's namespace and in the catalog's: the cart's checkout goes on.
    let placed = shop.cart.send(Checkout())
    try await clock.waitForSleepers(count: 1)  // the order service's latency
    shop.store.cancel(id: CartEffectID.checkout)
    shop.catalog.cancel(id: CartEffectID.checkout)
    await clock.advance(by: .seconds(1))
    try await placed.value
    #expect(shop.cart.state.checkout == .placed(OrderConfirmation(number: "A-1001", totalInCents: 1_500)))

    // Through the cart's scope, the same value reaches the cart's checkout.
    try await {
      let add = shop.catalog.send(AddProductToCart(productID: whisk.id))
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .seconds(1))
      try await add.value
    }()
    let cancelled = shop.cart.send(Checkout())
    try await clock.waitForSleepers(count: 1)
    shop.cart.cancel(id: CartEffectID.checkout)
    await #expect(throws: CancellationError.self) { try await cancelled.value }
    #expect(shop.cart.state.checkout == .idle)
    #expect(shop.cart.state.line(whisk.id)?.quantity == 1)
  }
}
