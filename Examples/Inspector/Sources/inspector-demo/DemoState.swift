import Katana
import KatanaRecordingLog

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

struct Increment: StateUpdater, Codable {
  func updateState(_ state: inout DemoState) { state.counter += 1 }
}

struct AddTodo: StateUpdater, Codable {
  let title: String
  func updateState(_ state: inout DemoState) { state.todos.append(DemoTodo(title: title)) }
}

struct ToggleTodo: StateUpdater, Codable {
  let index: Int
  func updateState(_ state: inout DemoState) {
    guard state.todos.indices.contains(index) else { return }
    state.todos[index].done.toggle()
  }
}

struct ClearDone: StateUpdater, Codable {
  func updateState(_ state: inout DemoState) { state.todos.removeAll { $0.done } }
}

struct EditDraft: StateUpdater, Codable {
  let text: String
  func updateState(_ state: inout EditorState) { state.draft = text }
}

struct SaveDraft: StateUpdater, Codable {
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

/// The demo's updaters by stable name: what a downloaded session's log names them by, and reads them back with.
var demoRegistry: ReplayRegistry<DemoState> {
  var registry = ReplayRegistry<DemoState>(stateType: "InspectorDemo.DemoState")
  registry.register(Increment.self, as: "increment")
  registry.register(AddTodo.self, as: "todos.add")
  registry.register(ToggleTodo.self, as: "todos.toggle")
  registry.register(ClearDone.self, as: "todos.clearDone")
  registry.register(EditDraft.self, as: "editor.edit", at: \DemoState.editor)
  registry.register(SaveDraft.self, as: "editor.save", at: \DemoState.editor)
  return registry
}
