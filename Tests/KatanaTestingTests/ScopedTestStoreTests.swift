import KatanaTestSupport
import KatanaTesting
import Testing

// MARK: - One feature test, run alone and scoped

/// Where a cart test runs: alone, on a `TestStore` of `CartState`, or mounted in the shop in each way a feature
/// can be mounted.
enum CartMount: String, CaseIterable, Sendable {
  case alone
  case field
  case optionalChild
  case elementThenField

  /// Runs `body` on a cart mounted this way, with `dependencies`, then ends the test with `finish()`.
  func run(
    dependencies: CartDependencies = CartDependencies(),
    _ body: (any TestStoreProtocol<CartState, CartDependencies>) async throws -> Void
  ) async throws {
    switch self {
    case .alone:
      let store = TestStore(initialState: CartState(), dependencies: dependencies)
      try await body(store)
      await store.finish()
    case .field:
      let app = makeShop(cart: dependencies)
      try await body(app.scope(\.cart, dependencies: \.cart))
      await app.finish()
    case .optionalChild:
      let app = makeShop(ShopState(presentedCart: CartState()), cart: dependencies)
      try await body(app.scope(\.presentedCart, dependencies: \.cart))
      await app.finish()
    case .elementThenField:
      let app = makeShop(ShopState(savedCarts: [SavedCart(id: 1), SavedCart(id: 2)]), cart: dependencies)
      try await body(app.scope(\.savedCarts, id: 2, dependencies: \.saved).scope(\.cart, dependencies: \.cart))
      await app.finish()
    }
  }
}

/// A cart test written once, against the feature's types only: an updater, a side effect that uses the
/// feature's container and effect id and dispatches updaters, a returning side effect.
func checkoutFlow(_ cart: some TestStoreProtocol<CartState, CartDependencies>) async throws {
  try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
  try await cart.send(AddItem(sku: "B2")) { $0.items.append("B2") }.value  // applied before the next item runs
  #expect(try await cart.dispatch(CountItems()) == 2)
  try await cart.dispatch(Checkout())
  await cart.receive(SetCheckingOut(value: true)) { $0.isCheckingOut = true }
  let cleared = await cart.receive(ClearCart.self) {
    $0.items = []
    $0.isCheckingOut = false
  }
  #expect(cleared == ClearCart())
  #expect(cart.state == CartState())
  #expect(cart.dependencies.checkedOut.values == [["A1", "B2"]])
}

@Suite("Scoped test store: one feature test, run alone and scoped", .timeLimit(.failsafeMinutes(3)))
struct ScopedTestStoreReuseTests {
  @Test(arguments: CartMount.allCases)
  func featureTest_passes(mount: CartMount) async throws {
    try await mount.run { cart in try await checkoutFlow(cart) }
  }

  @Test(arguments: CartMount.allCases)
  func wrongExpectation_isReportedWithADiff(mount: CartMount) async throws {
    let issues = IssueLog()
    try await mount.run { cart in
      await withExpectedIssueOutputCaptured {
        try await withKnownIssue(
          "wrong on purpose", { try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["B2"] } },
          matching: issues.matcher())
      }
    }
    let prefix =
      switch mount {
      case .alone: ""
      case .field: "cart."
      case .optionalChild: "presentedCart."
      case .elementThenField: "savedCarts[1].cart."
      }
    #expect(issues.all.count == 1)
    #expect(issues.all.first?.contains(#"\#(prefix)items[0]: expected "B2", actual "A1""#) == true, "\(issues.all)")
  }

  @Test(arguments: CartMount.allCases)
  func featureItemNeverAsserted_isReportedAtFinish(mount: CartMount) async throws {
    await expectOneIssue(containing: ["1 received item was not asserted at the end of the test", "ClearCart()"]) {
      try await mount.run { cart in
        try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
        try await cart.dispatch(Checkout())
        await cart.receive(SetCheckingOut.self) { $0.isCheckingOut = true }
      }
    }
  }
}

// MARK: - Many handles at once

