import Katana

// The only ways the cart's state changes: pure, synchronous, in place. The side effects dispatch the internal
// ones; the app's UI may dispatch `RemoveLine`.

/// Puts `quantity` units of `item` in the cart: a new line, or more units on the existing one.
struct InsertItem: StateUpdater, Equatable {
  let item: CartItem
  let quantity: Int
  func updateState(_ state: inout CartState) {
    if let index = state.lines.firstIndex(where: { $0.id == item.sku }) {
      state.lines[index].quantity += quantity
    } else {
      state.lines.append(CartLine(item, quantity: quantity))
    }
    // A new cart after a placed (or failed) order.
    state.checkout = .idle
  }
}

/// The order is being placed.
struct BeginCheckout: StateUpdater, Equatable {
  func updateState(_ state: inout CartState) {
    state.checkout = .placing
  }
}

/// The checkout ended with `status`: placed (the cart empties), failed, or cancelled (``CheckoutStatus/idle``).
struct EndCheckout: StateUpdater, Equatable {
  let status: CheckoutStatus
  func updateState(_ state: inout CartState) {
    state.checkout = status
    if case .placed = status {
      state.lines = []
    }
  }
}

/// Takes a line out of the cart. Nothing happens during a checkout, or if the cart has no such line.
public struct RemoveLine: StateUpdater, Equatable {
  /// The line's SKU.
  public let sku: String

  /// Creates the item.
  public init(sku: String) {
    self.sku = sku
  }

  /// Removes the line.
  public func updateState(_ state: inout CartState) {
    guard state.checkout != .placing else { return }
    state.lines.removeAll { $0.id == sku }
  }
}
