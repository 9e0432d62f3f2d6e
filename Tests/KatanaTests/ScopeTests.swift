import Katana
import KatanaTestSupport
import Testing

// MARK: - Fixtures: two features that know nothing of the app, and an app that mounts them

struct FeatCartState: State, Equatable {
  var items: [Int] = []
  var log: [Int] = []
}

struct FeatAddToCart: StateUpdater {
  let value: Int
  func updateState(_ state: inout FeatCartState) { state.items.append(value) }
}

struct FeatCartLog: StateUpdater {
  let value: Int
  func updateState(_ state: inout FeatCartState) { state.log.append(value) }
}

/// Touches the first item and records the array's storage address, as seen from inside the updater.
struct FeatTouchFirstCartItem: StateUpdater {
  let addresses: Recorder<UInt>
  func updateState(_ state: inout FeatCartState) {
    state.items[0] += 1
    addresses.append(state.items.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) })
  }
}

final class FeatCartDependencies: SideEffectDependencyContainer {
  let name: String
  init(name: String) { self.name = name }
  required init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) { name = "" }
}

struct FeatRoom: State, Identifiable, Equatable {
  var id = 0
  var messages: [String] = []
}

struct FeatPost: StateUpdater {
  let text: String
  func updateState(_ state: inout FeatRoom) { state.messages.append(text) }
}

struct FeatShop: State, Equatable {
  var note = ""
  var cart = FeatCartState()
}

struct FeatAppState: State, Equatable {
  var shop = FeatShop()
  var cart = FeatCartState()
  var wishlist = FeatCartState()
  var rootLog: [Int] = []
  var rooms: [FeatRoom] = []
  var presented: FeatCartState?
}

struct FeatRootLog: StateUpdater {
  let value: Int
  func updateState(_ state: inout FeatAppState) { state.rootLog.append(value) }
}

struct FeatRemoveRoom: StateUpdater {
  let id: Int
  func updateState(_ state: inout FeatAppState) { state.rooms.removeAll { $0.id == id } }
}

struct FeatSetRooms: StateUpdater {
  let rooms: [FeatRoom]
  func updateState(_ state: inout FeatAppState) { state.rooms = rooms }
}

final class FeatAppDependencies: SideEffectDependencyContainer {
  let cart = FeatCartDependencies(name: "cart")
  let wishlist = FeatCartDependencies(name: "wishlist")
  init() {}
  required init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {}
}

func makeFeatureStore(
  _ state: FeatAppState = FeatAppState(), interceptors: [StoreInterceptor] = []
) async throws -> Store<FeatAppState, FeatAppDependencies> {
  let store = Store<FeatAppState, FeatAppDependencies>(
    interceptors: interceptors, stateInitializer: { state }, dependenciesInitializer: { _, _ in FeatAppDependencies() })
  try await store.waitUntilReady()
  return store
}

// MARK: - (a) dispatch and send through a scope

@Suite("Scopes: dispatch and send apply in place, in the root's one mailbox", .timeLimit(.failsafeMinutes(3)))
struct ScopeDispatchTests {
  @Test func dispatch_throughScope_appliesAtTheKeyPathOnly() async throws {
    let store = try await makeFeatureStore()
    let cart = store.scope(\.cart, dependencies: \.cart)
    try await cart.dispatch(FeatAddToCart(value: 7))
    cart.send(FeatAddToCart(value: 8))
    try await store.dispatch(FeatRootLog(value: 1))
    #expect(store.state.cart.items == [7, 8])
    #expect(store.state.wishlist == FeatCartState())
    #expect(store.state.rootLog == [1])
    #expect(cart.state.items == [7, 8])
  }

  @Test func dispatch_throughNestedScopes_reachesTheNestedSlice() async throws {
    let store = try await makeFeatureStore(FeatAppState(rooms: [FeatRoom(id: 1)]))
    let room = store.scope(\.rooms, id: 1, dependencies: \.cart)
    try await room.dispatch(FeatPost(text: "hi"))
    #expect(store.state.rooms == [FeatRoom(id: 1, messages: ["hi"])])
  }