@Suite("Scoped test store: sends through several handles", .timeLimit(.failsafeMinutes(3)))
struct ScopedTestStoreInterleavingTests {
  /// Seeded random sends through the cart, the catalog and the app's own test store, each with its expected
  /// mutation: every change is asserted where it was sent, and the final state is the closed form of the
  /// sends (the test's items reach the store in the order they were sent).
  @Test(arguments: [1, 2, 3, 42] as [UInt64])
  func sends_throughTwoScopesAndTheRoot_areEachAsserted_inSendOrder(seed: UInt64) async throws {
    let app = makeShop()
    let cart = app.scope(\.cart, dependencies: \.cart)
    let catalog = app.scope(\.catalog, dependencies: \.catalog)
    var generator = SeededGenerator(seed: seed)
    var expected = ShopState()
    var tasks: [TestStoreTask<Void>] = []
    for index in 0..<90 {
      let sku = "\(index)"
      switch Int.random(in: 0..<3, using: &generator) {
      case 0:
        tasks.append(cart.send(AddItem(sku: sku)) { $0.items.append(sku) })
        expected.cart.items.append(sku)
      case 1:
        tasks.append(catalog.send(Select(sku: sku)) { $0.selected.append(sku) })
        expected.catalog.selected.append(sku)
      default:
        tasks.append(app.send(RecordOrder(items: [sku])) { $0.orders.append([sku]) })
        expected.orders.append([sku])
      }
    }
    for task in tasks { try await task.value }
    #expect(app.state == expected)
    #expect(cart.state == expected.cart)
    #expect(catalog.state == expected.catalog)
    await app.finish()
  }
}

// MARK: - State assertions through a scope

@Suite("Scoped test store: state changes are checked on the whole app state", .timeLimit(.failsafeMinutes(3)))
struct ScopedTestStoreStateTests {
  @Test func dispatch_throughScope_appliesToTheAppsStore() async throws {
    let app = makeShop(ShopState(catalog: CatalogState(selected: ["X"])))
    let cart = app.scope(\.cart, dependencies: \.cart)
    try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
    #expect(app.state.cart.items == ["A1"])
    #expect(app.state.catalog.selected == ["X"])
    #expect(cart.state.items == ["A1"])
    #expect(cart.stateIfPresent?.items == ["A1"])
    #expect(cart.dependencies === app.dependencies.cart)
    #expect(cart.id == app.store.scope(\.cart, dependencies: \.cart).id)
    await app.finish()
  }

  @Test func wrongMutation_recordsOneIssue_namingTheScope_withAppPaths_atTheCallersLine() async throws {
    let app = makeShop()
    let cart = app.scope(\.cart, dependencies: \.cart)
    let line = #line + 4
    await expectOneIssue(
      containing: [#"State change of AddItem(sku: "A1") through ShopState.cart"#, #"cart.items[0]: expected "B2""#],
      atLine: line
    ) { try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["B2"] } }
    await app.finish()
  }

  /// An app interceptor that stamps every cart change: the feature's updater changes the app state outside its
  /// slice, which the feature's mutation cannot describe.
  @Test func changeOutsideTheSlice_isReported() async throws {
    let app = makeShop(interceptors: [countingCartChanges])
    let cart = app.scope(\.cart, dependencies: \.cart)
    await expectOneIssue(containing: [
      "AddItem(sku: \"A1\") through ShopState.cart", "cartRevision: expected 0, actual 1",
    ]) {
      try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
    }
    try await app.dispatch(AddItem(sku: "B2").countingInTheApp) {
      $0.cart.items = ["A1", "B2"]
      $0.cartRevision = 2
    }
    await app.finish()
  }

  @Test func mutationForAChangeThatDidNotHappen_isReported() async throws {
    let app = makeShop()
    let cart = app.scope(\.cart, dependencies: \.cart)
    await expectOneIssue(containing: ["Expected the state to change", "through ShopState.cart"]) {
      try await cart.dispatch(ClearCart()) { $0.isCheckingOut = true }
    }
    await app.finish()
  }

