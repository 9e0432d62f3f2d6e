import Katana

/// The cart's state: its lines and where the checkout is.
///
/// The app keeps it at a field of its own state and mounts the feature there; the cart never sees the rest.
/// It is `Equatable`, so that observers of the cart's scope are not called for changes elsewhere (the
/// catalog's search, for example).
public struct CartState: State, Equatable {
  /// One line per SKU, in the order they were first added.
  public var lines: [CartLine] = []
  /// Where the checkout is.
  public var checkout: CheckoutStatus = .idle

  /// An empty cart.
  public init() {}

  /// A cart holding `lines`.
  public init(lines: [CartLine]) {
    self.lines = lines
  }

  /// The line of `sku`, if the cart has one.
  public func line(_ sku: String) -> CartLine? {
    lines.first { $0.id == sku }
  }

  /// The number of units in the cart.
  public var itemCount: Int {
    lines.reduce(0) { $0 + $1.quantity }
  }

  /// What the cart costs, in cents.
  public var totalInCents: Int {
    lines.reduce(0) { $0 + $1.totalInCents }
  }
}

/// A line of the cart: a SKU and how many units of it.
public struct CartLine: Sendable, Equatable, Identifiable {
  /// The SKU.
  public let id: String
  /// The name shown in the cart.
  public var name: String
  /// The unit price, in cents.
  public var unitPriceInCents: Int
  /// How many units; at least one.
  public var quantity: Int

  /// Creates a line of `quantity` units of `item`.
  public init(_ item: CartItem, quantity: Int) {
    self.id = item.sku
    self.name = item.name
    self.unitPriceInCents = item.unitPriceInCents
    self.quantity = quantity
  }

  /// What the line costs, in cents.
  public var totalInCents: Int {
    unitPriceInCents * quantity
  }
}

/// Where the cart's checkout is.
public enum CheckoutStatus: Sendable, Equatable {
  /// No checkout running; the cart can change.
  case idle
  /// The order is being placed; the cart cannot change.
  case placing
  /// The order was placed, and the cart emptied.
  case placed(OrderConfirmation)
  /// The order was not placed; the cart is as it was.
  case failed(reason: String)
}
