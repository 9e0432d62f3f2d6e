import Cart
import Catalog
import Katana

/// The app's dependency container: each feature's container at a field of its own, built from the app's
/// services, and the wiring between the features.
///
/// The app mounts each feature with the key path of its container (`dependencies: \.catalog`), so a feature's
/// side effects get their own container and never this one.
public final class AppDependencies: SideEffectDependencyContainer {
  /// The catalog feature's container.
  public let catalog: CatalogDependencies
  /// The cart feature's container.
  public let cart: CartDependencies

  /// Builds both features' containers on `backend`.
  ///
  /// The catalog asks for an `addToCart` closure; the app answers with the store's `dispatch` of
  /// ``AddCatalogProductToCart``, its side effect that adds the product through the cart's scope. So the
  /// catalog's "Add to cart" ends up as the Cart feature's own `AddItem`, in the same store, ordered with
  /// everything else, without either feature importing the other.
  ///
  /// - Parameters:
  ///   - backend: The services both features use.
  ///   - searchDelay: How long typing must pause before the catalog searches.
  ///   - dispatch: The store's `dispatch`, as the store hands it to its dependencies initializer.
  public init(backend: ShopBackend, searchDelay: Duration = .milliseconds(300), dispatch: @escaping AnyDispatch) {
    catalog = CatalogDependencies(
      products: backend, searchDelay: searchDelay,
      addToCart: { product in
        _ = try await dispatch(AddCatalogProductToCart(product: product))
      })
    cart = CartDependencies(inventory: backend, orders: backend)
  }

  /// The app on the demo backend (what `Store<AppState, AppDependencies>()` builds).
  public convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    self.init(backend: ShopBackend(), dispatch: dispatch)
  }
}
