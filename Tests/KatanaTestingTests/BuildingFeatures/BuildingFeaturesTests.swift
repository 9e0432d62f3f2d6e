import KatanaTesting
import Testing

// The Swift block of the "Testing a feature" section of the "Building features" article
// (Sources/Katana/Katana.docc/BuildingFeatures.md), compiled and run: .ci/check-article-snippets keeps it
// identical to the code between the markers here. The types around it are the article's, in
// `BuildingFeatures`, so that they do not clash with other tests' types.

@Suite("Building features' testing example", .timeLimit(.minutes(3)))
struct BuildingFeatures {
  // ARTICLE-SNIPPET-BEGIN: testing-a-feature
  func addingAnItem(_ cart: some TestStoreProtocol<CartState, CartDependencies>) async throws {
    try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
  }

  @Test func cart_alone() async throws {
    let store = TestStore(initialState: CartState(), dependencies: CartDependencies(api: FakeCartAPI()))
    try await addingAnItem(store)
    await store.finish()
  }

  @Test func cart_inTheApp() async throws {
    let app = TestStore(initialState: AppState(), dependencies: AppDependencies(cartAPI: FakeCartAPI()))
    try await addingAnItem(app.scope(\.cart, dependencies: \.cart))
    await app.finish()
  }
  // ARTICLE-SNIPPET-END: testing-a-feature
}

extension BuildingFeatures {
  struct CartState: State, Equatable {
    var items: [String] = []
  }

  struct AddItem: StateUpdater {
    let sku: String
    func updateState(_ state: inout CartState) { state.items.append(sku) }
  }

  protocol CartAPI: Sendable {
    func checkout(_ items: [String]) async throws
  }

  struct FakeCartAPI: CartAPI {
    func checkout(_ items: [String]) async throws {}
  }

  final class CartDependencies: SideEffectDependencyContainer {
    let api: any CartAPI
    init(api: any CartAPI) { self.api = api }
    convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) { self.init(api: FakeCartAPI()) }
  }

  struct CatalogState: State, Equatable {
    var skus: [String] = []
  }

  struct AppState: State, Equatable {
    var cart = CartState()
    var catalog = CatalogState()
  }

  final class AppDependencies: SideEffectDependencyContainer {
    let cart: CartDependencies
    init(cartAPI: any CartAPI) { cart = CartDependencies(api: cartAPI) }
    convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
      self.init(cartAPI: FakeCartAPI())
    }
  }
}
