import Katana
import KatanaTestSupport
import KatanaTesting
import Testing

@Suite("Splitting AppState into features: before and after behave the same", .timeLimit(.failsafeMinutes(3)))
struct FeatureSplitTests {
  typealias CartState = FeatureSplit.CartState
  typealias CartDependencies = FeatureSplit.CartDependencies
  typealias Checkout = FeatureSplit.Checkout
  typealias ClearCart = FeatureSplit.ClearCart

  @Test func before_oneAppState_addsAndChecksOut() async throws {
    typealias Before = FeatureSplitBefore
    let store = Store<Before.AppState, Before.AppDependencies>(
      initialState: Before.AppState(catalog: Before.CatalogState(selectedSKU: "B2")))
    try await store.dispatch(Before.AddToCart(sku: "A1"))
    try await store.dispatch(Before.AddSelectedProductToCart())
    #expect(store.state.cart.items == ["A1", "B2"])
    try await store.dispatch(Before.Checkout())
    #expect(store.state.cart.items == [])
  }

  @Test func after_mountedCart_addsAndChecksOut_andTheInterceptorSeesTheScope() async throws {
    let tracker = RecordingTracker()
    let store = try await FeatureSplit.mountAndCheckOut(tracker: tracker)
    #expect(store.state.cart.items == [])
    #expect(
      tracker.events.values == [
        "AppState.cart: AddToCart(sku: \"A1\")", "AppState.cart: ClearCart()", "AppState.cart: Checkout()",
      ])
  }

  @Test func after_crossFeatureSideEffect_dispatchesTheCartsItemThroughItsScope() async throws {
    let tracker = RecordingTracker()
    let store = Store<FeatureSplit.AppState, FeatureSplit.AppDependencies>(
      interceptors: [FeatureSplit.AnalyticsInterceptor.interceptor(tracker: tracker)])
    let catalog = store.scope(\.catalog, dependencies: \.catalog)
    try await catalog.dispatch(FeatureSplit.SelectProduct(sku: "B2"))
    try await store.dispatch(FeatureSplit.AddSelectedProductToCart())
    #expect(store.state.cart.items == ["B2"])
    #expect(
      tracker.events.values == [
        "AppState.catalog: SelectProduct(sku: \"B2\")", "AppState.cart: AddToCart(sku: \"B2\")",
        "AddSelectedProductToCart()",
      ])
  }

  /// The cart's effect ids are in the cart's namespace: the root store's `cancel(id:)` no longer reaches them;
  /// the cart's scope does.
  @Test(arguments: [false, true])
  func after_cartEffectIDs_areCancelledThroughTheCartsScopeOnly(throughTheCart: Bool) async throws {
    let started = Gate()
    let release = Gate()
    let orders = FakeOrders(started: started, release: release)
    let store = Store<FeatureSplit.AppState, FeatureSplit.AppDependencies>(
      stateInitializer: { FeatureSplit.AppState(cart: CartState(items: ["A1"])) },
      dependenciesInitializer: { _, _ in
        FeatureSplit.AppDependencies(
          catalog: FeatureSplit.CatalogDependencies(api: LiveCatalogAPI()), cart: CartDependencies(orders: orders))
      })
    let cart = store.scope(\.cart, dependencies: \.cart)
    let checkout = cart.send(Checkout())
    let placing = await withFailsafe(seconds: 60) {
      await started.wait()
      return true
    }
    #expect(placing == true)
    if throughTheCart {
      cart.cancel(id: FeatureSplit.CartEffectID.checkout)
    } else {
      store.cancel(id: FeatureSplit.CartEffectID.checkout)
    }
    release.open()
    if throughTheCart {
      await #expect(throws: CancellationError.self) { try await checkout.value }
      #expect(orders.placed.values == [])
      #expect(store.state.cart.items == ["A1"])
    } else {
      try await checkout.value
      #expect(orders.placed.values == [["A1"]])
      #expect(store.state.cart.items == [])
    }
  }

  // MIGRATION-SNIPPET-BEGIN: features-test
  @Test func checkout_placesTheOrder_andClearsTheCart() async throws {
    let orders = FakeOrders()
    let store = TestStore(initialState: CartState(items: ["A1"]), dependencies: CartDependencies(orders: orders))
    try await store.dispatch(Checkout())
    await store.receive(ClearCart.self) { $0.items = [] }
    #expect(orders.placed.values == [["A1"]])
    await store.finish()
  }
  // MIGRATION-SNIPPET-END: features-test
}
