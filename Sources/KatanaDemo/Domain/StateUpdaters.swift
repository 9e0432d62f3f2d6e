import Katana

// The only ways to change `TodoState`: pure, synchronous, in-place mutations (Codable where a recording log writes
// them).

struct AddTodo: StateUpdater, Codable {
  let todo: Todo
  func updateState(_ state: inout TodoState) {
    state.todos.append(todo)
  }
}

struct CompleteTodo: StateUpdater, Codable {
  let id: Int
  func updateState(_ state: inout TodoState) {
    guard let index = state.todos.firstIndex(where: { $0.id == id }) else { return }
    state.todos[index].isDone = true
  }
}

struct SetTodos: StateUpdater {
  let todos: [Todo]
  func updateState(_ state: inout TodoState) {
    state.todos = todos
  }
}

struct SetSyncing: StateUpdater, Codable {
  let isSyncing: Bool
  func updateState(_ state: inout TodoState) {
    state.isSyncing = isSyncing
  }
}

struct SetQuery: StateUpdater {
  let query: String
  func updateState(_ state: inout TodoState) {
    state.query = query
  }
}

struct SetSearchResults: StateUpdater {
  let titles: [String]
  func updateState(_ state: inout TodoState) {
    state.searchResults = titles
  }
}