  @Test func dispatch_throughScope_mutatesALargeArrayInPlace() async throws {
    let store = try await makeFeatureStore(
      FeatAppState(cart: FeatCartState(items: Array(repeating: 0, count: 100_000))))
    let cart = store.scope(\.cart, dependencies: \.cart)
    let addresses = Recorder<UInt>()
    for _ in 0..<4 { try await cart.dispatch(FeatTouchFirstCartItem(addresses: addresses)) }
    #expect(Set(addresses.values.dropFirst()).count == 1)
    #expect(cart.state.items[0] == 4)
  }

  /// Through interceptors the chain's final `next` applies the scoped item on the store's type-erased path,
  /// which must still reach the slice in place (``ScopeRoutedUpdater``), not through a copy of the state.
  @Test func dispatch_throughScopeAndInterceptors_mutatesALargeArrayInPlace() async throws {
    let pass: StoreInterceptor = { _ in { next in { item in try await next(item) } } }
    let store = try await makeFeatureStore(
      FeatAppState(cart: FeatCartState(items: Array(repeating: 0, count: 100_000))), interceptors: [pass])
    let cart = store.scope(\.cart, dependencies: \.cart)
    let addresses = Recorder<UInt>()
    for _ in 0..<4 { try await cart.dispatch(FeatTouchFirstCartItem(addresses: addresses)) }
    #expect(Set(addresses.values.dropFirst()).count == 1)
    #expect(cart.state.items[0] == 4)
  }

  /// Sends from one thread fix the order; seeded random interleaving of the root and two features, through a
  /// randomly suspending interceptor: the commits come in exactly the send order (closed form: the
  /// sequence of tags the root listener sees equals the sequence sent).
  @Test(arguments: [1, 2, 3, 42, 1234] as [UInt64])
  func send_fromRootAndTwoFeatures_appliesInSendOrder(seed: UInt64) async throws {
    // Seeded too: the chain runs for one item at a time, in the send order, so its draws replay with the seed.
    let suspensions = LockedValue(SeededGenerator(seed: seed &* 7_919 &+ 5))
    let suspending: StoreInterceptor = { _ in
      { next in
        { item in
          if suspensions.withLock({ Int.random(in: 0..<3, using: &$0) }) == 0 { await Task.yield() }
          try await next(item)
        }
      }
    }
    let store = try await makeFeatureStore(interceptors: [suspending])
    let cart = store.scope(\.cart, dependencies: \.cart)
    let wishlist = store.scope(\.wishlist, dependencies: \.wishlist)
    let seen = Recorder<String>()
    store.addListener { old, new in
      if old.cart.log != new.cart.log { seen.append("cart \(new.cart.log.last!)") }
      if old.wishlist.log != new.wishlist.log { seen.append("wishlist \(new.wishlist.log.last!)") }
      if old.rootLog != new.rootLog { seen.append("root \(new.rootLog.last!)") }
    }
    var generator = SeededGenerator(seed: seed)
    var sent: [String] = []
    var handles: [DispatchHandle<Void>] = []
    for index in 0..<300 {
      switch Int.random(in: 0..<3, using: &generator) {
      case 0:
        handles.append(cart.send(FeatCartLog(value: index)))
        sent.append("cart \(index)")
      case 1:
        handles.append(wishlist.send(FeatCartLog(value: index)))
        sent.append("wishlist \(index)")
      default:
        handles.append(store.send(FeatRootLog(value: index)))
        sent.append("root \(index)")
      }
    }
    for handle in handles { try await handle.value }
    #expect(seen.values == sent)
    let indices = { (tag: String) in
      sent.compactMap { $0.hasPrefix(tag + " ") ? Int($0.dropFirst(tag.count + 1)) : nil }
    }
    #expect(store.state.cart.log == indices("cart"))
    #expect(store.state.wishlist.log == indices("wishlist"))
    #expect(store.state.rootLog == indices("root"))
  }
}

// MARK: - (b) state

@Suite("Scopes: state", .timeLimit(.failsafeMinutes(3)))
struct ScopeStateTests {
  @Test func state_isTheSliceOfTheLatestCommit() async throws {
    let store = try await makeFeatureStore(FeatAppState(cart: FeatCartState(items: [1])))
    let cart = store.scope(\.cart, dependencies: \.cart)
    #expect(cart.state == FeatCartState(items: [1]))
    try await store.dispatch(FeatRootLog(value: 0))
    try await cart.dispatch(FeatAddToCart(value: 2))
    #expect(cart.state == FeatCartState(items: [1, 2]))
    #expect(cart.stateIfPresent == FeatCartState(items: [1, 2]))
    #expect(cart.dependencies.name == "cart")
  }
}

