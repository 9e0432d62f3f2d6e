import Katana

// The service's logic: asynchronous, with the remote API injected, dispatching state updaters.

/// Replaces the local to-dos with the server's.
struct SyncTodos: SideEffect {
  func sideEffect(_ context: SideEffectContext<TodoState, TodoDependencies>) async throws {
    guard !context.getState().isSyncing else { return }
    try await context.dispatch(SetSyncing(isSyncing: true))
    let todos = try await context.dependencies.api.fetchTodos()
    try await context.dispatch(SetTodos(todos: todos))
    try await context.dispatch(SetSyncing(isSyncing: false))
  }
}

/// Creates a to-do on the server, commits it, and returns it to whoever dispatched it.
struct CreateTodo: ReturningSideEffect {
  let title: String

  func sideEffect(_ context: any AnySideEffectContext) async throws -> Todo {
    let context = try context.typed(TodoState.self, TodoDependencies.self)
    let todo = try await context.dependencies.api.create(title: title)
    try await context.dispatch(AddTodo(todo: todo))
    return todo
  }
}

/// Creates several to-dos, one after the other, through `CreateTodo`; stops at the first failure.
struct ImportTodos: SideEffect {
  let titles: [String]

  func sideEffect(_ context: SideEffectContext<TodoState, TodoDependencies>) async throws {
    for title in titles {
      _ = try await context.dispatch(CreateTodo(title: title))
    }
  }
}

/// Identifies the search in flight: a newer search, or `store.cancel(id: SearchID())`, cancels it.
struct SearchID: Hashable, Sendable {}

/// Searches the server and shows the results, cancelling the search already in flight.
struct SearchTodos: SideEffect {
  let query: String

  func sideEffect(_ context: SideEffectContext<TodoState, TodoDependencies>) async throws {
    try await context.run(id: SearchID(), cancelInFlight: true) {
      let titles = try await context.dependencies.api.search(query)
      try await context.dispatch(SetSearchResults(titles: titles))
    }
  }
}

/// The search field changed (after `SetQuery`, sent first): search once typing pauses for 300 ms, for the
/// text in the state then. Reading the text rather than capturing it keeps back-to-back keystrokes right:
/// sent updaters apply in order, while the bodies of sent side effects run concurrently.
struct SearchAfterTyping: SideEffect {
  static let quietPeriod = Duration.milliseconds(300)

  func sideEffect(_ context: SideEffectContext<TodoState, TodoDependencies>) async throws {
    try await context.debounce(id: SearchID(), for: Self.quietPeriod) {
      let titles = try await context.dependencies.api.search(context.getState().query)
      try await context.dispatch(SetSearchResults(titles: titles))
    }
  }
}
