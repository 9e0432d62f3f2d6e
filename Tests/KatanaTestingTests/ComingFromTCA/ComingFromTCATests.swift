import Katana
import KatanaTesting
import Testing

#if canImport(Observation)
  import Observation
#endif

// The Swift blocks of the "Coming from The Composable Architecture" article
// (Sources/Katana/Katana.docc/ComingFromTCA.md), compiled and run: .ci/check-article-snippets keeps them
// identical to the code between the markers here, and compiles the tests that hold them nonisolated and
// `@MainActor`. The types are the article's, in `ComingFromTCA`, so that they do not clash with other tests'.

@Suite("Coming from TCA: the article's code", .timeLimit(.minutes(3)))
struct ComingFromTCA {
  // ARTICLE-SNIPPET-BEGIN: test-store
  @Test func typing_searchesOnceTypingPauses() async throws {
    let clock = TestClock()
    var configuration = TestStoreConfiguration()
    configuration.clock = clock
    let store = TestStore(
      initialState: SearchState(),
      dependencies: SearchDependencies(search: { query in ["\(query)ville"] }),
      configuration: configuration)

    store.send(QueryChanged(query: "S")) { $0.query = "S" }  // TCA: await store.send(.queryChanged("S"))
    store.send(Search())
    await clock.advance(by: .milliseconds(200))
    store.send(QueryChanged(query: "Sa")) { $0.query = "Sa" }
    store.send(Search())
    await clock.advance(by: .milliseconds(300))
    await store.receive(ResultsLoaded(results: ["Saville"])) { $0.results = ["Saville"] }
    await store.finish()
  }
  // ARTICLE-SNIPPET-END: test-store

  // ARTICLE-SNIPPET-BEGIN: returning-updater-test
  @Test func decrementingBelowZero_resetsToZero() async throws {
    let store = TestStore(initialState: CounterState(count: 1), dependencies: EmptySideEffectDependencyContainer())
    let wentNegative = try await store.dispatch(Decrement()) { $0.count = 0 }
    #expect(wentNegative == false)
    try await store.dispatch(DecrementButtonTapped())
    await store.receive(Decrement.self) { $0.count = -1 }
    await store.receive(ResetToZero()) { $0.count = 0 }
  }
  // ARTICLE-SNIPPET-END: returning-updater-test

  // ARTICLE-SNIPPET-BEGIN: bare-test-clock
  @Test func aTimerOutsideAStore_ticksAsTheClockMoves() async throws {
    let clock = TestClock()
    let ticks = Task {
      var count = 0
      for await _ in clock.timer(interval: .seconds(1)).prefix(5) { count += 1 }
      return count
    }
    await clock.advance(by: .seconds(2))  // lets the task reach its sleep, then ticks twice
    await #expect(throws: TestClockError.self) { try await clock.checkSuspension() }  // it sleeps again
    await clock.advance(by: .seconds(3))  // the three ticks left
    #expect(await ticks.value == 5)
    #expect(clock.now == .zero.advanced(by: .seconds(5)))
    try await clock.checkSuspension()  // nothing sleeps any more
  }
  // ARTICLE-SNIPPET-END: bare-test-clock

  // ARTICLE-SNIPPET-BEGIN: unimplemented
  @Test func clearingTheQuery_searchesNothing() async throws {
    let store = TestStore(
      initialState: SearchState(query: "S"),
      dependencies: SearchDependencies(search: unimplemented("SearchDependencies.search")))

    try await store.dispatch(QueryChanged(query: "")) { $0.query = "" }
    await store.finish()
  }
  // ARTICLE-SNIPPET-END: unimplemented

  // ARTICLE-SNIPPET-BEGIN: non-exhaustive
  @Test func searchFor_showsResults_nonExhaustive() async throws {
    let store = TestStore(initialState: SearchState(), dependencies: SearchDependencies(search: { _ in ["tea"] }))
    store.exhaustivity = .off  // TCA: store.exhaustivity = .off

    try await store.dispatch(SearchFor(query: "tea"))
    await store.receive(ResultsLoaded.self)  // skips QueryChanged, received before it
    #expect(store.state.results == ["tea"])
    await store.finish()
  }
  // ARTICLE-SNIPPET-END: non-exhaustive

