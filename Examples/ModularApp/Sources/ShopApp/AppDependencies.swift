import Cart
import Catalog
import Katana

/// The app's dependency container: each feature's container at a field of its own, built from the app's
/// services.
///
/// The app mounts each feature with the key path of its container (`dependencies: \.catalog`), so a feature's
/// side effects get their own container and never this one. The wiring between the features is not here: the
/// catalog's "Add to cart" is a `CatalogOutput`, which ``Shop`` handles where it mounts the catalog.
public final class AppDependencies: SideEffectDependencyContainer {
  /// The catalog feature's container.
  public let catalog: CatalogDependencies
  /// The cart feature's container.
  public let cart: CartDependencies

  /// Builds both features' containers on `backend`.
  ///
  /// - Parameters:
  ///   - backend: The services both features use.
  ///   - searchDelay: How long typing must pause before the catalog searches.
  public init(backend: ShopBackend, searchDelay: Duration = .milliseconds(300)) {
    catalog = CatalogDependencies(products: backend, searchDelay: searchDelay)
    cart = CartDependencies(inventory: backend, orders: backend)
  }

  /// The app on the demo backend (what `Store<AppState, AppDependencies>()` builds).
  public convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    self.init(backend: ShopBackend())
  }
}
