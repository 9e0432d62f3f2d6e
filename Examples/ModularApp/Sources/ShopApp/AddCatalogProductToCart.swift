import Cart
import Catalog
import Katana

/// The one place where the catalog and the cart meet: the app's side effect behind the catalog's
/// `CatalogOutput.addToCart`, which ``Shop`` dispatches from the catalog's output handler.
///
/// It turns the catalog's `Product` into the cart's `CartItem` and dispatches the Cart feature's own
/// `AddItem` through the cart's scope, which it mounts from its context. The cart then works as it does for
/// its own UI: it reserves the stock with its own dependencies, and applies its own state updater at
/// `AppState.cart`, in place. Its errors (out of stock) come back through here to the catalog, which shows
/// them.
///
/// The root store's interceptors see the whole path, in order: the catalog's `AddProductToCart` (through the
/// catalog's scope), this item (at the root), the cart's `AddItem` and its updater (through the cart's scope),
/// then the catalog's updater that shows the outcome.
struct AddCatalogProductToCart: SideEffect {
  let product: Product

  func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
    let cart = context.scope(\.cart, dependencies: \.cart)
    try await cart.dispatch(AddItem(CartItem(product)))
  }
}

extension CartItem {
  /// The cart's view of a catalog product.
  init(_ product: Product) {
    self.init(sku: product.id, name: product.name, unitPriceInCents: product.priceInCents)
  }
}