  @Test func send_throughScope_checksTheChangeOnceApplied() async throws {
    let app = makeShop()
    let cart = app.scope(\.cart, dependencies: \.cart)
    await expectOneIssue(containing: [#"cart.items[0]: expected "B2", actual "A1""#]) {
      try await cart.send(AddItem(sku: "A1")) { $0.items = ["B2"] }.value
    }
    await app.finish()
  }

  @Test func nonExhaustive_checksOnlyWhatTheMutationAssigns_onTheSlice() async throws {
    let app = makeShop(ShopState(cart: CartState(items: ["A1"])), exhaustivity: .off)
    let cart = app.scope(\.cart, dependencies: \.cart)
    try await cart.dispatch(AddItem(sku: "B2")) { $0.isCheckingOut = false }
    await expectOneIssue(containing: ["non-exhaustive", #"cart.items[1]: expected "C3", actual "B2""#]) {
      try await cart.dispatch(SetCheckingOut(value: true)) { $0.items[1] = "C3" }
    }
    await app.finish()
  }

  @Test func exhaustivity_isTheTestStores() async throws {
    let app = makeShop()
    let cart = app.scope(\.cart, dependencies: \.cart)
    cart.exhaustivity = .off
    #expect(app.exhaustivity == .off)
    app.exhaustivity = .on
    #expect(cart.exhaustivity == .on)
    await app.finish()
  }
}

// MARK: - Received items through a scope

@Suite("Scoped test store: received items are matched through the scope", .timeLimit(.failsafeMinutes(3)))
struct ScopedTestStoreReceiveTests {
  @Test func receive_matchesTheFeaturesItem_andReturnsIt() async throws {
    let app = makeShop(ShopState(cart: CartState(items: ["A1"])))
    let cart = app.scope(\.cart, dependencies: \.cart)
    try await cart.dispatch(Checkout())
    let busy = await cart.receive(SetCheckingOut.self, where: { $0.value }, { $0.isCheckingOut = true })
    #expect(busy == SetCheckingOut(value: true))
    let cleared = await cart.receive(
      where: { $0 is ClearCart },
      {
        $0.items = []
        $0.isCheckingOut = false
      })
    #expect(cleared is ClearCart)
    await app.finish()
  }

  @Test func receive_doesNotMatchTheSameItemTypeThroughAnotherScope() async throws {
    let app = makeShop(ShopState(savedCarts: [SavedCart(id: 1, cart: CartState(items: ["A1"]))]))
    let saved = app.scope(\.savedCarts, id: 1, dependencies: \.saved).scope(\.cart, dependencies: \.cart)
    let cart = app.scope(\.cart, dependencies: \.cart)
    try await saved.dispatch(Checkout())
    await expectOneIssue(
      containing: [
        "Expected to receive SetCheckingOut through ShopState.cart",
        "received SetCheckingOut(value: true) through ShopState.savedCarts[id: 1].cart",
      ]
    ) { await cart.receive(SetCheckingOut.self) }
    await saved.receive(ClearCart()) {
      $0.items = []
      $0.isCheckingOut = false
    }
    await app.finish()
  }

  @Test func theRootStore_doesNotMatchAFeaturesItem_andNamesItsScope() async throws {
    let app = makeShop(ShopState(cart: CartState(items: ["A1"])))
    let cart = app.scope(\.cart, dependencies: \.cart)
    try await cart.dispatch(Checkout())
    await expectOneIssue(
      containing: [
        "Expected to receive SetCheckingOut, but received SetCheckingOut(value: true) through ShopState.cart.",
        "received through a handle of the scope they came through",
      ]
    ) {
      await app.receive(SetCheckingOut.self)
    }
    app.skipReceivedItems()
    await app.finish()
  }

  @Test func itemOfAnotherFeature_notAsserted_isReportedBeforeTheNextDispatch() async throws {
    let app = makeShop()
    let cart = app.scope(\.cart, dependencies: \.cart)
    let catalog = app.scope(\.catalog, dependencies: \.catalog)
    // The app wires the cart's hand-back to the catalog: the item is the catalog's, received.
    app.dependencies.cart.onCheckedOut.set { items in
      for sku in items { try await catalog.store.dispatch(Select(sku: sku)) }
    }
    try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
    try await cart.dispatch(Checkout())
    await cart.receive(SetCheckingOut(value: true)) { $0.isCheckingOut = true }
    await cart.receive(ClearCart()) {
      $0.items = []
      $0.isCheckingOut = false
    }
    await expectOneIssue(
      containing: [
        "1 received item was not asserted before dispatching AddItem", #"Select(sku: "A1") through ShopState.catalog"#,
      ]
    ) { try await cart.dispatch(AddItem(sku: "B2")) { $0.items = ["B2"] } }
    await app.finish()
  }

  @Test func itemOfTheApp_notAsserted_isReportedAtFinish_andTheOtherHandleCanAssertIt() async throws {
    for assertsIt in [false, true] {
      let app = makeShop()
      let cart = app.scope(\.cart, dependencies: \.cart)
      let store = app.store
      app.dependencies.cart.onCheckedOut.set { items in try await store.dispatch(RecordOrder(items: items)) }
      try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
      try await cart.dispatch(Checkout())
      await cart.receive(SetCheckingOut(value: true)) { $0.isCheckingOut = true }
      await cart.receive(ClearCart()) {
        $0.items = []
        $0.isCheckingOut = false
      }
      if assertsIt {
        await app.receive(RecordOrder(items: ["A1"])) { $0.orders = [["A1"]] }
        await app.finish()
      } else {
        await expectOneIssue(containing: ["not asserted at the end of the test", #"RecordOrder(items: ["A1"])"#]) {
          await cart.finish()
        }
      }
    }
  }

  @Test func receivedItems_areAssertedInTheStoresOrder_acrossHandles() async throws {
    let app = makeShop(ShopState(cart: CartState(items: ["A1"])))
    let cart = app.scope(\.cart, dependencies: \.cart)
    let catalog = app.scope(\.catalog, dependencies: \.catalog)
    app.dependencies.cart.onCheckedOut.set { items in try await catalog.store.dispatch(Select(sku: items[0])) }
    try await cart.dispatch(Checkout())
    await expectOneIssue(containing: ["out of order", "SetCheckingOut(value: true) through ShopState.cart"]) {
      await cart.receive(ClearCart.self) {
        $0.items = []
        $0.isCheckingOut = false
      }
    }
    await cart.receive(SetCheckingOut(value: true)) { $0.isCheckingOut = true }
    await catalog.receive(Select(sku: "A1")) { $0.selected = ["A1"] }
    await app.finish()
  }

  @Test func receiveError_matchesTheFeaturesSentSideEffect() async throws {
    let app = makeShop()
    let cart = app.scope(\.cart, dependencies: \.cart)
    try await cart.dispatch(SendFailingCheckout())
    await cart.receive(FailingCheckout())
    let error = await cart.receiveError(from: FailingCheckout.self)
    #expect(error as? CartError == CartError())
    await app.finish()
  }

  @Test func dispatchLog_namesTheFeaturesItems() async throws {
    let app = makeShop(ShopState(cart: CartState(items: ["A1"])), recordsDispatches: true)
    let cart = app.scope(\.cart, dependencies: \.cart)
    try await cart.dispatch(Checkout())
    app.skipReceivedItems()
    #expect(app.dispatchLog.map(\.typeName) == ["Checkout", "SetCheckingOut", "ClearCart"])
    #expect(app.dispatchLog.map(\.origin) == [.test, .received, .received])
    #expect((app.dispatchLog.first?.item as? any ScopedDispatchable)?.scope == cart.id)
    await app.finish()
  }
}

// MARK: - Effects and time through a scope

@Suite("Scoped test store: effect ids, the test clock and the end of the test", .timeLimit(.failsafeMinutes(3)))
struct ScopedTestStoreEffectsTests {
  @Test func cancel_throughScope_cancelsOnlyTheFeaturesWork() async throws {
    let clock = TestClock()
    let app = makeShop(clock: clock)
    let cart = app.scope(\.cart, dependencies: \.cart)
    let catalog = app.scope(\.catalog, dependencies: \.catalog)
    let adding = cart.send(AddLater(sku: "A1"))
    let selecting = catalog.send(SelectLater(sku: "X"))
    try await clock.waitForSleepers(count: 2)
    cart.cancel(id: CheckoutID())  // the catalog's LoadID is the same value
    await #expect(throws: CancellationError.self) { try await adding.value }
    await clock.advance(by: .seconds(1))
    await catalog.receive(Select(sku: "X")) { $0.selected = ["X"] }
    try await selecting.value
    await app.finish()
  }

  @Test func receive_beforeTheClockMoves_failsAtOnce_namingTheFeaturesSleeper() async throws {
    let clock = TestClock()
    let app = makeShop(clock: clock)
    let cart = app.scope(\.cart, dependencies: \.cart)
    cart.send(AddLater(sku: "A1"))
    try await clock.waitForSleepers(count: 1)
    await expectOneIssue(
      containing: [
        "Expected to receive AddItem through ShopState.cart",
        #"AddLater(delay: 1.0 seconds, sku: "A1") through ShopState.cart is sleeping on the test clock"#,
      ]
    ) { await cart.receive(AddItem.self) }
    await clock.advance(by: .seconds(1))
    await cart.receive(AddItem(sku: "A1")) { $0.items = ["A1"] }
    await app.finish()
  }

  @Test func finish_throughScope_reportsWorkAsleepOnTheClock() async throws {
    let clock = TestClock()
    let app = makeShop(clock: clock)
    let cart = app.scope(\.cart, dependencies: \.cart)
    cart.send(AddLater(sku: "A1"))
    try await clock.waitForSleepers(count: 1)
    await expectOneIssue(containing: ["finish(): the store still has work in flight", "through ShopState.cart"]) {
      await cart.finish()
    }
  }

  @Test func skipInFlightEffects_throughScope_cancelsTheFeaturesWork() async throws {
    let clock = TestClock()
    let app = makeShop(clock: clock)
    let cart = app.scope(\.cart, dependencies: \.cart)
    cart.send(AddLater(sku: "A1"))
    try await clock.waitForSleepers(count: 1)
    await cart.skipInFlightEffects()
    await cart.waitUntilIdle()
    await app.finish()
  }
}

// MARK: - Optional children and elements

@Suite("Scoped test store: missing elements and nil children", .timeLimit(.failsafeMinutes(3)))
struct ScopedTestStoreMissingSliceTests {
  @Test func dispatch_toANilChild_throwsMissingChild_andAppliesNothing() async throws {
    let app = makeShop(ShopState(presentedCart: CartState()))
    let presented = app.scope(\.presentedCart, dependencies: \.cart)
    try await presented.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
    try await app.dispatch(DismissCart()) { $0.presentedCart = nil }
    #expect(presented.stateIfPresent == nil)
    #expect(presented.state == CartState())
    await #expect(throws: ScopeError.missingChild(presented.id)) {
      try await presented.dispatch(AddItem(sku: "B2")) { $0.items = ["B2"] }
    }
    await #expect(throws: ScopeError.missingChild(presented.id)) {
      try await presented.send(AddItem(sku: "C3")).value
    }
    #expect(app.state == ShopState())
    await app.finish()
  }

  @Test func dispatch_toARemovedElement_throwsMissingElement_andAppliesNothing() async throws {
    let app = makeShop(ShopState(rooms: [RoomState(id: 1), RoomState(id: 2)]))
    let room = app.scope(\.rooms, id: 2, dependencies: \.rooms)
    try await app.dispatch(SetRooms(rooms: [RoomState(id: 2), RoomState(id: 3)])) {
      $0.rooms = [RoomState(id: 2), RoomState(id: 3)]
    }
    try await room.dispatch(Post(text: "moved")) { $0.messages = ["moved"] }
    #expect(app.state.rooms == [RoomState(id: 2, messages: ["moved"]), RoomState(id: 3)])
    try await app.dispatch(SetRooms(rooms: [RoomState(id: 3)])) { $0.rooms = [RoomState(id: 3)] }
    await #expect(throws: ScopeError.missingElement(room.id)) {
      try await room.dispatch(Post(text: "gone"))
    }
    #expect(app.state.rooms == [RoomState(id: 3)])
    await app.finish()
  }

