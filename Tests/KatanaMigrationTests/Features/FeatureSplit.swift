import Katana
import KatanaTestSupport

// MIGRATION.md, "Splitting AppState into features": an app whose one `AppState` holds a catalog and a cart,
// before the split (as stage 2 leaves it: Katana 6's shape on async/await) and after it. In an app, each
// feature would be a module of its own, with `public` declarations; here they share the test target, and each
// version lives in a namespace of its own because both keep the same type names.

/// The app before the split: one state, updaters and side effects typed to all of it, one container.
enum FeatureSplitBefore {}

/// The app after the split: a Cart feature and a Catalog feature, mounted on one store by the app.
enum FeatureSplit {}

// MARK: - Services both versions use

protocol OrdersAPI: Sendable {
  func place(_ items: [String]) async throws
}

protocol CatalogAPI: Sendable {
  func products() async throws -> [String]
}

protocol Tracker: Sendable {
  func track(_ event: String)
}

/// Stands in for the order service: places every order at once.
struct LiveOrdersAPI: OrdersAPI {
  func place(_ items: [String]) async throws {}
}

/// Stands in for the catalog service.
struct LiveCatalogAPI: CatalogAPI {
  func products() async throws -> [String] { ["A1", "B2"] }
}

/// Records the orders placed. Given gates, it opens `started` and waits for `release` (or for cancellation)
/// before placing the order.
final class FakeOrders: OrdersAPI {
  let placed = Recorder<[String]>()
  private let started: Gate?
  private let release: Gate?

  init(started: Gate? = nil, release: Gate? = nil) {
    self.started = started
    self.release = release
  }

  func place(_ items: [String]) async throws {
    started?.open()
    if let release {
      await release.wait()
      try Task.checkCancellation()
    }
    placed.append(items)
  }
}

/// Records tracked events.
final class RecordingTracker: Tracker {
  let events = Recorder<String>()

  func track(_ event: String) {
    events.append(event)
  }
}

// MARK: - Before

extension FeatureSplitBefore {
  struct CatalogState: Equatable {
    var products: [String] = []
    var selectedSKU: String?
  }

  struct CartState: Equatable {
    var items: [String] = []
  }

  struct ClearCart: StateUpdater {
    func updateState(_ state: inout AppState) {
      state.cart.items = []
    }
  }

  // MIGRATION-SNIPPET-BEGIN: features-before
  struct AppState: State, Equatable {
    var catalog = CatalogState()
    var cart = CartState()
  }

  struct AddToCart: StateUpdater {
    let sku: String

    func updateState(_ state: inout AppState) {
      state.cart.items.append(sku)
    }
  }

  struct Checkout: SideEffect {
    func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
      let items = context.getState().cart.items
      try await context.dependencies.orders.place(items)
      try await context.dispatch(ClearCart())
    }
  }

  struct AddSelectedProductToCart: SideEffect {
    func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
      guard let sku = context.getState().catalog.selectedSKU else { return }
      try await context.dispatch(AddToCart(sku: sku))
    }
  }

  final class AppDependencies: SideEffectDependencyContainer {
    let orders: any OrdersAPI
    let catalogAPI: any CatalogAPI

    init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
      orders = LiveOrdersAPI()
      catalogAPI = LiveCatalogAPI()
    }
  }
  // MIGRATION-SNIPPET-END: features-before
}

// MARK: - After: the Cart feature

extension FeatureSplit {
  // MIGRATION-SNIPPET-BEGIN: features-cart
  // Module Cart: imports Katana, never the app.
  struct CartState: State, Equatable {
    var items: [String] = []
  }

  struct AddToCart: StateUpdater {
    let sku: String

    func updateState(_ state: inout CartState) {
      state.items.append(sku)
    }
  }

  struct ClearCart: StateUpdater {
    func updateState(_ state: inout CartState) {
      state.items = []
    }
  }
  // MIGRATION-SNIPPET-END: features-cart

  // MIGRATION-SNIPPET-BEGIN: features-cart-side-effect
  final class CartDependencies: SideEffectDependencyContainer {
    let orders: any OrdersAPI

