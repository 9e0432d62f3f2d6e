import Katana
import KatanaTestSupport
import Testing

// SPEC 4.9: a feature tells the code that mounted it what happened through typed outputs. The semantics
// tested here: the handler given to `scope` gets the output with the mounting code's context; `emit` waits for
// it in the emitting task (cancellation reaches it, its error comes back unchanged); commits before `emit` are
// visible to the handler and the handler's are visible when `emit` returns; no handler, or a handler of
// another output type, ignores the output.

private struct OutCart: State, Equatable {
  var items: [String] = []
  var notice: String?
}

private struct OutShop: State, Equatable {
  var cart = OutCart()
  var rows: [OutRow] = [OutRow(id: 1), OutRow(id: 2)]
  var ordered: [String] = []
}

private struct OutRow: FeatureState, Identifiable, Equatable {
  let id: Int
  var taps = 0
}

private enum OutCartOutput: FeatureOutput, Equatable {
  typealias StateType = OutCart
  case checkedOut([String])
  case failing(String)
  case waitsForever
}

private enum OutOtherCartOutput: FeatureOutput {
  typealias StateType = OutCart
  case somethingElse
}

private enum OutRowOutput: FeatureOutput, Equatable {
  typealias StateType = OutRow
  case tapped(Int)
}

private struct OutHandlerFailure: Error, Equatable {}

private final class OutShopDependencies: SideEffectDependencyContainer {
  let cart = OutCartDependencies()
  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {}
}

private final class OutCartDependencies: SideEffectDependencyContainer {
  init() {}
  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {}
}

private struct OutAddToCart: StateUpdater {
  let item: String
  func updateState(_ state: inout OutCart) { state.items.append(item) }
}

private struct OutSetNotice: StateUpdater {
  let notice: String
  func updateState(_ state: inout OutCart) { state.notice = notice }
}

private struct OutRecordOrder: StateUpdater {
  let items: [String]
  func updateState(_ state: inout OutShop) { state.ordered += items }
}

private struct OutTap: StateUpdater {
  func updateState(_ state: inout OutRow) { state.taps += 1 }
}

/// Adds an item, tells the parent, then shows a notice: the parent's reaction lands between the two commits.
private struct OutCheckout: SideEffect {
  var output = OutCartOutput.checkedOut(["tea"])
  func sideEffect(_ context: SideEffectContext<OutCart, OutCartDependencies>) async throws {
    try await context.dispatch(OutAddToCart(item: "tea"))
    try await context.emit(output)
    try await context.dispatch(OutSetNotice(notice: "done"))
  }
}

private struct OutEmitOther: SideEffect {
  func sideEffect(_ context: SideEffectContext<OutCart, OutCartDependencies>) async throws {
    try await context.emit(OutOtherCartOutput.somethingElse)
  }
}

private struct OutTapRow: SideEffect {
  func sideEffect(_ context: SideEffectContext<OutRow, OutCartDependencies>) async throws {
    try await context.dispatch(OutTap())
    try await context.emit(OutRowOutput.tapped(context.getStateIfPresent()?.taps ?? 0))
  }
}

@Suite("Feature outputs", .timeLimit(.failsafeMinutes(3)))
struct FeatureOutputTests {
  @Test func emit_reachesTheHandlerWhereTheFeatureWasMounted_withTheAppsContext() async throws {
    let store = Store<OutShop, OutShopDependencies>(initialState: OutShop())
    let seenByHandler = LockedValue<[OutCart]>([])
    let cart = store.scope(\.cart, dependencies: \.cart) { (output: OutCartOutput, app) in
      seenByHandler.withLock { $0.append(app.getState().cart) }
      guard case .checkedOut(let items) = output else { return }
      try await app.dispatch(OutRecordOrder(items: items))
    }
    let commits = Recorder<String>()
    store.addListener { old, new in
      if old.cart.items != new.cart.items { commits.append("cart") }
      if old.ordered != new.ordered { commits.append("app") }
      if old.cart.notice != new.cart.notice { commits.append("notice") }
    }

    try await cart.dispatch(OutCheckout())

    // The handler saw the commit made before `emit`; its own commit landed before the one after `emit`.
    #expect(seenByHandler.current.map(\.items) == [["tea"]])
    #expect(commits.values == ["cart", "app", "notice"])
    #expect(store.state.ordered == ["tea"])
  }

  @Test func emit_rethrowsTheHandlersError_unchanged() async throws {
    let store = Store<OutShop, OutShopDependencies>(initialState: OutShop())
    let cart = store.scope(\.cart, dependencies: \.cart) { (_: OutCartOutput, _) in throw OutHandlerFailure() }

    await #expect(throws: OutHandlerFailure.self) { try await cart.dispatch(OutCheckout()) }
    // What the side effect did before `emit` stays; what it would have done after does not happen.
    #expect(store.state.cart == OutCart(items: ["tea"], notice: nil))
  }

