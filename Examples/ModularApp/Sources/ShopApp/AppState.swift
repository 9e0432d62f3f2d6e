import Cart
import Catalog
import Katana

/// The app's whole state: one value, with each feature's state at a field of its own.
///
/// The app mounts each feature at its field (`store.scope(\.catalog, dependencies: \.catalog)`); the features
/// never see this type.
public struct AppState: State, Equatable {
  /// The catalog feature's state.
  public var catalog = CatalogState()
  /// The cart feature's state.
  public var cart = CartState()

  /// An app that has not searched nor added anything yet.
  public init() {}

  /// An app starting with these features' states (tests start from a catalog showing results).
  public init(catalog: CatalogState = CatalogState(), cart: CartState = CartState()) {
    self.catalog = catalog
    self.cart = cart
  }
}
