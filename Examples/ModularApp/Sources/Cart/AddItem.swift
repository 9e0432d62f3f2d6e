import Katana

/// Puts units of an item in the cart, once the inventory has reserved them.
///
/// Anything may dispatch it to the cart: its own UI (a "+" on a line), or the app on behalf of another feature
/// (the catalog's "Add to cart"). The cart does not know who asks.
///
/// - Throws: ``CartError/outOfStock(name:available:)`` if the inventory has fewer units left (the cart is
///   unchanged); ``CartError/invalidQuantity(_:)`` for a quantity below one;
///   ``CartError/checkoutInProgress`` while an order is being placed.
public struct AddItem: SideEffect, Equatable {
  /// What to add.
  public let item: CartItem
  /// How many units.
  public let quantity: Int

  /// Creates the item.
  public init(_ item: CartItem, quantity: Int = 1) {
    self.item = item
    self.quantity = quantity
  }

  /// Reserves the units, then adds them.
  public func sideEffect(_ context: SideEffectContext<CartState, CartDependencies>) async throws {
    guard quantity > 0 else { throw CartError.invalidQuantity(quantity) }
    guard context.getState().checkout != .placing else { throw CartError.checkoutInProgress }
    do {
      try await context.dependencies.inventory.reserve(quantity, of: item.sku)
    } catch InventoryError.insufficientStock(let available) {
      throw CartError.outOfStock(name: item.name, available: available)
    }
    try await context.dispatch(InsertItem(item: item, quantity: quantity))
  }
}
