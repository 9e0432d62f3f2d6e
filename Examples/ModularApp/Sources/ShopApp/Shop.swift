import Cart
import Catalog
import Katana

/// The app: one store, with the catalog and the cart mounted on it.
///
/// ```swift
/// let shop = Shop()
/// try await shop.catalog.searchFieldChanged("tea").value          // the catalog's own items
/// try await shop.catalog.dispatch(AddProductToCart(productID: "TEA-SENCHA"))
/// print(shop.cart.state.lines)                                    // the cart has it
/// ```
///
/// Views get the feature handle they need (`shop.catalog` for the catalog screen, `shop.cart` for the cart
/// screen), typed to that feature only. Both are views of the one store: the same mailbox, the same
/// interceptors, one state.
public final class Shop: Sendable {
  /// The store, with the app's whole state.
  public let store: Store<AppState, AppDependencies>
  /// The catalog feature, mounted at `AppState.catalog`, its outputs handled by the app. Hand this handle to
  /// the catalog's views: a scope of the catalog mounted elsewhere without a handler would ignore its
  /// "Add to cart".
  public let catalog: ScopedStore<CatalogState, CatalogDependencies>
  /// The cart feature, mounted at `AppState.cart`.
  public let cart: ScopedStore<CartState, CartDependencies>
  /// Every item the store handled, with the feature it came through.
  public let activity: ActivityLog

  /// Creates the app's store and mounts the features.
  ///
  /// - Parameters:
  ///   - initialState: Where the app starts.
  ///   - backend: The services behind both features.
  ///   - searchDelay: How long typing must pause before the catalog searches.
  ///   - clock: The store's clock (debounce, the backend's latency): a `TestClock` in tests.
  public init(
    initialState: AppState = AppState(), backend: ShopBackend = ShopBackend(),
    searchDelay: Duration = .milliseconds(300), clock: any Clock<Duration> = ContinuousClock()
  ) {
    let activity = ActivityLog()
    self.activity = activity
    store = Store(
      interceptors: [activity.interceptor],
      stateInitializer: { initialState },
      dependenciesInitializer: { _, _ in AppDependencies(backend: backend, searchDelay: searchDelay) },
      configuration: StoreConfiguration(clock: clock))
    // The catalog's outputs are handled here, where it is mounted, with the app's own context: "Add to cart"
    // becomes the app's side effect, which dispatches the Cart feature's own item. The catalog's side effect
    // waits for it, and gets the cart's errors.
    catalog = store.scope(\.catalog, dependencies: \.catalog) { (output: CatalogOutput, app) in
      switch output {
      case .addToCart(let product):
        try await app.dispatch(AddCatalogProductToCart(product: product))
      }
    }
    cart = store.scope(\.cart, dependencies: \.cart)
  }

  /// A short name for the feature an item came through: "catalog", "cart", or "app" for the app's own items.
  public func feature(of scope: ScopeID?) -> String {
    switch scope {
    case catalog.id: "catalog"
    case cart.id: "cart"
    default: "app"
    }
  }
}
