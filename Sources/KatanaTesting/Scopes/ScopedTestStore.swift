import Katana

/// A feature's handle on a ``TestStore`` of the app: the test store's assertions, typed to the feature's
/// state `S` and dependencies `D`, with the feature mounted in the app's store as in production.
///
/// Made by `scope(_:dependencies:)` and its variants on a test store or on another scoped test store, as
/// `store.scope(_:dependencies:)` makes a `ScopedStore`:
///
/// ```swift
/// let app = TestStore(initialState: AppState(), dependencies: AppDependencies(cartAPI: FakeCartAPI()))
/// let cart = app.scope(\.cart, dependencies: \.cart)   // ScopedTestStore<CartState, CartDependencies>
///
/// try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
/// try await cart.dispatch(Checkout())
/// await cart.receive(ClearCart.self) { $0.items = [] }
/// await app.finish()
/// ```
///
/// Its methods are ``TestStoreProtocol``'s, so a feature's test written against
/// `some TestStoreProtocol<CartState, CartDependencies>` runs on the feature alone (a ``TestStore`` of
/// `CartState`) and scoped (this handle). Scoped:
/// - The test's items go through the store's scope: the root store's one mailbox and its interceptors, which
///   see them as `ScopedDispatchable`s; the feature's side effects get the feature's context.
/// - Expected mutations are written against the feature's state. The test store applies one at the scope's
///   place in the whole state before the item, and compares the result with the whole committed state: a
///   change anywhere else in the app's state is reported too, with a diff whose paths start at the app state.
/// - `receive` matches the items that came through a scope of the same place in the state, on the feature's
///   item (`ScopedDispatchable.base`), and returns the feature's item.
/// - Everything else is the test store's, shared by all its handles: one queue of received items, asserted in
///   the order the store saw them; one ``TestStoreProtocol/exhaustivity``; one end of the test. An item that
///   another feature (or the app) dispatched and nobody asserted is reported, whichever handle the test used.
///
/// The handle keeps its test store alive.
public final class ScopedTestStore<S: FeatureState, D: SideEffectDependencyContainer>: TestStoreProtocol {
  let core: TestScopeCore<S, D>

  /// The store's scope that the feature's items go through, as the app's code would use it.
  ///
  /// Read from it and observe it; dispatch through the scoped test store instead: what you dispatch directly
  /// on the scope counts as received.
  public let store: ScopedStore<S, D>

  init(core: TestScopeCore<S, D>, store: ScopedStore<S, D>) {
    self.core = core
    self.store = store
  }

  /// Which scope this is: where the feature is mounted in the app's state (`AppState.cart`). Received items
  /// that came through a scope with this id are the feature's.
  public var id: ScopeID {
    store.id
  }

  /// The engine behind ``TestStoreProtocol``'s methods; an implementation detail.
  public var _testScope: _TestScope<S, D> {
    _TestScope(core: core)
  }
}
