import Katana
import KatanaTestSupport
import Testing

// Fixtures of ScopeTests.swift: FeatAppState, FeatAppDependencies and the cart feature's items.

/// An app-level side effect that hands work to the cart feature through a scope it mounts from its context.
struct AppAddsToCart: SideEffect {
  let value: Int
  func sideEffect(_ context: SideEffectContext<FeatAppState, FeatAppDependencies>) async throws {
    try await context.scope(\.cart, dependencies: \.cart).dispatch(FeatAddToCart(value: value))
  }
}

/// A side effect of a feature mounted at `\.shop`, which mounts the shop's own cart from its context.
struct ShopAddsToItsCart: SideEffect {
  let value: Int
  func sideEffect(_ context: SideEffectContext<FeatShop, FeatAppDependencies>) async throws {
    try await context.scope(\.cart, dependencies: \.cart).dispatch(FeatAddToCart(value: value))
  }
}

/// An app-level side effect posting to a room, or to the presented cart.
struct AppPostsToRoom: SideEffect {
  let room: Int
  func sideEffect(_ context: SideEffectContext<FeatAppState, FeatAppDependencies>) async throws {
    try await context.scope(\.rooms, id: room, dependencies: \.cart).dispatch(FeatPost(text: "hi"))
  }
}

struct AppAddsToPresented: SideEffect {
  func sideEffect(_ context: SideEffectContext<FeatAppState, FeatAppDependencies>) async throws {
    try await context.scope(\.presented, dependencies: \.cart).dispatch(FeatAddToCart(value: 1))
  }
}

@Suite("Scopes: a side effect mounts scopes from its context", .timeLimit(.failsafeMinutes(3)))
struct ContextScopeTests {
  @Test func rootSideEffect_scopeFromContext_isTheStoresScope() async throws {
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
    try await store.dispatch(AppAddsToCart(value: 4))
    #expect(store.state.cart.items == [4])
    #expect(store.state.shop.cart.items == [])
    #expect(seen.values == ["root AppAddsToCart", "FeatAppState.cart FeatAddToCart"])
    let cart = store.scope(\.cart, dependencies: \.cart)
    #expect(cart.id.description == "FeatAppState.cart")
  }

  @Test func featureSideEffect_scopeFromContext_isNestedInTheFeature() async throws {
    let store = try await makeFeatureStore()
    let shop = store.scope(\.shop, dependencies: \.self)
    try await shop.dispatch(ShopAddsToItsCart(value: 5))
    #expect(store.state.shop.cart.items == [5])
    #expect(store.state.cart.items == [])
  }

  @Test func elementAndOptionalScopes_fromContext_throwWhenMissing() async throws {
    let store = try await makeFeatureStore(FeatAppState(rooms: [FeatRoom(id: 1)]))
    try await store.dispatch(AppPostsToRoom(room: 1))
    #expect(store.state.rooms == [FeatRoom(id: 1, messages: ["hi"])])
    let room2 = store.scope(\.rooms, id: 2, dependencies: \.cart).id
    await #expect(throws: ScopeError.missingElement(room2)) { try await store.dispatch(AppPostsToRoom(room: 2)) }
    let presented = store.scope(\.presented, dependencies: \.cart).id
    await #expect(throws: ScopeError.missingChild(presented)) { try await store.dispatch(AppAddsToPresented()) }
    #expect(store.state.rooms == [FeatRoom(id: 1, messages: ["hi"])])
    #expect(store.state.presented == nil)
  }
}