  // ARTICLE-SNIPPET-BEGIN: rows-test
  @Test func completingARow_togglesIt_andTellsTheList() async throws {
    let store = TestStore(initialState: TodosState(todos: [milk, eggs]), dependencies: TodosDependencies())
    let row = store.scope(\.todos, id: eggs.id, dependencies: \.row)

    try await row.dispatch(Complete())
    await row.receive(ToggleDone()) { $0.isDone = true }
    // TCA: await store.receive(\.todos[id: 2].delegate.completed)
    await row.receiveOutput(TodoOutput.completed(title: "eggs"))
    try await store.dispatch(DeleteTodo(id: eggs.id)) { $0.todos.remove(id: eggs.id) }
    await store.finish()
  }
  // ARTICLE-SNIPPET-END: rows-test

  @Test func theAppHandlesTheRowsOutput() async throws {
    let store = Store<TodosState, TodosDependencies>(initialState: TodosState(todos: [milk, eggs]))
    // ARTICLE-SNIPPET-BEGIN: outputs-app
    let row = store.scope(\.todos, id: 2, dependencies: \.row) { (output: TodoOutput, app) in
      switch output {
      case .completed: try await app.dispatch(CountCompletion())
      }
    }
    // ARTICLE-SNIPPET-END: outputs-app
    try await row.dispatch(Complete())
    #expect(store.state.completedCount == 1)
    #expect(store.state.todos[id: 2]?.isDone == true)
  }

  #if canImport(Observation)
    // ARTICLE-SNIPPET-BEGIN: binding
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func aBinding_sendsAnUpdater_orStartsASideEffect() async throws {
      let store = Store(initialState: SearchState(), dependencies: SearchDependencies(search: { _ in ["tea"] }))
      let model = ObservableStore(store: store)
      let query = model.fieldBinding(\.query) { QueryChanged(query: $0) }  // TCA: $store.query, BindableAction
      let searchingQuery = model.fieldBinding(\.query) { SearchFor(query: $0) }  // the setter starts work

      query.set("te")
      searchingQuery.set("tea")
      await model.waitUntilShows { $0.results == ["tea"] }
      #expect(query.get() == "tea")
      // In SwiftUI: TextField("Search", text: model.binding(\.query) { QueryChanged(query: $0) })
    }
  // ARTICLE-SNIPPET-END: binding
  #endif

  var milk: Todo { Todo(id: 1, title: "milk") }
  var eggs: Todo { Todo(id: 2, title: "eggs") }
}

extension ComingFromTCA {
  // ARTICLE-SNIPPET-BEGIN: state-and-updaters
  struct SearchState: State, Equatable {
    var query = ""
    var results: [String] = []
  }

  // TCA: case .queryChanged(let query): state.query = query; return .none
  struct QueryChanged: StateUpdater, Equatable {
    let query: String
    func updateState(_ state: inout SearchState) { state.query = query }
  }

  // TCA: case .resultsLoaded(let results): state.results = results; return .none
  struct ResultsLoaded: StateUpdater, Equatable {
    let results: [String]
    func updateState(_ state: inout SearchState) { state.results = results }
  }
  // ARTICLE-SNIPPET-END: state-and-updaters

  // ARTICLE-SNIPPET-BEGIN: returning-updater
  struct CounterState: State, Equatable {
    var count = 0
  }

  // TCA: case .decrementButtonTapped: state.count -= 1; return state.count >= 0 ? .none : .run { ... }
  struct Decrement: ReturningStateUpdater, Equatable {
    func updateState(_ state: inout CounterState) -> Bool {
      state.count -= 1
      return state.count < 0  // decided on the state this commit produced
    }
  }

  struct ResetToZero: StateUpdater, Equatable {
    func updateState(_ state: inout CounterState) { state.count = 0 }
  }

  struct DecrementButtonTapped: SideEffect {
    func sideEffect(_ context: SideEffectContext<CounterState, EmptySideEffectDependencyContainer>) async throws {
      let wentNegative = try await context.dispatch(Decrement())
      guard wentNegative else { return }  // TCA: .none
      try await context.dispatch(ResetToZero())  // TCA: .run { send in await send(.resetToZero) }
    }
  }
  // ARTICLE-SNIPPET-END: returning-updater

