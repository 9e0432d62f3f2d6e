import Katana
import KatanaTestSupport
import KatanaTesting
import Testing

// A child mounted on a test store with the parent's output handler, as the app mounts it: the parent's reaction to
// the child's outputs (TCA's `complete` test: a row's action sent through the list's store, the list's sort
// asserted after) is tested through the child's handle, exhaustively.

struct ChoreRow: FeatureState, Identifiable, Equatable {
  let id: Int
  var title: String
  var isDone = false
}

struct ChoresState: State, Equatable {
  var rows: [ChoreRow] = []
  var detail: ChoreRow?
  var featured = ChoreRow(id: 0, title: "featured")
  var sorted = 0
}

enum ChoreOutput: FeatureOutput, Equatable {
  typealias StateType = ChoreRow
  case completed(Int)
}

struct MarkDone: StateUpdater, Equatable {
  func updateState(_ state: inout ChoreRow) { state.isDone = true }
}

/// Marks the row done, then tells its list.
struct Complete: SideEffect {
  func sideEffect(_ context: SideEffectContext<ChoreRow, EmptySideEffectDependencyContainer>) async throws {
    try await context.dispatch(MarkDone())
    guard let row = context.getStateIfPresent() else { return }
    try await context.emit(ChoreOutput.completed(row.id))
  }
}

/// The list's reaction: done rows go last.
struct SortChores: StateUpdater, Equatable {
  func updateState(_ state: inout ChoresState) {
    state.rows = state.rows.filter { !$0.isDone } + state.rows.filter(\.isDone)
    state.sorted += 1
  }
}

/// The handler the list mounts its rows (and its detail) with.
let choresHandler: FeatureOutputHandler<ChoreOutput, ChoresState, EmptySideEffectDependencyContainer> = {
  output, list in
  switch output {
  case .completed: try await list.dispatch(SortChores())
  }
}

@Suite("Scoped test store: the parent's output handler", .timeLimit(.failsafeMinutes(3)))
struct ScopedTestStoreOutputHandlerTests {
  typealias Chores = TestStore<ChoresState, EmptySideEffectDependencyContainer>

  static let three = ChoresState(rows: [
    ChoreRow(id: 1, title: "dishes"), ChoreRow(id: 2, title: "laundry"), ChoreRow(id: 3, title: "plants"),
  ])

  @Test func aRowMountedWithTheListsHandler_theListsReactionIsReceived() async throws {
    let list = Chores(initialState: Self.three)
    let row = list.scope(\.rows, id: 1, dependencies: \.self, outputs: choresHandler)
    try await row.dispatch(Complete())
    await row.receive(MarkDone()) { $0.isDone = true }
    // The handler's dispatch, through the list's context: a received item of the test store.
    await list.receive(SortChores()) {
      $0.rows = [
        ChoreRow(id: 2, title: "laundry"), ChoreRow(id: 3, title: "plants"),
        ChoreRow(id: 1, title: "dishes", isDone: true),
      ]
      $0.sorted = 1
    }
    await list.finish()
  }

  /// Exhaustive: the handler's dispatch not asserted fails the end of the test; the output it handled is not left
  /// for `receiveOutput`.
  @Test func theHandlersDispatch_notAsserted_failsTheEndOfTheTest() async throws {
    await expectOneIssue(containing: ["SortChores"]) {
      let list = Chores(initialState: Self.three)
      let row = list.scope(\.rows, id: 2, dependencies: \.self, outputs: choresHandler)
      try await row.dispatch(Complete())
      await row.receive(MarkDone()) { $0.isDone = true }
      await list.finish()
    }
  }

  @Test func aFieldAndAnOptionalField_mountedWithTheHandler() async throws {
    let list = Chores(initialState: ChoresState(detail: ChoreRow(id: 9, title: "detail")))
    let featured = list.scope(\.featured, dependencies: \.self, outputs: choresHandler)
    try await featured.dispatch(Complete())
    await featured.receive(MarkDone()) { $0.isDone = true }
    await list.receive(SortChores()) { $0.sorted = 1 }
    let detail = list.scope(\.detail, dependencies: \.self, outputs: choresHandler)
    try await detail.dispatch(Complete())
    await detail.receive(MarkDone()) { $0.isDone = true }
    await list.receive(SortChores()) { $0.sorted = 2 }
    await list.finish()
  }

  /// Mounted from a scope of the whole state (a feature that mounts its own children), the handler gets that
  /// feature's context.
  @Test func aRowMountedFromAScope_withThatScopesHandler() async throws {
    let whole = Chores(initialState: Self.three).scope(\.self, dependencies: \.self)
    let row = whole.scope(\.rows, id: 3, dependencies: \.self, outputs: choresHandler)
    try await row.dispatch(Complete())
    await row.receive(MarkDone()) { $0.isDone = true }
    await whole.receive(SortChores()) { $0.sorted = 1 }
    await whole.finish()
  }
}
