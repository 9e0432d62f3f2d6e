/// What the cart's items throw.
public enum CartError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The inventory has only `available` units of the item left.
  case outOfStock(name: String, available: Int)
  /// A quantity to add must be at least one.
  case invalidQuantity(Int)
  /// Checkout needs at least one line.
  case emptyCart
  /// The cart cannot change, nor check out again, while an order is being placed.
  case checkoutInProgress
  /// The cart runs without an order service: its container was built without one.
  case noOrderService

  /// What happened, in words a customer understands (the catalog shows it when an add fails).
  public var description: String {
    switch self {
    case .outOfStock(_, 0): "out of stock"
    case .outOfStock(_, let available): "only \(available) left"
    case .invalidQuantity(let quantity): "cannot add \(quantity) units; add one or more"
    case .emptyCart: "the cart is empty"
    case .checkoutInProgress: "the order is being placed"
    case .noOrderService: "this cart has no order service: build CartDependencies with one"
    }
  }
}
