#if canImport(Observation)
  import Katana
  import KatanaTesting
  import Observation
  import Testing

  // The Swift block of the "Testing what a view would track" section of the "Observing from SwiftUI" article
  // (Sources/Katana/Katana.docc/ObservingFromSwiftUI.md), compiled and run: .ci/check-article-snippets keeps
  // it identical to the code between the markers here. The types around it are the article's, in
  // `ObservingArticle`, so that they do not clash with other tests' types.

  @Suite("Observing from SwiftUI: testing what a view would track", .timeLimit(.minutes(3)))
  struct ObservingArticle {
    // ARTICLE-SNIPPET-BEGIN: testing-tracking
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func clearingTheCart_doesNotTouchTheQuery() async throws {
      let store = Store<ShopState, ShopDependencies>(initialState: ShopState(cart: .init(items: [tea]), query: "milk"))
      let model = ObservableStore(store: store)
      try await confirmation("the cart's views update", expectedCount: 1) { cartChanged in
        try await confirmation("the query's views update", expectedCount: 0) { queryChanged in
          withObservationTracking {
            _ = model.cart
          } onChange: {
            cartChanged()
          }
          withObservationTracking {
            _ = model.query
          } onChange: {
            queryChanged()
          }
          try await store.dispatch(ClearCart())
          await model.waitUntilShowsLatestState()  // the model applies commits in a later main-actor turn
        }
      }
      #expect(model.cart.items.isEmpty)
    }
    // ARTICLE-SNIPPET-END: testing-tracking
  }

  extension ObservingArticle {
    struct Item: Identifiable, Equatable, Sendable {
      let id: Int
      var name: String
    }

    var tea: Item { Item(id: 1, name: "tea") }

    struct ShopState: State, Equatable {
      struct Cart: Equatable, Sendable {
        var items: [Item] = []
        var total = 0
      }
      var cart = Cart()
      var query = ""
    }

    typealias ShopDependencies = EmptySideEffectDependencyContainer

    struct ClearCart: StateUpdater {
      func updateState(_ state: inout ShopState) { state.cart = ShopState.Cart() }
    }
  }
#endif
