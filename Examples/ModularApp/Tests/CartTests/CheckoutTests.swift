import KatanaTesting
import Testing

@testable import Cart

@Suite("Cart: checkout", .timeLimit(.minutes(1)))
struct CheckoutTests {
  private let lines = [CartLine(sencha, quantity: 2), CartLine(whisk, quantity: 1)]

  @Test func checkout_placesTheOrder_andEmptiesTheCart() async throws {
    let orders = StubOrders()
    let store = TestStore(
      initialState: CartState(lines: lines),
      dependencies: CartDependencies(inventory: StubInventory([:]), orders: orders))

    try await store.dispatch(Checkout())
    await store.receive(BeginCheckout()) { $0.checkout = .placing }
    await store.receive(EndCheckout.self) {
      $0.checkout = .placed(OrderConfirmation(number: "T-1", totalInCents: 2_800))
      $0.lines = []
    }
    #expect(orders.orders == [lines])
    await store.finish()
  }

  @Test func checkout_refusedByTheOrderService_keepsTheCart_andSaysWhy() async throws {
    let refusal = StubFailure(description: "the card was declined")
    let store = TestStore(
      initialState: CartState(lines: lines),
      dependencies: CartDependencies(inventory: StubInventory([:]), orders: StubOrders(failure: refusal)))

    await #expect(throws: refusal) { try await store.dispatch(Checkout()) }
    await store.receive(BeginCheckout()) { $0.checkout = .placing }
    await store.receive(EndCheckout(status: .failed(reason: "the card was declined"))) {
      $0.checkout = .failed(reason: "the card was declined")
    }
    await store.finish()
  }

  @Test func checkout_ofAnEmptyCart_throwsEmptyCart() async throws {
    let store = TestStore(
      initialState: CartState(), dependencies: CartDependencies(inventory: StubInventory([:]), orders: StubOrders()))

    await #expect(throws: CartError.emptyCart) { try await store.dispatch(Checkout()) }
    await store.finish()
  }

  @Test func checkout_cancelledByItsID_leavesTheCartAsItWas() async throws {
    let clock = TestClock()
    var configuration = TestStoreConfiguration()
    configuration.clock = clock
    let orders = StubOrders(delay: .seconds(5), clock: clock)
    let store = TestStore(
      initialState: CartState(lines: lines),
      dependencies: CartDependencies(inventory: StubInventory([:]), orders: orders), configuration: configuration)

    let checkout = store.send(Checkout())
    await store.receive(BeginCheckout()) { $0.checkout = .placing }
    try await clock.waitForSleepers(count: 1)
    store.cancel(id: CartEffectID.checkout)
    await store.receive(EndCheckout(status: .idle)) { $0.checkout = .idle }
    await #expect(throws: CancellationError.self) { try await checkout.value }
    #expect(orders.orders == [])
    await store.finish()
  }

  @Test func checkout_whoseTaskIsCancelled_stillLeavesPlacing() async throws {
    let clock = TestClock()
    var configuration = TestStoreConfiguration()
    configuration.clock = clock
    let store = TestStore(
      initialState: CartState(lines: lines),
      dependencies: CartDependencies(
        inventory: StubInventory([:]), orders: StubOrders(delay: .seconds(5), clock: clock)),
      configuration: configuration)

    let checkout = store.send(Checkout())
    await store.receive(BeginCheckout()) { $0.checkout = .placing }
    try await clock.waitForSleepers(count: 1)
    checkout.cancel()
    await store.receive(EndCheckout(status: .idle)) { $0.checkout = .idle }
    await #expect(throws: CancellationError.self) { try await checkout.value }
    await store.finish()
  }

  @Test func secondCheckout_whileTheFirstIsPlacing_throwsCheckoutInProgress() async throws {
    let clock = TestClock()
    var configuration = TestStoreConfiguration()
    configuration.clock = clock
    let orders = StubOrders(delay: .seconds(5), clock: clock)
    let store = TestStore(
      initialState: CartState(lines: lines),
      dependencies: CartDependencies(inventory: StubInventory([:]), orders: orders), configuration: configuration)

    let first = store.send(Checkout())
    await store.receive(BeginCheckout()) { $0.checkout = .placing }
    try await clock.waitForSleepers(count: 1)
    await #expect(throws: CartError.checkoutInProgress) { try await store.dispatch(Checkout()) }
    await clock.advance(by: .seconds(5))
    await store.receive(EndCheckout.self) {
      $0.checkout = .placed(OrderConfirmation(number: "T-1", totalInCents: 2_800))
      $0.lines = []
    }
    try await first.value
    #expect(orders.orders.count == 1)
    await store.finish()
  }
}