// MARK: - (c) interceptors see scoped items

@Suite("Scopes: the root's interceptors see which scope an item came through", .timeLimit(.failsafeMinutes(3)))
struct ScopeInterceptorTests {
  @Test func interceptor_seesScopedDispatchable_withTheScopesID() async throws {
    let seen = Recorder<String>()
    let audit: StoreInterceptor = { _ in
      { next in
        { item in
          if let scoped = item as? any ScopedDispatchable {
            seen.append("\(scoped.scope) \(type(of: scoped.base))")
          } else {
            seen.append("root \(type(of: item))")
          }
          try await next(item)
        }
      }
    }
    let store = try await makeFeatureStore(interceptors: [audit])
    let cart = store.scope(\.cart, dependencies: \.cart)
    let wishlist = store.scope(\.wishlist, dependencies: \.wishlist)
    try await cart.dispatch(FeatAddToCart(value: 1))
    try await wishlist.send(FeatAddToCart(value: 2)).value
    try await store.dispatch(FeatRootLog(value: 3))
    #expect(
      seen.values == ["FeatAppState.cart FeatAddToCart", "FeatAppState.wishlist FeatAddToCart", "root FeatRootLog"])
    #expect(store.state.cart.items == [1])
    #expect(store.state.wishlist.items == [2])
    #expect(cart.id != wishlist.id)
    #expect(cart.id == store.scope(\.cart, dependencies: \.wishlist).id)
  }
}

@Suite("Scopes: ids", .timeLimit(.failsafeMinutes(3)))
struct ScopeIDTests {
  @Test func id_isThePlaceInTheState_howeverTheScopeWasMade() async throws {
    let store = try await makeFeatureStore()
    let direct = store.scope(\.shop.cart, dependencies: \.cart)
    let nested = store.scope(\.shop, dependencies: \.cart).scope(\.cart, dependencies: \.self)
    #expect(direct.id == nested.id)
    #expect(direct.id != store.scope(\.cart, dependencies: \.cart).id)
    #expect(direct.id != store.scope(\.shop, dependencies: \.cart).id)
    #expect("\(nested.id)" == "FeatAppState.shop.cart")
    try await nested.dispatch(FeatAddToCart(value: 1))
    #expect(direct.state.items == [1])
    #expect(store.state.shop.cart.items == [1])
  }
}

// MARK: - (d) per-slice observation

@Suite("Scopes: observers are not called for commits that leave the slice equal", .timeLimit(.failsafeMinutes(3)))
struct ScopeObservationTests {
  @Test func listener_ofScope_skipsCommitsElsewhere() async throws {
    let store = try await makeFeatureStore()
    let cart = store.scope(\.cart, dependencies: \.cart)
    let wishlist = store.scope(\.wishlist, dependencies: \.wishlist)
    let calls = Recorder<[Int]>()
    cart.addListener { old, new in calls.append(old.items + [-1] + new.items) }
    try await wishlist.dispatch(FeatAddToCart(value: 9))
    try await store.dispatch(FeatRootLog(value: 1))
    try await cart.dispatch(FeatAddToCart(value: 1))
    try await wishlist.dispatch(FeatAddToCart(value: 9))
    try await cart.dispatch(FeatAddToCart(value: 2))
    #expect(calls.values == [[-1, 1], [1, -1, 1, 2]])
  }

  @Test func unsubscribe_stopsTheListener() async throws {
    let store = try await makeFeatureStore()
    let cart = store.scope(\.cart, dependencies: \.cart)
    let calls = Recorder<Int>()
    let unsubscribe = cart.addListener { _, new in calls.append(new.items.count) }
    try await cart.dispatch(FeatAddToCart(value: 1))
    unsubscribe()
    try await cart.dispatch(FeatAddToCart(value: 2))
    #expect(calls.values == [1])
  }