    init(orders: any OrdersAPI) {
      self.orders = orders
    }

    convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
      self.init(orders: LiveOrdersAPI())
    }
  }

  enum CartEffectID: Hashable, Sendable {
    case checkout
  }

  struct Checkout: SideEffect {
    func sideEffect(_ context: SideEffectContext<CartState, CartDependencies>) async throws {
      let items = context.getState().items
      try await context.run(id: CartEffectID.checkout) {
        try await context.dependencies.orders.place(items)
      }
      try await context.dispatch(ClearCart())
    }
  }
  // MIGRATION-SNIPPET-END: features-cart-side-effect
}

// MARK: - After: the Catalog feature (its items are not shown in MIGRATION.md)

extension FeatureSplit {
  struct CatalogState: State, Equatable {
    var products: [String] = []
    var selectedSKU: String?
  }

  struct SelectProduct: StateUpdater {
    let sku: String
    func updateState(_ state: inout CatalogState) {
      state.selectedSKU = sku
    }
  }

  final class CatalogDependencies: SideEffectDependencyContainer {
    let api: any CatalogAPI

    init(api: any CatalogAPI) {
      self.api = api
    }

    convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
      self.init(api: LiveCatalogAPI())
    }
  }
}

// MARK: - After: the app

extension FeatureSplit {
  // MIGRATION-SNIPPET-BEGIN: features-app
  struct AppState: State, Equatable {
    var catalog = CatalogState()
    var cart = CartState()
  }

  final class AppDependencies: SideEffectDependencyContainer {
    let catalog: CatalogDependencies
    let cart: CartDependencies

    init(catalog: CatalogDependencies, cart: CartDependencies) {
      self.catalog = catalog
      self.cart = cart
    }

    convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
      self.init(catalog: CatalogDependencies(api: LiveCatalogAPI()), cart: CartDependencies(orders: LiveOrdersAPI()))
    }
  }
  // MIGRATION-SNIPPET-END: features-app

  // MIGRATION-SNIPPET-BEGIN: features-cross
  /// Reads one feature and changes another: it stays in the app, typed to AppState, and dispatches the cart's
  /// own item through the cart's scope.
  struct AddSelectedProductToCart: SideEffect {
    func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
      guard let sku = context.getState().catalog.selectedSKU else { return }
      try await context.scope(\.cart, dependencies: \.cart).dispatch(AddToCart(sku: sku))
    }
  }
  // MIGRATION-SNIPPET-END: features-cross

  // MIGRATION-SNIPPET-BEGIN: features-interceptor
  enum AnalyticsInterceptor {
    static func interceptor(tracker: any Tracker) -> StoreInterceptor {
      return { context in
        return { next in
          return { dispatchable in
            try await next(dispatchable)  // the wrapper itself, never `scoped.base`
            if let scoped = dispatchable as? any ScopedDispatchable {
              tracker.track("\(scoped.scope): \(scoped.base)")  // AppState.cart: AddToCart(sku: "A1")
            } else {
              tracker.track("\(dispatchable)")
            }
          }
        }
      }
    }
  }
  // MIGRATION-SNIPPET-END: features-interceptor

  /// Mounts the cart, adds a product and checks out, as MIGRATION.md shows; returns the store.
  static func mountAndCheckOut(tracker: any Tracker) async throws -> Store<AppState, AppDependencies> {
    // MIGRATION-SNIPPET-BEGIN: features-mount
    let store = Store<AppState, AppDependencies>(interceptors: [AnalyticsInterceptor.interceptor(tracker: tracker)])
    let cart = store.scope(\.cart, dependencies: \.cart)  // ScopedStore<CartState, CartDependencies>
    try await cart.dispatch(AddToCart(sku: "A1"))  // applies at store.state.cart, in place
    try await cart.dispatch(Checkout())  // gets the cart's context: its slice, its container, its ids
    // MIGRATION-SNIPPET-END: features-mount
    return store
  }
}
