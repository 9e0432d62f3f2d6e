import Katana

/// Searches the shop's products: the catalog's port to a backend. The app provides the implementation.
public protocol ProductSearching: Sendable {
  /// The products matching `text` (already trimmed, never empty).
  func search(_ text: String) async throws -> [Product]
}

/// What the catalog's side effects use.
///
/// The catalog does not know the cart. Adding a product to it is work the catalog hands back to whoever mounts
/// the feature, through ``addToCart``: the app wires it to the cart, a test to a recorder, a preview to
/// nothing at all.
public final class CatalogDependencies: SideEffectDependencyContainer {
  /// The backend's product search.
  public let products: any ProductSearching
  /// How long typing must pause before the catalog searches.
  public let searchDelay: Duration
  /// Puts one unit of a product in the cart; throws, with a reason to show, if the cart refuses it.
  public let addToCart: @Sendable (Product) async throws -> Void

  /// Creates the catalog's container.
  ///
  /// - Parameters:
  ///   - products: The backend's product search.
  ///   - searchDelay: How long typing must pause before the catalog searches.
  ///   - addToCart: Puts one unit of a product in the cart. The catalog awaits it: when it returns, the
  ///     product is in the cart; when it throws, the catalog shows the error as the reason.
  public init(
    products: any ProductSearching, searchDelay: Duration = .milliseconds(300),
    addToCart: @escaping @Sendable (Product) async throws -> Void
  ) {
    self.products = products
    self.searchDelay = searchDelay
    self.addToCart = addToCart
  }

  /// A catalog on its own, in a store of its own (what `Store<CatalogState, CatalogDependencies>()` builds): it
  /// has no products, and no cart to add to (``CatalogError/noCart``).
  public convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    self.init(products: NoProducts(), addToCart: { _ in throw CatalogError.noCart })
  }
}

/// A backend with nothing to sell.
private struct NoProducts: ProductSearching {
  func search(_ text: String) async throws -> [Product] { [] }
}
