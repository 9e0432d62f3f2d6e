import KatanaTesting
import Testing

@testable import Cart

@Suite("Cart: adding items reserves them first", .timeLimit(.minutes(1)))
struct AddItemTests {
  @Test func add_reservesTheUnits_thenAddsALine_andMoreUnitsGoOnTheSameLine() async throws {
    let inventory = StubInventory([sencha.sku: 10])
    let store = TestStore(
      initialState: CartState(), dependencies: CartDependencies(inventory: inventory, orders: StubOrders()))

    try await store.dispatch(AddItem(sencha))
    await store.receive(InsertItem(item: sencha, quantity: 1)) { $0.lines = [CartLine(sencha, quantity: 1)] }
    try await store.dispatch(AddItem(sencha, quantity: 2))
    await store.receive(InsertItem(item: sencha, quantity: 2)) { $0.lines[0].quantity = 3 }
    #expect(inventory.reservations == ["1 x TEA-SENCHA", "2 x TEA-SENCHA"])
    #expect(store.state.totalInCents == 1_950)
    await store.finish()
  }

  @Test func add_beyondTheStock_throwsOutOfStock_andLeavesTheCartAlone() async throws {
    let inventory = StubInventory([whisk.sku: 1])
    let store = TestStore(
      initialState: CartState(), dependencies: CartDependencies(inventory: inventory, orders: StubOrders()))

    await #expect(throws: CartError.outOfStock(name: "Bamboo matcha whisk", available: 1)) {
      try await store.dispatch(AddItem(whisk, quantity: 2))
    }
    await #expect(throws: CartError.outOfStock(name: "Ceremonial matcha", available: 0)) {
      try await store.dispatch(AddItem(CartItem(sku: "TEA-MATCHA", name: "Ceremonial matcha", unitPriceInCents: 1)))
    }
    #expect(inventory.reservations == [])
    await store.finish()
  }

  @Test func add_ofNoUnits_throwsInvalidQuantity() async throws {
    let store = TestStore(
      initialState: CartState(), dependencies: CartDependencies(inventory: StubInventory([:]), orders: StubOrders()))

    await #expect(throws: CartError.invalidQuantity(0)) { try await store.dispatch(AddItem(sencha, quantity: 0)) }
    await store.finish()
  }

  @Test func add_duringACheckout_throwsCheckoutInProgress() async throws {
    var placing = CartState(lines: [CartLine(whisk, quantity: 1)])
    placing.checkout = .placing
    let inventory = StubInventory([sencha.sku: 10])
    let store = TestStore(
      initialState: placing, dependencies: CartDependencies(inventory: inventory, orders: StubOrders()))

    await #expect(throws: CartError.checkoutInProgress) { try await store.dispatch(AddItem(sencha)) }
    #expect(inventory.reservations == [])
    await store.finish()
  }

  @Test func removeLine_removesIt_exceptDuringACheckout() async throws {
    let store = TestStore(
      initialState: CartState(lines: [CartLine(sencha, quantity: 2), CartLine(whisk, quantity: 1)]),
      dependencies: CartDependencies(inventory: StubInventory([:]), orders: StubOrders()))

    try await store.dispatch(RemoveLine(sku: sencha.sku)) { $0.lines.removeFirst() }
    try await store.dispatch(BeginCheckout()) { $0.checkout = .placing }
    try await store.dispatch(RemoveLine(sku: whisk.sku))
    await store.finish()
  }

  @Test func cartAlone_hasUnlimitedStock_andNoOrderService() async throws {
    let store = TestStore<CartState, CartDependencies>(initialState: CartState())

    try await store.dispatch(AddItem(whisk, quantity: 1_000))
    await store.receive(InsertItem(item: whisk, quantity: 1_000)) { $0.lines = [CartLine(whisk, quantity: 1_000)] }
    await #expect(throws: CartError.noOrderService) { try await store.dispatch(Checkout()) }
    await store.receive(BeginCheckout()) { $0.checkout = .placing }
    await store.receive(EndCheckout(status: .failed(reason: "\(CartError.noOrderService)"))) {
      $0.checkout = .failed(reason: "\(CartError.noOrderService)")
    }
    await store.finish()
  }
}
