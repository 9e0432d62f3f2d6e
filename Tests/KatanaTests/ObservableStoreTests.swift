#if canImport(Observation)
  import KatanaTestSupport
  import Observation
  import Testing

  @testable import Katana

  // MARK: - Fixtures

  struct ShopState: State, Equatable {
    struct Cart: Equatable, Sendable {
      var items: [String] = []
      var total = 0
    }

    var cart = Cart()
    var title = ""
    var counter = 0
    var log: [Int] = []
  }

  typealias ShopStore = Store<ShopState, EmptySideEffectDependencyContainer>
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  typealias ShopModel = ObservableStore<ShopState, EmptySideEffectDependencyContainer>

  struct AddToCart: StateUpdater {
    let name: String
    let price: Int
    func updateState(_ state: inout ShopState) {
      state.cart.items.append(name)
      state.cart.total += price
    }
  }

  struct SetTotal: StateUpdater {
    let total: Int
    func updateState(_ state: inout ShopState) { state.cart.total = total }
  }

  struct SetTitle: StateUpdater {
    let title: String
    func updateState(_ state: inout ShopState) { state.title = title }
  }

  struct Bump: StateUpdater {
    func updateState(_ state: inout ShopState) { state.counter += 1 }
  }

  struct Record: StateUpdater {
    let token: Int
    func updateState(_ state: inout ShopState) { state.log.append(token) }
  }

  /// Commits without changing anything.
  struct Touch: StateUpdater {
    func updateState(_ state: inout ShopState) {}
  }

  /// Sets the title, then does more work: what a binding whose change must start work sends.
  struct RetitleAndBump: SideEffect {
    let title: String
    func sideEffect(_ context: SideEffectContext<ShopState, EmptySideEffectDependencyContainer>) async throws {
      try await context.dispatch(SetTitle(title: title))
      try await context.dispatch(Bump())
    }
  }

  struct BumpTwice: SideEffect {
    func sideEffect(_ context: SideEffectContext<ShopState, EmptySideEffectDependencyContainer>) async throws {
      try await context.dispatch(Bump())
      try await context.dispatch(Bump())
    }
  }

  struct ReadCounter: ReturningSideEffect {
    func sideEffect(_ context: any AnySideEffectContext) async throws -> Int {
      (context.getAnyState() as? ShopState)?.counter ?? -1
    }
  }

  /// A value that is not `Equatable`.
  struct Blob: Sendable {
    var id = 0
  }

  /// A state that is not `Equatable`, with a field that is and one that is not.
  struct LooseState: State {
    var count = 0
    var blob = Blob()
  }

  struct LooseBump: StateUpdater {
    func updateState(_ state: inout LooseState) { state.count += 1 }
  }

  struct LooseTouch: StateUpdater {
    func updateState(_ state: inout LooseState) {}
  }

  /// An `Equatable` state with a field that is not.
  struct TaggedState: State, Equatable {
    var count = 0
    var blob = Blob()

    static func == (lhs: TaggedState, rhs: TaggedState) -> Bool {
      lhs.count == rhs.count && lhs.blob.id == rhs.blob.id
    }
  }

  struct TaggedBump: StateUpdater {
    func updateState(_ state: inout TaggedState) { state.count += 1 }
  }

  struct TaggedTouch: StateUpdater {
    func updateState(_ state: inout TaggedState) {}
  }

  func makeShopStore(_ initial: ShopState = ShopState()) async throws -> ShopStore {
    let store = ShopStore(initialState: initial)
    try await store.waitUntilReady()
    return store
  }

  /// Counts how often `read`'s observations fire: once at most, since observation tracking is one-shot.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @MainActor
  func track(_ read: @MainActor () -> Void) -> EventCounter {
    let fired = EventCounter()
    withObservationTracking {
      read()
    } onChange: {
      fired.increment()
    }
    return fired
  }

  /// Waits until `condition` holds for `model`, re-checking whenever the model shows a new state; false if it
  /// does not hold within the failsafe.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @MainActor
  func waitUntil<S, D>(
    _ model: ObservableStore<S, D>, _ condition: @escaping @MainActor @Sendable (ObservableStore<S, D>) -> Bool
  ) async -> Bool {
    let reached = await withFailsafe(seconds: 30) { @MainActor in
      while !condition(model) {
        if Task.isCancelled { return false }
        let changed = EventCounter()
        withObservationTracking {
          _ = model.state
        } onChange: {
          changed.increment()
        }
        await changed.wait(for: 1)
      }
      return true
    }
    return reached == true
  }

  /// Counts the states `model` receives (applied, or found unchanged).
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @MainActor
  func countApplied<S, D>(_ model: ObservableStore<S, D>) -> EventCounter {
    let applied = EventCounter()
    model.didApply = { _ in applied.increment() }
    return applied
  }

  /// Waits until `counter` reaches `target`; false if it does not within the failsafe.
  func reaches(_ counter: EventCounter, _ target: Int) async -> Bool {
    await withFailsafe(seconds: 30) { await counter.wait(for: target) } != nil
  }

  /// Waits for `task` to end; false if it does not within the failsafe.
  func ends(_ task: Task<Void, Never>?) async -> Bool {
    guard let task else { return false }
    return await withFailsafe(seconds: 30) { await task.value } != nil
  }

  // MARK: - Field-level tracking

  @Suite("ObservableStore: field-level tracking", .timeLimit(.failsafeMinutes(3)))
  @MainActor
  struct ObservableStoreTrackingTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func changeToAReadField_firesTheTrackerOnce() async throws {
      let store = try await makeShopStore()
      let model = ShopModel(store: store)
      let fired = track { _ = model.counter }
      try await store.dispatch(Bump())
      #expect(await waitUntil(model) { $0.counter == 1 })
      try await store.dispatch(Bump())
      #expect(await waitUntil(model) { $0.counter == 2 })
      #expect(fired.count == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func changeToAnotherField_doesNotFireTheTracker() async throws {
      let store = try await makeShopStore()
      let model = ShopModel(store: store)
      let counter = track { _ = model.counter }
      let cart = track { _ = model.cart }
      try await store.dispatch(SetTitle(title: "shop"))
      try await store.dispatch(Touch())
      #expect(await waitUntil(model) { $0.title == "shop" })
      #expect(counter.count == 0)
      #expect(cart.count == 0)
      try await store.dispatch(AddToCart(name: "milk", price: 2))
      #expect(await waitUntil(model) { $0.cart.items == ["milk"] })
      #expect(counter.count == 0)
      #expect(cart.count == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func subscriptKeyPath_tracksTheNestedFieldOnly() async throws {
      let store = try await makeShopStore()
      let model = ShopModel(store: store)
      let items = track { _ = model[\.cart.items] }
      let total = track { _ = model[\.cart.total] }
      let wholeCart = track { _ = model.cart.items }
      try await store.dispatch(SetTotal(total: 5))
      #expect(await waitUntil(model) { $0[\.cart.total] == 5 })
      #expect(items.count == 0)
      #expect(total.count == 1)
      // `model.cart.items` reads `\.cart` through the model: a change anywhere in the cart notifies it.
      #expect(wholeCart.count == 1)

      let itemsAgain = track { _ = model[\.cart.items] }
      try await store.dispatch(AddToCart(name: "eggs", price: 3))
      #expect(await waitUntil(model) { $0[\.cart.items] == ["eggs"] })
      #expect(items.count == 1)
      #expect(itemsAgain.count == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func wholeState_tracksEveryChange_butNotACommitThatChangesNothing() async throws {
      let store = try await makeShopStore()
      let model = ShopModel(store: store)
      let applied = countApplied(model)
      #expect(await reaches(applied, 1))  // the state at subscription
      let whole = track { _ = model.state }
      try await store.dispatch(Touch())
      #expect(await reaches(applied, 2))
      #expect(whole.count == 0)
      try await store.dispatch(Record(token: 1))
      #expect(await reaches(applied, 3))
      #expect(whole.count == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func notEquatableField_firesOnEveryNewState_equatableFieldOnlyWhenChanged() async throws {
      let store = Store<LooseState, EmptySideEffectDependencyContainer>(initialState: LooseState())
      try await store.waitUntilReady()
      let model = ObservableStore(store: store)
      let applied = countApplied(model)
      #expect(await reaches(applied, 1))
      let blob = track { _ = model.blob }
      let count = track { _ = model.count }
      let whole = track { _ = model.state }
      try await store.dispatch(LooseTouch())
      #expect(await reaches(applied, 2))
      // The state is not Equatable: a commit that changes nothing notifies the non-Equatable field and the
      // whole state, not the Equatable field.
      #expect(blob.count == 1)
      #expect(whole.count == 1)
      #expect(count.count == 0)
      try await store.dispatch(LooseBump())
      #expect(await reaches(applied, 3))
      #expect(count.count == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func notEquatableField_isNotNotifiedWhenTheEquatableWholeStateIsUnchanged() async throws {
      let store = Store<TaggedState, EmptySideEffectDependencyContainer>(initialState: TaggedState())
      try await store.waitUntilReady()
      let model = ObservableStore(store: store)
      let applied = countApplied(model)
      #expect(await reaches(applied, 1))
      let blob = track { _ = model.blob }
      try await store.dispatch(TaggedTouch())
      #expect(await reaches(applied, 2))
      #expect(blob.count == 0)
      try await store.dispatch(TaggedBump())
      #expect(await reaches(applied, 3))
      #expect(blob.count == 1)
    }
  }

  // MARK: - Updates, ordering and lifetime

  @Suite("ObservableStore: updates and lifetime", .timeLimit(.failsafeMinutes(3)))
  @MainActor
  struct ObservableStoreUpdateTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(arguments: [UInt64(1), 2, 3])
    func commitsFromSeveralTasks_reachTheModelOnTheMainActor_inCommitOrder(seed: UInt64) async throws {
      let store = try await makeShopStore()
      let model = ShopModel(store: store)
      let applied = Recorder<[Int]>()
      model.didApply = { state in applied.append(state.log) }
      let tasks = 4
      let perTask = 50 * soakFactor
      // Per task and step: send (fixing the position now) or await dispatch, and whether to yield after.
      var generator = SeededGenerator(seed: seed)
      let plans = (0..<tasks).map { _ in
        (0..<perTask).map { _ in (send: Bool.random(using: &generator), yield: Bool.random(using: &generator)) }
      }
      await withTaskGroup(of: Void.self) { group in
        for (task, plan) in plans.enumerated() {
          group.addTask {
            var handles: [DispatchHandle<Void>] = []
            for (step, choice) in plan.enumerated() {
              let item = Record(token: task * 10_000 + step)
              if choice.send {
                handles.append(store.send(item))
              } else {
                try? await store.dispatch(item)
              }
              if choice.yield { await Task.yield() }
            }
            for handle in handles { try? await handle.value }
          }
        }
        // Meanwhile the main actor sends too, through the model, while the model applies states.
        var handles: [DispatchHandle<Void>] = []
        for step in 0..<perTask {
          handles.append(model.send(Record(token: tasks * 10_000 + step)))
          await Task.yield()
        }
        for handle in handles { try? await handle.value }
        await group.waitForAll()
      }
      let final = store.state.log
      #expect(final.count == (tasks + 1) * perTask)
      for task in 0...tasks {
        #expect(final.filter { $0 / 10_000 == task } == (0..<perTask).map { task * 10_000 + $0 })
      }
      #expect(await waitUntil(model) { $0.log == final })
      // Every state the model applied is a commit's state, in commit order: a prefix of the final log, each
      // longer than the one before.
      let seen = applied.values
      #expect(seen.last == final)
      #expect(seen.allSatisfy { final.starts(with: $0) })
      #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.count < $1.count })
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func releasingTheModel_endsItsSubscription() async throws {
      let store = try await makeShopStore()
      var model: ShopModel? = ShopModel(store: store)
      let applied = countApplied(model!)
      #expect(await reaches(applied, 1))
      #expect(store.core.observerCount == 1)
      let updates = model?.updates
      weak let released = model
      model = nil
      #expect(released == nil)
      #expect(await ends(updates))
      #expect(store.core.observerCount == 0)
      try await store.dispatch(Bump())
      #expect(applied.count == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func releasingTheModel_releasesTheStore() async throws {
      var store: ShopStore? = try await makeShopStore()
      weak let releasedStore = store
      var model: ShopModel? = ShopModel(store: store!)
      store = nil
      let applied = countApplied(model!)
      #expect(await reaches(applied, 1))
      #expect(releasedStore != nil)
      let updates = model?.updates
      model = nil
      #expect(await ends(updates))
      #expect(releasedStore == nil)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func storeShutdown_endsTheUpdates_andTheModelKeepsItsLastState() async throws {
      let store = try await makeShopStore()
      let model = ShopModel(store: store)
      try await store.dispatch(Bump())
      #expect(await waitUntil(model) { $0.counter == 1 })
      let counter = track { _ = model.counter }
      await store.shutdown()
      #expect(await ends(model.updates))
      #expect(store.core.observerCount == 0)
      await #expect(throws: StoreError.storeShutDown) { try await model.send(Bump()).value }
      #expect(model.counter == 1)
      #expect(counter.count == 0)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func modelCreatedBeforeTheStoreIsReady_showsTheLoadedState() async throws {
      let gate = Gate()
      let store = ShopStore(stateInitializer: {
        await gate.wait()
        return ShopState(title: "loaded")
      })
      let model = ShopModel(store: store)
      #expect(model.title == "")
      let title = track { _ = model.title }
      gate.open()
      #expect(await waitUntil(model) { $0.title == "loaded" })
      #expect(title.count == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func failedStartup_endsTheUpdates_withTheEmptyState() async throws {
      let store = ShopStore(stateInitializer: { throw TestError(code: 1) })
      let model = ShopModel(store: store)
      #expect(await ends(model.updates))
      #expect(model.state == ShopState())
    }
  }

  // MARK: - Sending and bindings

  @Suite("ObservableStore: sending and bindings", .timeLimit(.failsafeMinutes(3)))
  @MainActor
  struct ObservableStoreSendingTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func send_forwardsEveryKindToTheStore_withoutAwait() async throws {
      let store = try await makeShopStore()
      let model = ShopModel(store: store)
      model.send(Bump())
      try await model.send(BumpTwice()).value
      #expect(try await model.send(ReadCounter()).value == 3)
      #expect(await waitUntil(model) { $0.counter == 3 })
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func fieldBinding_readsThroughTheModel_andSendsTheUpdater() async throws {
      let store = try await makeShopStore(ShopState(title: "a"))
      let model = ShopModel(store: store)
      let title = model.fieldBinding(\.title) { SetTitle(title: $0) }
      #expect(title.get() == "a")
      let tracked = track { _ = title.get() }
      let counter = track { _ = model.counter }
      title.set("b")
      #expect(store.state.title == "b")
      #expect(await waitUntil(model) { $0.title == "b" })
      #expect(title.get() == "b")
      #expect(tracked.count == 1)
      #expect(counter.count == 0)
    }

    /// A binding can start work: its setter sends a side effect (before, `fieldBinding` took only updaters).
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func fieldBinding_withASideEffect_sendsIt() async throws {
      let store = try await makeShopStore(ShopState(title: "a"))
      let model = ShopModel(store: store)
      let title = model.fieldBinding(\.title) { RetitleAndBump(title: $0) }
      title.set("b")
      #expect(await waitUntil(model) { $0.title == "b" && $0.counter == 1 })
      #expect(title.get() == "b")
      #expect(store.state.counter == 1)
    }
  }

  // MARK: - A model of a feature's scope

  struct ShopAppState: State, Equatable {
    var shop = ShopState()
    var other = ShopState()
    var sheet: ShopState?
  }

  struct PresentSheet: StateUpdater {
    func updateState(_ state: inout ShopAppState) { state.sheet = ShopState(counter: 9) }
  }

  struct BumpOther: StateUpdater {
    func updateState(_ state: inout ShopAppState) { state.other.counter += 1 }
  }

  /// A row with `let id` and no `init()`: a ``FeatureState`` that is not a ``State``.
  struct ListRow: FeatureState, Identifiable, Equatable {
    let id: Int
    var title: String
    var taps = 0
  }

  struct ListState: State, Equatable {
    var rows: [ListRow] = []
    var sheet: ListRow?

    static let twoRows = ListState(rows: [ListRow(id: 1, title: "one"), ListRow(id: 2, title: "two")])
  }

  struct TapRow: StateUpdater {
    func updateState(_ state: inout ListRow) { state.taps += 1 }
  }

  struct RetitleRow: StateUpdater {
    let title: String
    func updateState(_ state: inout ListRow) { state.title = title }
  }

  struct RemoveRow: StateUpdater {
    let id: Int
    func updateState(_ state: inout ListState) { state.rows.removeAll { $0.id == id } }
  }

  typealias ListStore = Store<ListState, EmptySideEffectDependencyContainer>

  @Suite(
    "ObservableStore of a scope: tracks the feature's fields, sends through the scope", .timeLimit(.failsafeMinutes(3)))
  @MainActor
  struct ObservableStoreScopeTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func scopeModel_firesForTheFeaturesField_notForOtherFeatures() async throws {
      let store = Store<ShopAppState, EmptySideEffectDependencyContainer>(initialState: ShopAppState())
      try await store.waitUntilReady()
      let model = ObservableStore(scope: store.scope(\.shop, dependencies: \.self))
      let applied = countApplied(model)
      #expect(await reaches(applied, 1))  // the slice at subscription
      let counter = track { _ = model.counter }
      let title = track { _ = model.title }
      // Another feature's commit leaves the slice equal: the model gets nothing.
      try await store.dispatch(BumpOther())
      // Sent through the scope, without await, as a view does.
      model.send(Bump())
      #expect(await waitUntil(model) { $0.counter == 1 })
      #expect(store.state.shop.counter == 1)
      #expect(counter.count == 1)
      #expect(title.count == 0)
      #expect(applied.count == 2)
    }

    /// A model of an optional child made before the child exists (a sheet's model created eagerly) shows the
    /// child as soon as it appears (issue 21, bug 3: it showed `init()` until the child's next change).
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func scopeModel_ofAnOptionalChildThatAppearsLater_showsIt() async throws {
      let store = Store<ShopAppState, EmptySideEffectDependencyContainer>(initialState: ShopAppState())
      let model = ObservableStore(scope: store.scope(\.sheet, dependencies: \.self))
      #expect(model.counter == 0)
      try await store.dispatch(PresentSheet())
      #expect(await waitUntil(model) { $0.counter == 9 })
    }

    /// A row whose state has no `init()` gets a model (issue 33): it shows the row, sends through the row's scope, and
    /// its field bindings read and set the row's fields.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func scopeModel_ofAFeatureStateWithoutInit_showsAndSendsThroughItsScope() async throws {
      let store = ListStore(initialState: .twoRows)
      try await store.waitUntilReady()
      let model = try #require(ObservableStore(scope: store.scope(\.rows, id: 2, dependencies: \.self)))
      #expect(model.title == "two")
      let taps = track { _ = model.taps }
      model.send(TapRow())
      #expect(await waitUntil(model) { $0.taps == 1 })
      #expect(taps.count == 1)
      let title = model.fieldBinding(\.title) { RetitleRow(title: $0) }
      title.set("deux")
      #expect(await waitUntil(model) { $0.title == "deux" })
      #expect(title.get() == "deux")
      #expect(store.state.rows.map(\.title) == ["one", "deux"])
    }

    /// Missing when the model would be made (a removed row, a nil child, a store not ready yet), a slice without
    /// `init()` gives no model: there is nothing to show.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func scopeModel_ofAFeatureStateWithoutInit_isNilWhileItsSliceIsMissing() async throws {
      let gate = Gate()
      let starting = ListStore(stateInitializer: {
        await gate.wait()
        return .twoRows
      })
      // Before start-up the store's state is a placeholder, `ListState()`, without the rows.
      #expect(ObservableStore(scope: starting.scope(\.rows, id: 1, dependencies: \.self)) == nil)
      gate.open()
      try await starting.waitUntilReady()
      #expect(ObservableStore(scope: starting.scope(\.rows, id: 1, dependencies: \.self)) != nil)
      #expect(ObservableStore(scope: starting.scope(\.rows, id: 9, dependencies: \.self)) == nil)
      #expect(ObservableStore(scope: starting.scope(\.sheet, dependencies: \.self)) == nil)
    }

    /// A row's model whose row is removed keeps showing the row as it was last seen, as a model of a `State` slice
    /// does; what it sends then fails with the scope's error.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func scopeModel_ofAFeatureStateWithoutInit_keepsTheRowItLastSaw_whenItIsRemoved() async throws {
      let store = ListStore(initialState: .twoRows)
      try await store.waitUntilReady()
      let model = try #require(ObservableStore(scope: store.scope(\.rows, id: 1, dependencies: \.self)))
      model.send(RetitleRow(title: "uno"))
      #expect(await waitUntil(model) { $0.title == "uno" })
      try await store.dispatch(RemoveRow(id: 1))
      try await store.dispatch(RemoveRow(id: 2))
      #expect(model.state == ListRow(id: 1, title: "uno"))
      #expect(model.isFollowing)
      await #expect(throws: ScopeError.self) { try await model.send(TapRow()).value }
    }

    /// A feature state that is a `State` keeps the plain initialiser, which shows `S()` while the slice is missing.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func scopeModel_ofAState_keepsThePlainInitialiser() async throws {
      let store = Store<ShopAppState, EmptySideEffectDependencyContainer>(initialState: ShopAppState())
      // Not optional: the initialiser for a `State` is chosen.
      let model: ObservableStore<ShopState, EmptySideEffectDependencyContainer> = ObservableStore(
        scope: store.scope(\.sheet, dependencies: \.self))
      #expect(model.state == ShopState())
    }

    /// A model made right after a store built from a value shows that value at once (bug 11).
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func model_ofAStoreBuiltFromAValue_showsItAtOnce() async throws {
      let store = Store<ShopAppState, EmptySideEffectDependencyContainer>(
        initialState: ShopAppState(shop: ShopState(counter: 4)))
      let model = ObservableStore(store: store)
      #expect(model.state.shop.counter == 4)
    }
  }
#endif
