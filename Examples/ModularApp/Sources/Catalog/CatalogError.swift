/// What the catalog's items throw when they are used wrongly.
public enum CatalogError: Error, Sendable, Equatable, CustomStringConvertible {
  /// ``AddProductToCart`` named a product that the current results do not show.
  case unknownProduct(Product.ID)

  /// What happened and what to do about it.
  public var description: String {
    switch self {
    case .unknownProduct(let id):
      "No product \(id) in the current results: add products the catalog shows."
    }
  }
}
