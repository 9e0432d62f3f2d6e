import Katana

/// What the catalog tells the app that mounts it. It knows nothing of the cart: what "adding" means is up to
/// whoever handles the output (in the app, the Cart feature's `AddItem`, dispatched through the cart's scope of
/// the same store).
public enum CatalogOutput: FeatureOutput, Equatable {
  /// The catalog's outputs are emitted by its side effects, of `CatalogState`.
  public typealias StateType = CatalogState

  /// The user tapped "Add to cart" on `product`: put one unit of it in the cart. ``AddProductToCart`` waits for
  /// the handler: when it returns, the product is in the cart; when it throws, the catalog shows the error as
  /// the reason.
  case addToCart(Product)
}
