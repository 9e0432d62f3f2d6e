/// A product as the catalog shows it.
///
/// The catalog owns this type. The cart has its own idea of what it holds (`CartItem` in the Cart module); the
/// app, which knows both, converts one into the other when a product is added to the cart.
public struct Product: Sendable, Equatable, Identifiable, CustomStringConvertible {
  /// The stock-keeping unit: the product's identifier in the whole shop.
  public let id: String
  /// The name shown to the user.
  public let name: String
  /// The unit price, in cents.
  public let priceInCents: Int

  /// Creates a product.
  public init(id: String, name: String, priceInCents: Int) {
    self.id = id
    self.name = name
    self.priceInCents = priceInCents
  }

  /// The name and the SKU, for logs.
  public var description: String {
    "\(name) (\(id))"
  }
}
