/// The ids the cart runs work under.
///
/// They are the cart's own: the store namespaces effect ids by scope, so another feature (or the app) using
/// an equal value never cancels the cart's checkout, and the cart never reaches their work.
public enum CartEffectID: Hashable, Sendable {
  /// Placing the order: cancel it with `cart.cancel(id: CartEffectID.checkout)` (the customer left the
  /// checkout screen) and the cart goes back to ``CheckoutStatus/idle``, unchanged.
  case checkout
}
