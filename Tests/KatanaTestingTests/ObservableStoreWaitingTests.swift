#if canImport(Observation)
  import Katana
  import KatanaTestSupport
  import KatanaTesting
  import Testing

  // A test waits for an `ObservableStore` to show a state: the model applies commits on the main actor in a
  // later turn, so a test that reads it right after a dispatch would read the old state (the ported TCA apps
  // wrote polling loops). The waits are on the model's own applications, with a failsafe, never on time.

  struct ShelfState: State, Equatable {
    var books: [String] = []
    var title = "shelf"
  }

  struct AddBook: StateUpdater {
    let name: String
    func updateState(_ state: inout ShelfState) { state.books.append(name) }
  }

  @Suite("ObservableStore: waiting for the model", .timeLimit(.failsafeMinutes(3)))
  @MainActor
  struct ObservableStoreWaitingTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func waitUntilShowsLatestState_afterADispatch_showsTheCommit() async throws {
      let store = Store<ShelfState, EmptySideEffectDependencyContainer>(initialState: ShelfState())
      let model = ObservableStore(store: store)
      for name in ["a", "b", "c"] {
        try await store.dispatch(AddBook(name: name))
      }
      #expect(await model.waitUntilShowsLatestState())
      #expect(model.books == ["a", "b", "c"])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func waitUntilShows_aPredicate_afterSends() async throws {
      let store = Store<ShelfState, EmptySideEffectDependencyContainer>(initialState: ShelfState())
      let model = ObservableStore(store: store)
      model.send(AddBook(name: "a"))
      model.send(AddBook(name: "b"))
      #expect(await model.waitUntilShows { $0.books.count == 2 })
      #expect(model.books == ["a", "b"])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func waitUntilShows_ofAScope() async throws {
      let store = Store<ShelfState, EmptySideEffectDependencyContainer>(initialState: ShelfState())
      let title = ObservableStore(scope: store.scope(\.self, dependencies: \.self))
      try await store.dispatch(AddBook(name: "a"))
      #expect(await title.waitUntilShowsLatestState())
      #expect(title.books == ["a"])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aStateThatNeverComes_recordsOneIssue_whenTheStoreHasShutDown() async throws {
      let store = Store<ShelfState, EmptySideEffectDependencyContainer>(initialState: ShelfState())
      let model = ObservableStore(store: store)
      await store.shutdown()
      await withKnownIssue {
        #expect(await model.waitUntilShows { $0.books.count == 1 } == false)
      } matching: { issue in
        "\(issue)".contains("the store has shut down")
      }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aStateThatNeverComes_recordsOneIssue_whenTheFailsafeExpires() async throws {
      let store = Store<ShelfState, EmptySideEffectDependencyContainer>(initialState: ShelfState())
      let model = ObservableStore(store: store)
      await withKnownIssue {
        #expect(await model.waitUntilShows(failsafe: .milliseconds(100)) { $0.books.count == 1 } == false)
      } matching: { issue in
        "\(issue)".contains("(the failsafe)") && "\(issue)".contains("a state matching the predicate")
      }
    }
  }
#endif
