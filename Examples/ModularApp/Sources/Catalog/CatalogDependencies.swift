import Katana

/// Searches the shop's products: the catalog's port to a backend. The app provides the implementation.
public protocol ProductSearching: Sendable {
  /// The products matching `text` (already trimmed, never empty).
  func search(_ text: String) async throws -> [Product]
}

/// What the catalog's side effects use.
///
/// The catalog does not know the cart, and its container has nothing for it: adding a product to the cart is
/// a ``CatalogOutput`` that the app handles where it mounts the feature.
public final class CatalogDependencies: SideEffectDependencyContainer {
  /// The backend's product search.
  public let products: any ProductSearching
  /// How long typing must pause before the catalog searches.
  public let searchDelay: Duration

  /// Creates the catalog's container.
  ///
  /// - Parameters:
  ///   - products: The backend's product search.
  ///   - searchDelay: How long typing must pause before the catalog searches.
  public init(products: any ProductSearching, searchDelay: Duration = .milliseconds(300)) {
    self.products = products
    self.searchDelay = searchDelay
  }

  /// A catalog on its own, in a store of its own (what `Store<CatalogState, CatalogDependencies>()` builds): it
  /// has no products.
  public convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    self.init(products: NoProducts())
  }
}

/// A backend with nothing to sell.
private struct NoProducts: ProductSearching {
  func search(_ text: String) async throws -> [Product] { [] }
}
