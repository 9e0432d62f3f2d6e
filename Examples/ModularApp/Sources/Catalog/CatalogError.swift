/// What the catalog's items throw when they are used wrongly.
public enum CatalogError: Error, Sendable, Equatable, CustomStringConvertible {
  /// ``AddProductToCart`` named a product that the current results do not show.
  case unknownProduct(Product.ID)
  /// The catalog runs without a cart: its container was built without an `addToCart` closure.
  case noCart

  /// What happened and what to do about it.
  public var description: String {
    switch self {
    case .unknownProduct(let id):
      "No product \(id) in the current results: add products the catalog shows."
    case .noCart:
      "This catalog has no cart: build CatalogDependencies with an addToCart closure."
    }
  }
}
