/// Something a feature tells the code that mounted it: that the user asked for something the feature does not
/// do itself ("add this product to the cart"), or that something happened there that the parent reacts to.
///
/// A feature declares its outputs as a type of its own, usually one enum, whose ``StateType`` is the feature's
/// state, and emits them from its side effects with ``SideEffectContext/emit(_:)``. The code that mounts the
/// feature handles them where it calls `scope`, with a context of its own (see <doc:BuildingFeatures>):
///
/// ```swift
/// // Module Catalog: knows nothing of the cart.
/// public enum CatalogOutput: FeatureOutput, Equatable {
///   public typealias StateType = CatalogState
///   case addToCart(Product)
/// }
/// try await context.emit(CatalogOutput.addToCart(product))   // in a side effect of the catalog
///
/// // The app: mounts the catalog and says what its outputs mean.
/// let catalog = store.scope(\.catalog, dependencies: \.catalog) { (output: CatalogOutput, app) in
///   switch output {
///   case .addToCart(let product): try await app.dispatch(AddCatalogProductToCart(product: product))
///   }
/// }
/// ```
///
/// - `emit` waits for the handler and rethrows its error unchanged. The handler runs in the emitting task:
///   cancelling that task cancels the handler (cooperatively), as it cancels a nested `dispatch`.
/// - Outputs are not dispatched items: they do not enter the store's mailbox and interceptors do not see them
///   (the handler's dispatches they do see). What the emitter committed before `emit` is committed when the
///   handler starts; what the handler awaited is committed when `emit` returns.
/// - A scope mounted without a handler, or a handler of another output type, ignores the output: `emit`
///   returns at once. A test store records every output that nothing handled, and the test asserts it with
///   `receiveOutput` (module `KatanaTesting`), without any app.
public protocol FeatureOutput: Sendable {
  /// The state of the feature that emits this output: a side effect emits only its own feature's outputs.
  associatedtype StateType: FeatureState
}

/// Handles the outputs of type `Output` of a feature, with the context of the code that mounted it: its state,
/// its dependencies, its `dispatch` and `scope`, and its own `emit` (to tell its own parent in turn).
public typealias FeatureOutputHandler<Output: FeatureOutput, ParentState: FeatureState, ParentDependencies> =
  @Sendable (_ output: Output, _ parent: SideEffectContext<ParentState, ParentDependencies>) async throws -> Void
where ParentDependencies: SideEffectDependencyContainer

/// Where a scope's outputs go: the handler given to `scope`, with the context of the code that mounted it.
///
/// A class, so that a ``SideEffectContext`` that carries one stays three words: it fits an existential's inline
/// buffer, and passing it as `any AnySideEffectContext` (to a returning side effect, per dispatch) allocates
/// nothing.
@usableFromInline
final class FeatureOutputRoute: Sendable {
  /// Hands `output` to the handler and returns true, or returns false if the handler takes another type.
  let deliver: @Sendable (any FeatureOutput) async throws -> Bool

  init<Output: FeatureOutput, ParentState: FeatureState, ParentDependencies: SideEffectDependencyContainer>(
    _ handler: @escaping FeatureOutputHandler<Output, ParentState, ParentDependencies>,
    parent: SideEffectContext<ParentState, ParentDependencies>
  ) {
    deliver = { output in
      guard let output = output as? Output else { return false }
      try await handler(output, parent)
      return true
    }
  }
}
