import Foundation
import Katana
import KatanaTesting
import Testing

// Every Swift block of the "Getting started" article (Sources/Katana/Katana.docc/GettingStarted.md), compiled
// and run: .ci/check-article-snippets keeps each block identical to the code between its markers here. The
// article's types live in `GettingStarted`, so that they do not clash with other tests' types.

@Suite("Getting started's examples", .timeLimit(.minutes(3)))
struct GettingStarted {
  @Test func createTheStoreAndDispatch() async throws {
    // ARTICLE-SNIPPET-BEGIN: store
    let store = Store<AppState, AppDependencies>()

    try await store.dispatch(SyncTodos())  // returns when the body returns
    let todo = try await store.dispatch(CreateTodo(title: "milk"))  // the side effect's value
    print(store.state.todos.count)  // synchronous, from anywhere
    // ARTICLE-SNIPPET-END: store
    #expect(todo == Todo(id: 1, title: "milk"))
    #expect(store.state.todos == [todo])
  }

  @Test func observeChanges() async throws {
    let store = Store<AppState, AppDependencies>()
    // ARTICLE-SNIPPET-BEGIN: observe
    let unsubscribe = store.addListener { old, new in
      if old.todos != new.todos { print("todos changed") }
    }

    Task { @MainActor in
      for await count in store.values(of: \.todos.count) { render(count) }
    }
    // ARTICLE-SNIPPET-END: observe
    _ = try await store.dispatch(CreateTodo(title: "milk"))
    unsubscribe()
    await store.shutdown()
  }
}

extension GettingStarted {
  // ARTICLE-SNIPPET-BEGIN: state

  struct Todo: Sendable, Equatable {
    let id: Int
    var title: String
    var isDone = false
  }

  struct AppState: State, Equatable {
    var todos: [Todo] = []
    var isSyncing = false
  }
  // ARTICLE-SNIPPET-END: state
}

extension GettingStarted {
  // ARTICLE-SNIPPET-BEGIN: state-updaters
  struct AddTodo: StateUpdater {
    let todo: Todo
    func updateState(_ state: inout AppState) {
      state.todos.append(todo)
    }
  }

  struct SetSyncing: StateUpdater {
    let value: Bool
    func updateState(_ state: inout AppState) {
      state.isSyncing = value
    }
  }
  // ARTICLE-SNIPPET-END: state-updaters
}

extension GettingStarted {
  // ARTICLE-SNIPPET-BEGIN: dependencies
  protocol TodoAPI: Sendable {
    func fetchTodos() async throws -> [Todo]
    func create(title: String) async throws -> Todo
  }

  final class AppDependencies: SideEffectDependencyContainer {
    let api: any TodoAPI
    init(api: any TodoAPI) { self.api = api }
    init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) { api = LiveTodoAPI() }
  }
  // ARTICLE-SNIPPET-END: dependencies
}

extension GettingStarted {
  // ARTICLE-SNIPPET-BEGIN: live-api
  actor LiveTodoAPI: TodoAPI {
    private var todos: [Todo] = []

    func fetchTodos() async throws -> [Todo] { todos }

    func create(title: String) async throws -> Todo {
      let todo = Todo(id: todos.count + 1, title: title)
      todos.append(todo)
      return todo
    }
  }
  // ARTICLE-SNIPPET-END: live-api
}

extension GettingStarted {
  // ARTICLE-SNIPPET-BEGIN: side-effect
  struct SyncTodos: SideEffect {
    func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
      guard !context.getState().isSyncing else { return }
      try await context.dispatch(SetSyncing(value: true))
      defer { context.send(SetSyncing(value: false)) }
      for todo in try await context.dependencies.api.fetchTodos() {
        try await context.dispatch(AddTodo(todo: todo))
      }
    }
  }
  // ARTICLE-SNIPPET-END: side-effect
}

extension GettingStarted {
  // ARTICLE-SNIPPET-BEGIN: returning-side-effect
  struct CreateTodo: ReturningSideEffect {
    let title: String
    func sideEffect(_ context: any AnySideEffectContext) async throws -> Todo {
      let context = try context.typed(AppState.self, AppDependencies.self)
      let todo = try await context.dependencies.api.create(title: title)
      try await context.dispatch(AddTodo(todo: todo))
      return todo
    }
  }
  // ARTICLE-SNIPPET-END: returning-side-effect
}

extension GettingStarted {
  // ARTICLE-SNIPPET-BEGIN: test

  struct StubTodoAPI: TodoAPI {
    let todos: [Todo]
    func fetchTodos() async throws -> [Todo] { todos }
    func create(title: String) async throws -> Todo { Todo(id: todos.count + 1, title: title) }
  }

  @Test func syncTodos_addsTheServersTodos() async throws {
    let milk = Todo(id: 1, title: "milk")
    let store = TestStore(initialState: AppState(), dependencies: AppDependencies(api: StubTodoAPI(todos: [milk])))
    try await store.dispatch(SyncTodos())
    await store.receive(SetSyncing.self) { $0.isSyncing = true }
    await store.receive(AddTodo.self) { $0.todos = [milk] }
    await store.receive(SetSyncing.self) { $0.isSyncing = false }
    await store.finish()  // fails the test if anything is left running or unasserted
  }
  // ARTICLE-SNIPPET-END: test
}

// ARTICLE-SNIPPET-BEGIN: render
@MainActor func render(_ count: Int) {
  print("\(count) to-dos")
}
// ARTICLE-SNIPPET-END: render
