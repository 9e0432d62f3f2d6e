import Katana

/// The user tapped "Add to cart" on a product of the results.
///
/// The catalog marks the product as being added, emits ``CatalogOutput/addToCart(_:)`` and waits for the
/// code that mounted it to handle it, then says what happened in ``CatalogState/notice``. It knows nothing of
/// the cart: what "adding" means is up to whoever handles the output (in the app, the Cart feature's
/// `AddItem`, dispatched through the cart's scope of the same store). Mounted without a handler (on a store of
/// its own, in a preview), nothing answers, and the catalog shows the product as added.
///
/// Each tap adds one unit; two taps add two.
///
/// - Throws: ``CatalogError/unknownProduct(_:)`` if the results do not show the product; what the output's
///   handler throws (after showing it in the notice).
public struct AddProductToCart: SideEffect, Equatable {
  /// The product to add.
  public let productID: Product.ID

  /// Creates the item.
  public init(productID: Product.ID) {
    self.productID = productID
  }

  /// Hands the product to the app as ``CatalogOutput/addToCart(_:)``, showing progress and the outcome.
  public func sideEffect(_ context: SideEffectContext<CatalogState, CatalogDependencies>) async throws {
    guard let product = context.getState().results.first(where: { $0.id == productID }) else {
      throw CatalogError.unknownProduct(productID)
    }
    try await context.dispatch(StartAdding(productID: product.id))
    let outcome: Result<Void, any Error>
    do {
      try await context.emit(CatalogOutput.addToCart(product))
      outcome = .success(())
    } catch {
      outcome = .failure(error)
    }
    // Sent and then awaited, rather than dispatched: the progress marker must go even if this task was
    // cancelled meanwhile (an awaited dispatch from a cancelled task is withdrawn), and waiting for the handle
    // keeps the order (when this returns, the notice is there).
    try await context.send(FinishAdding(product: product, failure: outcome.failureReason)).value
    try outcome.get()
  }
}

extension Result<Void, any Error> {
  /// What the notice says about a failed add; nil for a success.
  fileprivate var failureReason: String? {
    switch self {
    case .success: nil
    case .failure(is CancellationError): "the add was cancelled"
    case .failure(let error): "\(error)"
    }
  }
}