  @Test func states_ofScope_skipsCommitsElsewhere() async throws {
    let store = try await makeFeatureStore()
    let cart = store.scope(\.cart, dependencies: \.cart)
    let result = await withFailsafe(seconds: 60) { () -> [[Int]] in
      var iterator = cart.states(buffering: .bufferingNewest(16)).makeAsyncIterator()
      var values: [[Int]] = []
      values.append(await iterator.next()?.items ?? [-1])
      try? await store.dispatch(FeatRootLog(value: 1))
      try? await cart.dispatch(FeatAddToCart(value: 1))
      try? await store.dispatch(FeatRootLog(value: 2))
      try? await cart.dispatch(FeatAddToCart(value: 2))
      values.append(await iterator.next()?.items ?? [-1])
      values.append(await iterator.next()?.items ?? [-1])
      return values
    }
    #expect(result == [[], [1], [1, 2]])
  }
}

// MARK: - (e) effect ids namespaced per scope, (f) feature-typed context

/// Runs under `id` until cancelled, telling `started` when it runs.
struct FeatLongRun: SideEffect {
  let id: Int
  let started: Gate
  let finished: Recorder<String>
  func sideEffect(_ context: SideEffectContext<FeatCartState, FeatCartDependencies>) async throws {
    do {
      try await context.run(id: id) {
        started.open()
        // A gate nobody opens: the run waits until it is cancelled.
        await Gate().wait()
        try Task.checkCancellation()
      }
    } catch {
      finished.append("\(context.dependencies.name) \(error is CancellationError ? "cancelled" : "\(error)")")
      throw error
    }
  }
}

struct FeatCancelRun: SideEffect {
  let id: Int
  func sideEffect(_ context: SideEffectContext<FeatCartState, FeatCartDependencies>) async throws {
    context.cancel(id: id)
  }
}

/// Reads the feature's state and dependencies and dispatches a feature updater through its context.
struct FeatCheckout: ReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) async throws -> String {
    let context = try context.typed(FeatCartState.self, FeatCartDependencies.self)
    try await context.dispatch(FeatAddToCart(value: context.getState().items.count))
    return "\(context.dependencies.name) \(context.getState().items)"
  }
}

struct FeatAddTwice: SideEffect {
  func sideEffect(_ context: SideEffectContext<FeatCartState, FeatCartDependencies>) async throws {
    try await context.dispatch(FeatAddToCart(value: 1))
    context.send(FeatAddToCart(value: 2))
    try await context.dispatch(FeatAddToCart(value: 3))
  }
}

@Suite("Scopes: side effects get the feature's context; effect ids are per scope", .timeLimit(.failsafeMinutes(3)))
struct ScopeSideEffectTests {
  @Test func sideEffect_getsContextTypedToTheFeature() async throws {
    let store = try await makeFeatureStore(FeatAppState(cart: FeatCartState(items: [5])))
    let cart = store.scope(\.cart, dependencies: \.cart)
    try await cart.dispatch(FeatAddTwice())
    #expect(store.state.cart.items == [5, 1, 2, 3])
    #expect(try await cart.dispatch(FeatCheckout()) == "cart [5, 1, 2, 3, 4]")
    #expect(store.state.wishlist.items == [])
  }

  @Test func sideEffect_throughInterceptors_stillGetsTheFeatureContext() async throws {
    let pass: StoreInterceptor = { _ in { next in { item in try await next(item) } } }
    let store = try await makeFeatureStore(interceptors: [pass])
    let wishlist = store.scope(\.wishlist, dependencies: \.wishlist)
    try await wishlist.dispatch(FeatAddTwice())
    #expect(try await wishlist.dispatch(FeatCheckout()) == "wishlist [1, 2, 3, 3]")
    #expect(try await wishlist.send(FeatCheckout()).value == "wishlist [1, 2, 3, 3, 4]")
    #expect(store.state.cart == FeatCartState())
  }

