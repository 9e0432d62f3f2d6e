import Katana

/// Places an order for the cart's lines.
///
/// The order is placed under ``CartEffectID/checkout``: `cart.cancel(id: CartEffectID.checkout)` stops it
/// and leaves the cart as it was. When the order is placed, the cart empties and
/// ``CartState/checkout`` holds the confirmation.
///
/// - Returns: When the checkout has ended, with ``CartState/checkout`` saying how.
/// - Throws: ``CartError/emptyCart``, ``CartError/checkoutInProgress`` before anything starts; what the order
///   service throws (the cart is unchanged, its status `failed`); `CancellationError` if the checkout was
///   cancelled (the status is back to `idle`).
public struct Checkout: SideEffect, Equatable {
  /// Creates the item.
  public init() {}

  /// Places the order.
  public func sideEffect(_ context: SideEffectContext<CartState, CartDependencies>) async throws {
    let state = context.getState()
    guard !state.lines.isEmpty else { throw CartError.emptyCart }
    // A second checkout is refused once the first has begun; the UI also disables its button while `placing`.
    guard state.checkout != .placing else { throw CartError.checkoutInProgress }
    try await context.dispatch(BeginCheckout())
    let lines = context.getState().lines
    let outcome: Result<OrderConfirmation, any Error>
    do {
      outcome = .success(
        try await context.run(id: CartEffectID.checkout) {
          try await context.dependencies.orders.placeOrder(lines)
        })
    } catch {
      outcome = .failure(error)
    }
    // Sent and then awaited, rather than dispatched: the status must leave `placing` even if this task was
    // cancelled (an awaited dispatch from a cancelled task is withdrawn); the handle keeps the order.
    try await context.send(EndCheckout(status: outcome.status)).value
    _ = try outcome.get()
  }
}

extension Result<OrderConfirmation, any Error> {
  /// The status a checkout ending with this outcome leaves.
  fileprivate var status: CheckoutStatus {
    switch self {
    case .success(let order): .placed(order)
    case .failure(is CancellationError): .idle
    case .failure(let error): .failed(reason: "\(error)")
    }
  }
}
