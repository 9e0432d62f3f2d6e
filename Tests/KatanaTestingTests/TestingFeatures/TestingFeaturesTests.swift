import KatanaTesting
import Testing

// Every Swift block of the "Testing a feature" article (Sources/KatanaTesting/KatanaTesting.docc/TestingFeatures.md),
// compiled and run: .ci/check-article-snippets keeps each block identical to the code between its markers here.
// The article's types live in `TestingFeatures`, so that they do not clash with other tests' types.

@Suite("Testing a feature's examples", .timeLimit(.minutes(3)))
struct TestingFeatures {
  // ARTICLE-SNIPPET-BEGIN: test-body
  /// The cart's checkout, written once against the feature's own types.
  func checkingOut(_ cart: some TestStoreProtocol<CartState, CartDependencies>) async throws {
    try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
    try await cart.dispatch(Checkout())
    await cart.receive(SetCheckingOut(value: true)) { $0.isCheckingOut = true }
    await cart.receive(ClearCart.self) {
      $0.items = []
      $0.isCheckingOut = false
    }
  }
  // ARTICLE-SNIPPET-END: test-body

  // ARTICLE-SNIPPET-BEGIN: alone
  @Test func checkout_alone() async throws {
    let store = TestStore(initialState: CartState(), dependencies: CartDependencies(api: FakeCartAPI()))
    try await checkingOut(store)
    await store.finish()
  }
  // ARTICLE-SNIPPET-END: alone

  // ARTICLE-SNIPPET-BEGIN: scoped
  @Test func checkout_inTheApp() async throws {
    let app = TestStore(initialState: AppState()) { dispatch, _ in
      AppDependencies(cartAPI: FakeCartAPI(), dispatch: dispatch)
    }
    try await checkingOut(app.scope(\.cart, dependencies: \.cart))
    await app.receive(RecordOrder(items: ["A1"])) { $0.orders = [["A1"]] }  // the app's part of the checkout
    await app.finish()
  }
  // ARTICLE-SNIPPET-END: scoped

  // ARTICLE-SNIPPET-BEGIN: optional-child
  @Test func checkout_ofThePresentedCart() async throws {
    let app = TestStore(initialState: AppState(presentedCart: CartState())) { dispatch, _ in
      AppDependencies(cartAPI: FakeCartAPI(), dispatch: dispatch)
    }
    let presented = app.scope(\.presentedCart, dependencies: \.cart)
    try await checkingOut(presented)
    await app.receive(RecordOrder.self) { $0.orders = [["A1"]] }

    try await app.dispatch(DismissCart()) { $0.presentedCart = nil }
    await #expect(throws: ScopeError.missingChild(presented.id)) {
      try await presented.dispatch(AddItem(sku: "B2"))
    }
    await app.finish()
  }
  // ARTICLE-SNIPPET-END: optional-child

  /// What the article says: a scoped test still reports the app's items that nobody asserted.
  @Test func scopedTest_reportsTheAppsItemsNobodyAsserted() async throws {
    let app = TestStore(initialState: AppState()) { dispatch, _ in
      AppDependencies(cartAPI: FakeCartAPI(), dispatch: dispatch)
    }
    let cart = app.scope(\.cart, dependencies: \.cart)
    try await checkingOut(cart)
    await withExpectedIssueOutputCaptured {
      await withKnownIssue {
        await app.finish()
      } matching: { issue in
        issue.comments.map(\.rawValue).joined().contains(#"RecordOrder(items: ["A1"])"#)
      }
    }
  }
}

extension TestingFeatures {
  // ARTICLE-SNIPPET-BEGIN: feature
  // Module Cart: it knows its own types only.
  struct CartState: State, Equatable {
    var items: [String] = []
    var isCheckingOut = false
  }

  struct AddItem: StateUpdater, Equatable {
    let sku: String
    func updateState(_ state: inout CartState) { state.items.append(sku) }
  }

  struct SetCheckingOut: StateUpdater, Equatable {
    let value: Bool
    func updateState(_ state: inout CartState) { state.isCheckingOut = value }
  }

  struct ClearCart: StateUpdater, Equatable {
    func updateState(_ state: inout CartState) {
      state.items = []
      state.isCheckingOut = false
    }
  }

  protocol CartAPI: Sendable {
    func checkout(_ items: [String]) async throws
  }

  final class CartDependencies: SideEffectDependencyContainer {
    let api: any CartAPI
    /// Set by the app: what else happens once an order is placed.
    let onCheckout: @Sendable ([String]) async throws -> Void

    init(api: any CartAPI, onCheckout: @escaping @Sendable ([String]) async throws -> Void = { _ in }) {
      self.api = api
      self.onCheckout = onCheckout
    }

    convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
      self.init(api: LiveCartAPI())
    }
  }

  /// Places the order, one checkout at a time (under the feature's own effect id), then tells the app.
  struct Checkout: SideEffect {
    struct ID: Hashable, Sendable {}

    func sideEffect(_ context: SideEffectContext<CartState, CartDependencies>) async throws {
      let items = context.getState().items
      try await context.run(id: ID(), cancelInFlight: true) {
        try await context.dispatch(SetCheckingOut(value: true))
        try await context.dependencies.api.checkout(items)
        try await context.dispatch(ClearCart())
      }
      try await context.dependencies.onCheckout(items)
    }
  }
  // ARTICLE-SNIPPET-END: feature

  /// The production backend; the article's tests never call it.
  struct LiveCartAPI: CartAPI {
    struct NotAvailableInTests: Error {}
    func checkout(_ items: [String]) async throws { throw NotAvailableInTests() }
  }

  // ARTICLE-SNIPPET-BEGIN: fake
  struct FakeCartAPI: CartAPI {
    func checkout(_ items: [String]) async throws {}
  }
  // ARTICLE-SNIPPET-END: fake
}

extension TestingFeatures {
  // ARTICLE-SNIPPET-BEGIN: app
  // The app: it mounts the cart at `\.cart` (and, when presented, at `\.presentedCart`).
  struct AppState: State, Equatable {
    var cart = CartState()
    var presentedCart: CartState?
    var orders: [[String]] = []
  }

  struct RecordOrder: StateUpdater, Equatable {
    let items: [String]
    func updateState(_ state: inout AppState) { state.orders.append(items) }
  }

  struct DismissCart: StateUpdater {
    func updateState(_ state: inout AppState) { state.presentedCart = nil }
  }

  final class AppDependencies: SideEffectDependencyContainer {
    let cart: CartDependencies

    init(cartAPI: any CartAPI, dispatch: @escaping AnyDispatch) {
      cart = CartDependencies(api: cartAPI) { items in _ = try await dispatch(RecordOrder(items: items)) }
    }

    convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
      self.init(cartAPI: LiveCartAPI(), dispatch: dispatch)
    }
  }
  // ARTICLE-SNIPPET-END: app
}