  // ARTICLE-SNIPPET-BEGIN: dependencies
  final class SearchDependencies: SideEffectDependencyContainer {
    let search: @Sendable (String) async throws -> [String]  // TCA: @Dependency(\.searchClient)

    init(search: @escaping @Sendable (String) async throws -> [String]) {
      self.search = search
    }

    // What a store builds when it is given no container: the live client (TCA's liveValue).
    convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
      self.init(search: { query in [query] })  // a network call in a real app
    }
  }
  // ARTICLE-SNIPPET-END: dependencies

  // ARTICLE-SNIPPET-BEGIN: side-effect
  // TCA: case .search: return .run { [query = state.query] send in ... }
  //        .debounce(id: CancelID.search, for: .milliseconds(300), scheduler: mainQueue)
  struct Search: SideEffect, Equatable {
    enum CancelID { case search }

    func sideEffect(_ context: SideEffectContext<SearchState, SearchDependencies>) async throws {
      try await context.debounce(id: CancelID.search, for: .milliseconds(300)) {
        let results = try await context.dependencies.search(context.getState().query)
        try await context.dispatch(ResultsLoaded(results: results))  // TCA: await send(.resultsLoaded(results))
      }
    }
  }

  // An action that both mutates and starts work: an updater, then the work, in one side effect.
  struct SearchFor: SideEffect {
    let query: String

    func sideEffect(_ context: SideEffectContext<SearchState, SearchDependencies>) async throws {
      try await context.dispatch(QueryChanged(query: query))
      // TCA: .cancellable(id: CancelID.search, cancelInFlight: true)
      try await context.run(id: Search.CancelID.search, cancelInFlight: true) {
        let results = try await context.dependencies.search(query)
        try await context.dispatch(ResultsLoaded(results: results))
      }
    }
  }
  // ARTICLE-SNIPPET-END: side-effect

  // ARTICLE-SNIPPET-BEGIN: rows
  // TCA: @ObservableState struct Todo: Identifiable, and IdentifiedArrayOf<Todo.State> in the parent.
  struct Todo: FeatureState, Identifiable, Equatable {  // a feature state: no init() needed
    let id: Int
    var title: String
    var isDone = false
  }

  struct TodosState: State, Equatable {
    var todos: [Todo] = []  // a plain array: todos[id: 2], todos.remove(id: 2), todos.index(id: 2)
    var completedCount = 0
  }

  struct ToggleDone: StateUpdater, Equatable {
    func updateState(_ state: inout Todo) { state.isDone.toggle() }
  }

  struct DeleteTodo: StateUpdater {
    let id: Int
    func updateState(_ state: inout TodosState) { state.todos.remove(id: id) }
  }

  final class RowDependencies: SideEffectDependencyContainer {
    init() {}
    convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) { self.init() }
  }

  final class TodosDependencies: SideEffectDependencyContainer {
    let row = RowDependencies()  // TCA: .forEach(\.todos, action: \.todos) { Todo() }
    init() {}
    convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) { self.init() }
  }
  // ARTICLE-SNIPPET-END: rows

  // ARTICLE-SNIPPET-BEGIN: outputs
  // TCA: enum Delegate { case completed(title: String) }, sent with `await send(.delegate(.completed(...)))`
  enum TodoOutput: FeatureOutput, Equatable {
    typealias StateType = Todo
    case completed(title: String)
  }

  struct Complete: SideEffect {
    func sideEffect(_ context: SideEffectContext<Todo, RowDependencies>) async throws {
      try await context.dispatch(ToggleDone())
      guard let todo = context.getStateIfPresent(), todo.isDone else { return }
      try await context.emit(TodoOutput.completed(title: todo.title))  // waits for the parent's handler
    }
  }

  struct CountCompletion: StateUpdater {
    func updateState(_ state: inout TodosState) { state.completedCount += 1 }
  }
  // ARTICLE-SNIPPET-END: outputs
}
