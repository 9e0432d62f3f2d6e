/// Something to put in the cart: a unit of what the shop sells, as the cart knows it.
///
/// The cart owns this type and knows nothing of the catalog's `Product`: the app converts one into the other.
public struct CartItem: Sendable, Equatable, CustomStringConvertible {
  /// The stock-keeping unit, the item's identifier in the whole shop.
  public let sku: String
  /// The name shown in the cart.
  public let name: String
  /// The unit price, in cents.
  public let unitPriceInCents: Int

  /// Creates an item.
  public init(sku: String, name: String, unitPriceInCents: Int) {
    self.sku = sku
    self.name = name
    self.unitPriceInCents = unitPriceInCents
  }

  /// The name and the SKU, for logs.
  public var description: String {
    "\(name) (\(sku))"
  }
}
