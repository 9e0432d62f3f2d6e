import KatanaTestSupport
import KatanaTesting
import Testing

// Two features that know only their own types (a cart and a catalog), a small one for elements of a
// collection (a room), and a shop app that mounts them: the fixtures of the scoped test store's tests.

// MARK: - The cart feature

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

/// A closure the app (or a test) sets after the store exists: how a feature hands work back to whoever
/// mounted it.
final class Hook<Value: Sendable>: Sendable {
  private let body = LockedValue<(@Sendable (Value) async throws -> Void)?>(nil)

  func set(_ body: @escaping @Sendable (Value) async throws -> Void) {
    self.body.withLock { $0 = body }
  }

  func callAsFunction(_ value: Value) async throws {
    try await body.current?(value)
  }
}

final class CartDependencies: SideEffectDependencyContainer {
  /// The checkout backend.
  let checkout: @Sendable ([String]) async throws -> Void
  /// Hands the checked-out items back to the app.
  let onCheckedOut = Hook<[String]>()
  /// What `checkout` was called with.
  let checkedOut = Recorder<[String]>()

  init(checkout: @escaping @Sendable ([String]) async throws -> Void = { _ in }) {
    self.checkout = checkout
  }

  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    self.checkout = { _ in }
  }
}

/// The id the cart's checkout runs under: the same value as the catalog's `LoadID`, on purpose.
struct CheckoutID: Hashable, Sendable {}

/// Checks the cart out under the feature's effect id: marks it busy, calls the backend from the feature's
/// container, clears the cart, then hands the items back to the app.
struct Checkout: SideEffect {
  func sideEffect(_ context: SideEffectContext<CartState, CartDependencies>) async throws {
    let items = context.getState().items
    try await context.run(id: CheckoutID()) {
      try await context.dispatch(SetCheckingOut(value: true))
      try await context.dependencies.checkout(items)
      context.dependencies.checkedOut.append(items)
      try await context.dispatch(ClearCart())
    }
    try await context.dependencies.onCheckedOut(items)
  }
}

/// Sleeps on the store's clock under the feature's `CheckoutID`, then adds `sku`.
struct AddLater: SideEffect, Equatable {
  var delay = Duration.seconds(1)
  let sku: String
  func sideEffect(_ context: SideEffectContext<CartState, CartDependencies>) async throws {
    try await context.run(id: CheckoutID()) {
      try await context.clock.sleep(for: delay)
      try await context.dispatch(AddItem(sku: sku))
    }
  }
}

/// Counts the cart's items: a returning side effect.
struct CountItems: ReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) async throws -> Int {
    try context.typed(CartState.self, CartDependencies.self).getState().items.count
  }
}

struct CartError: Error, Equatable {}

/// Throws `CartError`.
struct FailingCheckout: SideEffect, Equatable {
  func sideEffect(_ context: SideEffectContext<CartState, CartDependencies>) async throws {
    throw CartError()
  }
}

/// Hands `FailingCheckout` to the store with `context.send`: its error goes to a handle nobody looks at.
struct SendFailingCheckout: SideEffect {
  func sideEffect(_ context: SideEffectContext<CartState, CartDependencies>) async throws {
    context.send(FailingCheckout())
  }
}

// MARK: - The catalog feature

struct CatalogState: State, Equatable {
  var selected: [String] = []
}

struct Select: StateUpdater, Equatable {
  let sku: String
  func updateState(_ state: inout CatalogState) { state.selected.append(sku) }
}

final class CatalogDependencies: SideEffectDependencyContainer {
  init() {}
  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {}
}

/// The catalog's id: equal to the cart's `CheckoutID` as a value, but in the catalog's namespace.
typealias LoadID = CheckoutID

/// Sleeps on the store's clock under the catalog's `LoadID`, then selects `sku`.
struct SelectLater: SideEffect {
  let sku: String
  func sideEffect(_ context: SideEffectContext<CatalogState, CatalogDependencies>) async throws {
    try await context.run(id: LoadID()) {
      try await context.clock.sleep(for: .seconds(1))
      try await context.dispatch(Select(sku: sku))
    }
  }
}

