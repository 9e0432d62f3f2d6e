import Cart
import Catalog
import Katana
import Testing

@testable import ShopApp

@Suite("App: adding from the catalog to the cart, on the real store", .timeLimit(.minutes(1)))
struct CatalogToCartTests {
  @Test func add_putsTheProductInTheCart_andTheCatalogSaysSo() async throws {
    let backend = ShopBackend()
    let shop = try await shopShowingMatcha(backend: backend)

    try await shop.catalog.dispatch(AddProductToCart(productID: whisk.id))

    #expect(shop.store.state.cart.lines == [CartLine(CartItem(whisk), quantity: 1)])
    #expect(shop.store.state.catalog.notice == .added(productName: "Bamboo matcha whisk"))
    #expect(shop.store.state.catalog.adding == [:])
    #expect(backend.reservations == ["1 x KIT-WHISK"])
    #expect(backend.stock(of: whisk.id) == 2)
  }

  @Test func add_goesThroughBothFeatures_inOrder() async throws {
    let shop = try await shopShowingMatcha()
    // What each commit left: the catalog's progress marker, the whisk's quantity in the cart, the notice.
    let commits = Locked<[String]>([])
    shop.store.addListener { _, new in
      let adding = new.catalog.adding[whisk.id] ?? 0
      let inCart = new.cart.line(whisk.id)?.quantity ?? 0
      commits.withLock { $0.append("adding \(adding), in cart \(inCart), notice \(new.catalog.notice != nil)") }
    }

    try await shop.catalog.dispatch(AddProductToCart(productID: whisk.id))

    // The catalog shows progress before the cart changes, and the outcome after.
    #expect(
      commits.current == [
        "adding 1, in cart 0, notice false",
        "adding 1, in cart 1, notice false",
        "adding 0, in cart 1, notice true",
      ])
    // The root store's interceptor saw the whole path, with the scope each item came through.
    #expect(
      shop.activity.all.map { "\(shop.feature(of: $0.scope)) \($0.type)" } == [
        "catalog AddProductToCart", "catalog StartAdding", "app AddCatalogProductToCart", "cart AddItem",
        "cart InsertItem", "catalog FinishAdding",
      ])
    #expect(shop.activity.all.map { $0.scope?.description ?? "root" }.first == "AppState.catalog")
    #expect(shop.activity.all.map { $0.scope?.description ?? "root" }[3] == "AppState.cart")
  }

  @Test func add_ofAnOutOfStockProduct_throwsTheCartsError_andOnlyTheCatalogChanges() async throws {
    let shop = try await shopShowingMatcha()
    let cartBefore = shop.cart.state

    await #expect(throws: CartError.outOfStock(name: "Ceremonial matcha", available: 0)) {
      try await shop.catalog.dispatch(AddProductToCart(productID: matcha.id))
    }

    #expect(shop.cart.state == cartBefore)
    #expect(shop.catalog.state.notice == .couldNotAdd(productName: "Ceremonial matcha", reason: "out of stock"))
    #expect(shop.catalog.state.adding == [:])
    #expect(!shop.activity.all.contains { $0.type == "InsertItem" })
  }

  @Test func concurrentAdds_fromTheCatalogAndTheCartsOwnUI_allLand() async throws {
    let shop = try await shopShowingMatcha()
    let fromCatalog = (0..<3).map { _ in shop.catalog.send(AddProductToCart(productID: whisk.id)) }
    let fromCart = shop.cart.send(AddItem(CartItem(sencha), quantity: 2))
    for handle in fromCatalog {
      try await handle.value
    }
    try await fromCart.value

    #expect(shop.cart.state.line(whisk.id)?.quantity == 3)
    #expect(shop.cart.state.line(sencha.id)?.quantity == 2)
    #expect(shop.catalog.state.adding == [:])
    #expect(shop.catalog.state.notice == .added(productName: "Bamboo matcha whisk"))
  }
}
