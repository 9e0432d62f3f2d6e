import Katana
import KatanaTestSupport
import KatanaTesting
import Testing

// SPEC 4.9: a feature state needs no `init()`. A row whose identity is a `let` is a `FeatureState` as it is:
// its updaters, side effects, scopes and scoped test stores work without a placeholder initializer. (Before
// `FeatureState`, none of this compiled: every state type of an updater or a scope had to be a `State`.)

/// A row of a list: no `init()`, its id a `let`.
struct PlainRow: FeatureState, Identifiable, Equatable {
  let id: Int
  var title: String
  var isDone = false
}

/// A feature mounted at a field, without `init()` either.
struct Banner: FeatureState, Equatable {
  let text: String
  var isDismissed = false
}

struct PlainListState: State, Equatable {
  var rows: [PlainRow] = []
  var banner = Banner(text: "hello")
  var log: [String] = []
}

final class PlainRowDependencies: SideEffectDependencyContainer {
  init() {}
  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {}
}

final class PlainListDependencies: SideEffectDependencyContainer {
  let row = PlainRowDependencies()
  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {}
}

struct TogglePlainRow: StateUpdater, Equatable {
  func updateState(_ state: inout PlainRow) { state.isDone.toggle() }
}

struct RenamePlainRow: StateUpdater, Equatable {
  let title: String
  func updateState(_ state: inout PlainRow) { state.title = title }
}

struct DismissBanner: StateUpdater {
  func updateState(_ state: inout Banner) { state.isDismissed = true }
}

/// Toggles the row, then renames it after what it reads back: a side effect of a state without `init()`.
struct ToggleAndMark: SideEffect {
  func sideEffect(_ context: SideEffectContext<PlainRow, PlainRowDependencies>) async throws {
    try await context.dispatch(TogglePlainRow())
    guard let row = context.getStateIfPresent() else { return }
    try await context.dispatch(RenamePlainRow(title: row.title + (row.isDone ? " (done)" : "")))
  }
}

/// What a row's context answers to `getAnyState()`: the row is not a `State`, so the root's whole state.
struct ReadAnyState: SideEffect {
  let seen: @Sendable (any State) -> Void
  func sideEffect(_ context: SideEffectContext<PlainRow, PlainRowDependencies>) async throws {
    seen(context.getAnyState())
  }
}

@Suite("Feature states without init()", .timeLimit(.failsafeMinutes(3)))
struct FeatureStateWithoutInitTests {
  let rows = [PlainRow(id: 1, title: "milk"), PlainRow(id: 2, title: "eggs")]

  @Test func rowScope_dispatchesUpdatersAndSideEffects_andReadsItsSlice() async throws {
    let store = Store<PlainListState, PlainListDependencies>(initialState: PlainListState(rows: rows))
    let row = store.scope(\.rows, id: 2, dependencies: \.row)

    try await row.dispatch(ToggleAndMark())

    #expect(row.stateIfPresent == PlainRow(id: 2, title: "eggs (done)", isDone: true))
    #expect(store.state.rows[0] == rows[0])
  }

  @Test func rowScope_ofARemovedRow_throwsMissingElement_andReadsNil() async throws {
    let store = Store<PlainListState, PlainListDependencies>(initialState: PlainListState(rows: rows))
    let row = store.scope(\.rows, id: 3, dependencies: \.row)

    #expect(row.stateIfPresent == nil)
    await #expect(throws: ScopeError.self) { try await row.dispatch(TogglePlainRow()) }
    // The side effect runs; its context has no slice to read, and its updater is refused.
    await #expect(throws: ScopeError.self) { try await row.dispatch(ToggleAndMark()) }
    #expect(store.state.rows == rows)
  }

  @Test func rowContext_getAnyState_isTheRootState() async throws {
    let store = Store<PlainListState, PlainListDependencies>(initialState: PlainListState(rows: rows))
    let seen = LockedValue<(any State)?>(nil)
    try await store.scope(\.rows, id: 1, dependencies: \.row).dispatch(
      ReadAnyState { state in seen.withLock { $0 = state } })
    #expect((seen.current as? PlainListState)?.rows == rows)
  }

  @Test func fieldScope_ofAStateWithoutInit() async throws {
    let store = Store<PlainListState, PlainListDependencies>(initialState: PlainListState())
    let banner = store.scope(\.banner, dependencies: \.row)
    try await banner.dispatch(DismissBanner())
    #expect(banner.stateIfPresent?.isDismissed == true)
  }

  @Test func scopedTestStore_assertsARowWithoutInit() async throws {
    let app = TestStore<PlainListState, PlainListDependencies>(initialState: PlainListState(rows: rows))
    let row = app.scope(\.rows, id: 1, dependencies: \.row)

    try await row.dispatch(ToggleAndMark())
    await row.receive(TogglePlainRow()) { $0.isDone = true }
    await row.receive(RenamePlainRow(title: "milk (done)")) { $0.title = "milk (done)" }
    #expect(row.stateIfPresent?.title == "milk (done)")
    await app.finish()
  }
}