  @Test func sameEffectID_inTwoFeatures_doesNotCancelTheOther() async throws {
    let store = try await makeFeatureStore()
    let cart = store.scope(\.cart, dependencies: \.cart)
    let wishlist = store.scope(\.wishlist, dependencies: \.wishlist)
    let finished = Recorder<String>()
    let cartStarted = Gate()
    let wishlistStarted = Gate()
    let cartRun = cart.send(FeatLongRun(id: 1, started: cartStarted, finished: finished))
    let wishlistRun = wishlist.send(FeatLongRun(id: 1, started: wishlistStarted, finished: finished))
    let started = await withFailsafe(seconds: 60) {
      await cartStarted.wait()
      await wishlistStarted.wait()
      return true
    }
    #expect(started == true)
    try await cart.dispatch(FeatCancelRun(id: 1))
    await #expect(throws: CancellationError.self) { try await cartRun.value }
    #expect(finished.values == ["cart cancelled"])
    // The root store's id 1 is a third namespace.
    store.cancel(id: 1)
    #expect(finished.values == ["cart cancelled"])
    wishlist.cancel(id: 1)
    await #expect(throws: CancellationError.self) { try await wishlistRun.value }
    #expect(finished.values == ["cart cancelled", "wishlist cancelled"])
  }
}

// MARK: - (g) optional children and identified elements

@Suite("Scopes: missing elements and nil children are typed errors", .timeLimit(.failsafeMinutes(3)))
struct ScopeMissingSliceTests {
  @Test func element_followsItsIDWhenTheCollectionChanges() async throws {
    let store = try await makeFeatureStore(FeatAppState(rooms: [FeatRoom(id: 1), FeatRoom(id: 2)]))
    let room2 = store.scope(\.rooms, id: 2, dependencies: \.cart)
    try await store.dispatch(FeatSetRooms(rooms: [FeatRoom(id: 2), FeatRoom(id: 3)]))
    try await room2.dispatch(FeatPost(text: "a"))
    #expect(store.state.rooms == [FeatRoom(id: 2, messages: ["a"]), FeatRoom(id: 3)])
    #expect(room2.state == FeatRoom(id: 2, messages: ["a"]))
  }

  @Test func dispatch_toRemovedElement_throwsMissingElement_andAppliesNothing() async throws {
    let store = try await makeFeatureStore(FeatAppState(rooms: [FeatRoom(id: 1), FeatRoom(id: 2)]))
    let room1 = store.scope(\.rooms, id: 1, dependencies: \.cart)
    let commits = Recorder<Int>()
    store.addListener { _, _ in commits.append(0) }
    try await store.dispatch(FeatRemoveRoom(id: 1))
    let before = store.state
    await #expect(throws: ScopeError.missingElement(room1.id)) { try await room1.dispatch(FeatPost(text: "x")) }
    await #expect(throws: ScopeError.missingElement(room1.id)) { try await room1.send(FeatPost(text: "y")).value }
    #expect(store.state == before)
    #expect(commits.values.count == 1)
    #expect(room1.stateIfPresent == nil)
    #expect(room1.state == FeatRoom())
  }

  @Test func dispatch_toRemovedElement_throughInterceptors_throwsMissingElement() async throws {
    let pass: StoreInterceptor = { _ in { next in { item in try await next(item) } } }
    let store = try await makeFeatureStore(FeatAppState(rooms: [FeatRoom(id: 1)]), interceptors: [pass])
    let room1 = store.scope(\.rooms, id: 1, dependencies: \.cart)
    try await store.dispatch(FeatRemoveRoom(id: 1))
    await #expect(throws: ScopeError.missingElement(room1.id)) { try await room1.dispatch(FeatPost(text: "x")) }
    await #expect(throws: ScopeError.missingElement(room1.id)) { try await room1.send(FeatPost(text: "y")).value }
    #expect(store.state.rooms.isEmpty)
  }

  @Test func dispatch_toNilChild_throwsMissingChild_andAppliesNothing() async throws {
    let store = try await makeFeatureStore()
    let presented = store.scope(\.presented, dependencies: \.cart)
    await #expect(throws: ScopeError.missingChild(presented.id)) {
      try await presented.dispatch(FeatAddToCart(value: 1))
    }
    #expect(store.state == FeatAppState())
    #expect(presented.stateIfPresent == nil)
  }

  @Test func dispatch_toPresentChild_appliesInPlace() async throws {
    let store = try await makeFeatureStore(FeatAppState(presented: FeatCartState()))
    let presented = store.scope(\.presented, dependencies: \.cart)
    try await presented.dispatch(FeatAddToCart(value: 1))
    #expect(store.state.presented == FeatCartState(items: [1]))
    #expect("\(presented.id)" == "FeatAppState.presented?")
  }
}
