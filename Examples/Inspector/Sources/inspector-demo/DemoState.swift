import Katana

/// The demo's state: a counter, a to-do list, and an editor feature mounted at `editor`.
struct DemoState: State, Codable, Equatable {
  var counter = 0
  var todos: [DemoTodo] = []
  var editor = EditorState()
}

struct DemoTodo: Codable, Equatable, Sendable {
  var title: String
  var done = false
}

/// The editor feature's own state (dispatched to through `store.scope(\.editor, ...)`).
struct EditorState: State, Codable, Equatable {
  var draft = ""
  var saved: [String] = []
}

struct Increment: StateUpdater {
  func updateState(_ state: inout DemoState) { state.counter += 1 }
}

struct AddTodo: StateUpdater {
  let title: String
  func updateState(_ state: inout DemoState) { state.todos.append(DemoTodo(title: title)) }
}

struct ToggleTodo: StateUpdater {
  let index: Int
  func updateState(_ state: inout DemoState) {
    guard state.todos.indices.contains(index) else { return }
    state.todos[index].done.toggle()
  }
}

struct ClearDone: StateUpdater {
  func updateState(_ state: inout DemoState) { state.todos.removeAll { $0.done } }
}

struct EditDraft: StateUpdater {
  let text: String
  func updateState(_ state: inout EditorState) { state.draft = text }
}

struct SaveDraft: StateUpdater {
  func updateState(_ state: inout EditorState) {
    state.saved.append(state.draft)
    state.draft = ""
  }
}

/// A side effect that "loads" to-dos and adds them: its commits name it as their cause.
struct LoadTodos: SideEffect {
  let titles: [String]
  func sideEffect(_ context: SideEffectContext<DemoState, EmptySideEffectDependencyContainer>) async throws {
    for title in titles {
      try await context.dispatch(AddTodo(title: title))
    }
  }
}

struct SyncFailed: Error, CustomStringConvertible {
  var description: String { "the sync server is unreachable (scripted)" }
}

/// A side effect that fails, so that the timeline shows a failure.
struct SyncTodos: SideEffect {
  func sideEffect(_ context: SideEffectContext<DemoState, EmptySideEffectDependencyContainer>) async throws {
    try await context.dispatch(Increment())
    throw SyncFailed()
  }
}

typealias DemoStore = Store<DemoState, EmptySideEffectDependencyContainer>