// MARK: - Rooms: features on the elements of a collection

struct RoomState: State, Identifiable, Equatable {
  var id = 0
  var messages: [String] = []
}

struct Post: StateUpdater, Equatable {
  let text: String
  func updateState(_ state: inout RoomState) { state.messages.append(text) }
}

/// Waits for `gate`, then posts `text` to its room.
struct PostAfter: SideEffect {
  let gate: Gate
  let text: String
  func sideEffect(_ context: SideEffectContext<RoomState, CatalogDependencies>) async throws {
    await gate.wait()
    try await context.dispatch(Post(text: text))
  }
}

// MARK: - The app

/// A saved cart: an element of a collection, with the cart feature inside it.
struct SavedCart: State, Identifiable, Equatable {
  var id = 0
  var cart = CartState()
}

struct ShopState: State, Equatable {
  var cart = CartState()
  var catalog = CatalogState()
  var orders: [[String]] = []
  var cartRevision = 0
  var presentedCart: CartState?
  var savedCarts: [SavedCart] = []
  var rooms: [RoomState] = []
}

/// Applies a cart updater to the app's cart, and counts the change in the app's `cartRevision`.
struct CountedCartUpdate: StateUpdater {
  let base: AddItem
  func updateState(_ state: inout ShopState) {
    base.updateState(&state.cart)
    state.cartRevision += 1
  }
}

extension AddItem {
  /// This updater, applied to the app's cart and counted.
  var countingInTheApp: CountedCartUpdate { CountedCartUpdate(base: self) }
}

/// An app interceptor that counts every `AddItem` sent through the cart's scope: it hands the store a
/// `CountedCartUpdate` instead, which also changes the app state outside the cart.
let countingCartChanges: StoreInterceptor = { _ in
  { next in
    { item in
      if let scoped = item as? any ScopedDispatchable, let add = scoped.base as? AddItem,
        scoped.scope.description == "ShopState.cart"
      {
        try await next(add.countingInTheApp)
      } else {
        try await next(item)
      }
    }
  }
}

/// The app's record of an order: the cart hands its checked-out items back, the app records them.
struct RecordOrder: StateUpdater, Equatable {
  let items: [String]
  func updateState(_ state: inout ShopState) { state.orders.append(items) }
}

struct RemoveSavedCart: StateUpdater {
  let id: Int
  func updateState(_ state: inout ShopState) { state.savedCarts.removeAll { $0.id == id } }
}

struct DismissCart: StateUpdater {
  func updateState(_ state: inout ShopState) { state.presentedCart = nil }
}

struct SetRooms: StateUpdater {
  let rooms: [RoomState]
  func updateState(_ state: inout ShopState) { state.rooms = rooms }
}

final class SavedCartDependencies: SideEffectDependencyContainer {
  let cart: CartDependencies
  init(cart: CartDependencies) { self.cart = cart }
  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) { cart = CartDependencies() }
}

final class ShopDependencies: SideEffectDependencyContainer {
  let cart: CartDependencies
  let catalog = CatalogDependencies()
  let saved: SavedCartDependencies
  let rooms = CatalogDependencies()

  init(cart: CartDependencies = CartDependencies()) {
    self.cart = cart
    self.saved = SavedCartDependencies(cart: cart)
  }

  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    cart = CartDependencies()
    saved = SavedCartDependencies(cart: cart)
  }
}

typealias ShopTestStore = TestStore<ShopState, ShopDependencies>

/// A test store of the shop, with a test clock when given.
func makeShop(
  _ state: ShopState = ShopState(), cart: CartDependencies = CartDependencies(), clock: TestClock? = nil,
  interceptors: [StoreInterceptor] = [], exhaustivity: Exhaustivity = .on, recordsDispatches: Bool = false
) -> ShopTestStore {
  var configuration = TestStoreConfiguration(exhaustivity: exhaustivity, recordsDispatches: recordsDispatches)
  if let clock { configuration.clock = clock }
  return ShopTestStore(
    initialState: state, interceptors: interceptors, dependencies: ShopDependencies(cart: cart),
    configuration: configuration)
}