  @Test func receivedItem_whoseElementWasRemoved_failsItsDispatch_andAMutationOfItIsReported() async throws {
    let app = makeShop(ShopState(rooms: [RoomState(id: 2)]))
    let room = app.scope(\.rooms, id: 2, dependencies: \.rooms)
    let gate = Gate()
    let posting = room.send(PostAfter(gate: gate, text: "late"))
    try await app.dispatch(SetRooms(rooms: [])) { $0.rooms = [] }
    gate.open()
    await #expect(throws: ScopeError.missingElement(room.id)) { try await posting.value }
    await expectOneIssue(
      containing: [
        #"The mutation closure for received item Post(text: "late") through ShopState.rooms[id: 2] threw"#,
        "ShopState.rooms[id: 2] is not in its collection any more",
      ]
    ) { await room.receive(Post.self) { $0.messages = ["late"] } }
    await app.finish()
  }
}

// MARK: - Observation through a scope

@Suite("Scoped test store: observing the feature", .timeLimit(.failsafeMinutes(3)))
struct ScopedTestStoreObservationTests {
  @Test func listener_ofAScope_isNotCalledForOtherFeatures() async throws {
    let app = makeShop()
    let cart = app.scope(\.cart, dependencies: \.cart)
    let catalog = app.scope(\.catalog, dependencies: \.catalog)
    let seen = Recorder<[String]>()
    let unsubscribe = cart.addListener { _, new in seen.append(new.items) }
    try await catalog.dispatch(Select(sku: "X")) { $0.selected = ["X"] }
    try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
    unsubscribe()
    #expect(seen.values == [["A1"]])
    await app.finish()
  }

  @Test func values_ofAScope_projectTheSlice() async throws {
    let app = makeShop()
    let cart = app.scope(\.cart, dependencies: \.cart)
    var counts = cart.values(of: \.items.count).makeAsyncIterator()
    #expect(await counts.next() == 0)
    try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
    #expect(await counts.next() == 1)
    var states = cart.states().makeAsyncIterator()
    #expect(await states.next() == CartState(items: ["A1"]))
    await app.finish()
  }
}