  @Test func emit_runsTheHandlerInTheEmittingTask_soCancellingItCancelsTheHandler() async throws {
    let store = Store<OutShop, OutShopDependencies>(initialState: OutShop())
    let started = Gate()
    let cart = store.scope(\.cart, dependencies: \.cart) { (_: OutCartOutput, _) in
      started.open()
      await Gate().wait()  // returns only when cancelled
      try Task.checkCancellation()
    }
    let task = Task { try await cart.dispatch(OutCheckout(output: .waitsForever)) }
    await started.wait()
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(store.state.cart.notice == nil)
  }

  @Test func emit_withoutAHandler_returnsAtOnce() async throws {
    let store = Store<OutShop, OutShopDependencies>(initialState: OutShop())
    // Mounted without outputs: the app ignores them.
    try await store.scope(\.cart, dependencies: \.cart).dispatch(OutCheckout())
    #expect(store.state.cart == OutCart(items: ["tea"], notice: "done"))

    // The feature on a store of its own: nobody above it.
    let alone = Store<OutCart, OutCartDependencies>(initialState: OutCart())
    try await alone.dispatch(OutCheckout())
    #expect(alone.state == OutCart(items: ["tea"], notice: "done"))
  }

  @Test func emit_ofAnOutputTypeTheHandlerDoesNotTake_isIgnored() async throws {
    let store = Store<OutShop, OutShopDependencies>(initialState: OutShop())
    let handled = EventCounter()
    let cart = store.scope(\.cart, dependencies: \.cart) { (_: OutCartOutput, _) in handled.increment() }
    try await cart.dispatch(OutEmitOther())
    #expect(handled.count == 0)
  }

  @Test func sentSideEffects_andNestedDispatches_reachTheHandlerToo() async throws {
    let store = Store<OutShop, OutShopDependencies>(initialState: OutShop())
    let outputs = Recorder<OutCartOutput>()
    let cart = store.scope(\.cart, dependencies: \.cart) { (output: OutCartOutput, _) in outputs.append(output) }
    try await cart.send(OutCheckout()).value
    try await cart.dispatch(OutNested())
    #expect(outputs.values == [.checkedOut(["tea"]), .checkedOut(["tea"])])
  }

  @Test func rows_emitWithTheirOwnOutputs_andTheParentKnowsWhichRow() async throws {
    let store = Store<OutShop, OutShopDependencies>(initialState: OutShop())
    let outputs = Recorder<String>()
    for id in [1, 2] {
      let row = store.scope(\.rows, id: id, dependencies: \.cart) { (output: OutRowOutput, app) in
        guard case .tapped(let taps) = output else { return }
        outputs.append("row \(id): \(taps), rows \(app.getState().rows.map(\.taps))")
      }
      try await row.dispatch(OutTapRow())
    }
    #expect(outputs.values == ["row 1: 1, rows [1, 0]", "row 2: 1, rows [1, 1]"])
  }

  @Test func aHandlerMountedFromASideEffect_getsThatSideEffectsContext() async throws {
    let store = Store<OutShop, OutShopDependencies>(initialState: OutShop())
    try await store.dispatch(OutMountAndCheckout())
    #expect(store.state.ordered == ["tea"])
  }
}

/// A side effect of the cart that dispatches another one: the nested one's context keeps the handler.
private struct OutNested: SideEffect {
  func sideEffect(_ context: SideEffectContext<OutCart, OutCartDependencies>) async throws {
    try await context.dispatch(OutCheckout())
  }
}

/// The app mounts the cart from its own side effect, handling its outputs with its own context.
private struct OutMountAndCheckout: SideEffect {
  func sideEffect(_ context: SideEffectContext<OutShop, OutShopDependencies>) async throws {
    let cart = context.scope(\.cart, dependencies: \.cart) { (output: OutCartOutput, app) in
      guard case .checkedOut(let items) = output else { return }
      try await app.dispatch(OutRecordOrder(items: items))
    }
    try await cart.dispatch(OutCheckout())
  }
}

@Suite("Feature outputs: cost")
struct FeatureOutputCostTests {
  /// A context passed as `any AnySideEffectContext` (to every returning side effect) must fit an existential's
  /// inline buffer of three words, or each dispatch would box it on the heap. The output route is one
  /// reference for that reason.
  @Test func aSideEffectContext_fitsAnExistentialsInlineBuffer() {
    #expect(MemoryLayout<SideEffectContext<OutShop, OutShopDependencies>>.size <= 3 * MemoryLayout<Int>.size)
  }
}
