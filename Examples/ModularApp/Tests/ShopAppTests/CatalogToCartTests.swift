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

  /// Seeded rounds of concurrent taps on products with little stock, from the catalog and from the cart's own
  /// UI: every unit the inventory granted is in the cart, every refusal left it alone, no progress is left.
  @Test(arguments: [1, 2, 3] as [UInt64])
  func concurrentAdds_seeded_theCartHoldsExactlyWhatTheStockGranted(seed: UInt64) async throws {
    var random = SplitMix64(seed: seed)
    let stock = ["KIT-KYUSU": 2, "KIT-WHISK": 3, "TEA-GENMAI": 5]
    let products = stock.keys.sorted().map(product)
    let backend = ShopBackend(
      listings: products.map { ShopBackend.Listing($0, stock: stock[$0.id]!) })
    let shop = Shop(initialState: AppState(catalog: CatalogState(query: "", results: products)), backend: backend)
    try await shop.store.waitUntilReady()

    var taps: [String: Int] = [:]
    var handles: [DispatchHandle<Void>] = []
    for _ in 0..<24 {
      let product = products[Int(random.next() % UInt64(products.count))]
      taps[product.id, default: 0] += 1
      if random.next() % 2 == 0 {
        handles.append(shop.catalog.send(AddProductToCart(productID: product.id)))
      } else {
        handles.append(shop.cart.send(AddItem(CartItem(product))))
      }
    }
    var refused = 0
    for handle in handles {
      if case .failure(let error) = await handle.result {
        guard case .outOfStock(_, available: 0)? = error as? CartError else {
          Issue.record("an add failed with \(error), seed \(seed)")
          continue
        }
        refused += 1
      }
    }

    for product in products {
      let granted = min(taps[product.id] ?? 0, stock[product.id]!)
      #expect(shop.cart.state.line(product.id)?.quantity ?? 0 == granted, "\(product.id), seed \(seed)")
      #expect(backend.stock(of: product.id) == stock[product.id]! - granted, "\(product.id), seed \(seed)")
    }
    #expect(refused == 24 - shop.cart.state.itemCount)
    #expect(shop.catalog.state.adding == [:])
  }
}

/// A small seeded generator, so that a failing round can be replayed.
struct SplitMix64 {
  private var state: UInt64

  init(seed: UInt64) {
    state = seed
  }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
