import Katana

/// The shop's stock, as the cart sees it: the cart's port to a backend. The app provides the implementation.
public protocol Inventory: Sendable {
  /// Holds `quantity` more units of `sku` for this cart.
  ///
  /// - Throws: ``InventoryError/insufficientStock(available:)`` if fewer units are left.
  func reserve(_ quantity: Int, of sku: String) async throws
}

/// Why the inventory refused a reservation.
public enum InventoryError: Error, Sendable, Equatable {
  /// Only `available` units are left.
  case insufficientStock(available: Int)
}

/// Places orders: the cart's port to the shop's order service. The app provides the implementation.
public protocol OrderPlacing: Sendable {
  /// Places an order for `lines` and returns its confirmation.
  func placeOrder(_ lines: [CartLine]) async throws -> OrderConfirmation
}

/// A placed order.
public struct OrderConfirmation: Sendable, Equatable {
  /// The order's number, for the customer.
  public let number: String
  /// What the customer pays, in cents.
  public let totalInCents: Int

  /// Creates a confirmation.
  public init(number: String, totalInCents: Int) {
    self.number = number
    self.totalInCents = totalInCents
  }
}

/// What the cart's side effects use.
public final class CartDependencies: SideEffectDependencyContainer {
  /// The shop's stock.
  public let inventory: any Inventory
  /// The order service.
  public let orders: any OrderPlacing

  /// Creates the cart's container.
  public init(inventory: any Inventory, orders: any OrderPlacing) {
    self.inventory = inventory
    self.orders = orders
  }

  /// A cart on its own, in a store of its own (what `Store<CartState, CartDependencies>()` builds): unlimited
  /// stock, and no order service (checkout fails with ``CartError/noOrderService``).
  public convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    self.init(inventory: UnlimitedStock(), orders: NoOrderService())
  }
}

private struct UnlimitedStock: Inventory {
  func reserve(_ quantity: Int, of sku: String) async throws {}
}

private struct NoOrderService: OrderPlacing {
  func placeOrder(_ lines: [CartLine]) async throws -> OrderConfirmation {
    throw CartError.noOrderService
  }
}
