import Katana
import KatanaRecordingLog
import KatanaTesting
import Testing

// Every Swift block of the "Recording, replay and undo" article (Sources/Katana/Katana.docc/RecordingAndReplay.md),
// compiled and run: .ci/check-article-snippets keeps each block identical to the code between its markers here.

@Suite("Recording, replay and undo's examples", .timeLimit(.minutes(3)))
struct RecordingArticle {
  @Test func record() async throws {
    // ARTICLE-SNIPPET-BEGIN: record
    let recorder = StoreRecorder<AppState>(capacity: 10_000, checkpointInterval: 1_000)
    let store = Store<AppState, EmptySideEffectDependencyContainer>(initialState: AppState())
    try recorder.attach(to: store)

    try await store.dispatch(AddTodo(title: "Milk"))
    try await store.scope(\.editor, dependencies: \.self).dispatch(TypeText(text: "Hello"))

    let recording = recorder.recording()
    for commit in recording.commits {
      print(commit.sequence, commit.time, commit.base, commit.scope?.description ?? "root")
    }
    let replayed = try recording.replayedState()  // checked against every checkpoint on the way
    // ARTICLE-SNIPPET-END: record
    #expect(replayed == store.state)
    #expect(recording.commits.count == 2)

    // ARTICLE-SNIPPET-BEGIN: replay-into
    let fresh = Store<AppState, EmptySideEffectDependencyContainer>(initialState: recording.initialState)
    try await recording.replay(into: fresh)  // listeners and streams of `fresh` see every commit
    // ARTICLE-SNIPPET-END: replay-into
    #expect(fresh.state == store.state)
  }

  @Test func log() async throws {
    let recorder = StoreRecorder<AppState>()
    let store = Store<AppState, EmptySideEffectDependencyContainer>(
      initialState: AppState(), interceptors: [recorder.interceptor])
    try await store.dispatch(AddTodo(title: "Milk"))
    try await store.scope(\.editor, dependencies: \.self).dispatch(TypeText(text: "Hello"))
    // ARTICLE-SNIPPET-BEGIN: log
    var registry = ReplayRegistry<AppState>()
    registry.register(AddTodo.self, as: "todos.add")
    registry.register(TypeText.self, as: "editor.type", at: \.editor)

    let text = try RecordingLog.encode(recorder.recording(), registry: registry)
    // ... later, anywhere:
    let recording = try RecordingLog.decode(text, registry: registry)
    // ARTICLE-SNIPPET-END: log
    #expect(try recording.replayedState() == store.state)

    // ARTICLE-SNIPPET-BEGIN: regression
    expectReplay(recording, endsAt: AppState(todos: ["Milk"], editor: Editor(text: "Hello")))
    // ARTICLE-SNIPPET-END: regression
  }

  @Test func undo() async throws {
    // ARTICLE-SNIPPET-BEGIN: undo
    let store = Store<AppState, EmptySideEffectDependencyContainer>(initialState: AppState())
    let history = UndoHistory<AppState>(stepLimit: 100)  // every updater is a step
    let editorHistory = UndoHistory<AppState>(scope: \.editor)  // the updaters through the editor's scope
    try history.attach(to: store)
    try editorHistory.attach(to: store)
    // ARTICLE-SNIPPET-END: undo
    // ARTICLE-SNIPPET-BEGIN: undo-use
    try await store.dispatch(AddTodo(title: "Milk"))
    try await store.dispatch(AddTodo(title: "Eggs"))
    try await history.undo(on: store)  // todos: ["Milk"]
    try await history.redo(on: store)  // todos: ["Milk", "Eggs"]

    history.beginGroup()  // a burst of typing: one step
    for word in ["a", "b", "c"] { try await store.dispatch(AddTodo(title: word)) }
    history.endGroup()
    try await history.undo(on: store)  // todos: ["Milk", "Eggs"]

    let editor = store.scope(\.editor, dependencies: \.self)
    try await editor.dispatch(TypeText(text: "Hi"))
    try await editorHistory.undo(on: editor)  // editor.text: "", through the editor's scope: only its slice changes
    // ARTICLE-SNIPPET-END: undo-use
    #expect(store.state.todos == ["Milk", "Eggs"])
    #expect(store.state.editor.text == "")
  }

  @Test func undoInvertible() async throws {
    let history = UndoHistory<AppState>()
    let store = Store<AppState, EmptySideEffectDependencyContainer>(initialState: AppState())
    try history.attach(to: store)
    try await store.dispatch(AddTodoUndoably(title: "Milk"))
    try await store.dispatch(AddTodoUndoably(title: "Eggs"))
    try await history.undo(on: store)
    #expect(store.state.todos == ["Milk"])
    try await history.redo(on: store)
    #expect(store.state.todos == ["Milk", "Eggs"])
  }

  @Test func undoLog() async throws {
    let history = UndoHistory<AppState>()
    let editorHistory = UndoHistory<AppState>(scope: \.editor)
    let recorder = StoreRecorder<AppState>()
    let store = Store<AppState, EmptySideEffectDependencyContainer>(
      initialState: AppState(), interceptors: [history.interceptor, editorHistory.interceptor, recorder.interceptor])
    let editor = store.scope(\.editor, dependencies: \.self)
    try await store.dispatch(AddTodo(title: "Milk"))
    try await history.undo(on: store)
    try await editor.dispatch(TypeText(text: "Hi"))
    try await editorHistory.undo(on: editor)
    try await editorHistory.redo(on: editor)
    var registry = ReplayRegistry<AppState>()
    registry.register(AddTodo.self, as: "todos.add")
    registry.register(TypeText.self, as: "editor.type", at: \.editor)
    // ARTICLE-SNIPPET-BEGIN: undo-log
    registry.register(UndoCommand<AppState>.self, as: "undo")  // the store's history
    registry.register(UndoCommand<Editor>.self, as: "editor.undo", at: \.editor)  // the editor's, through its scope
    // ARTICLE-SNIPPET-END: undo-log
    let text = try RecordingLog.encode(recorder.recording(), registry: registry)
    let recording = try RecordingLog.decode(text, registry: registry)
    #expect(try recording.replayedState() == store.state)
    #expect(store.state == AppState(todos: [], editor: Editor(text: "Hi")))
  }

  @Test func timeTravel() async throws {
    let recorder = StoreRecorder<AppState>()
    let store = Store<AppState, EmptySideEffectDependencyContainer>(
      initialState: AppState(), interceptors: [recorder.interceptor])
    for title in ["Milk", "Eggs", "Tea"] { try await store.dispatch(AddTodo(title: title)) }
    // ARTICLE-SNIPPET-BEGIN: travel
    try await recorder.travel(store, to: 1)  // the state after commit 1: todos ["Milk"]
    do {
      try await store.dispatch(AddTodo(title: "Bread"))
    } catch let error as TimeTravelError {
      print(error)  // refused while away from live
    }
    try await recorder.returnToLive(store)  // todos ["Milk", "Eggs", "Tea"]
    // ARTICLE-SNIPPET-END: travel
    #expect(store.state.todos == ["Milk", "Eggs", "Tea"])
  }
}

extension RecordingArticle {
  // ARTICLE-SNIPPET-BEGIN: state
  struct Editor: State, Equatable, Codable {
    var text = ""
  }

  struct AppState: State, Equatable, Codable {
    var todos: [String] = []
    var editor = Editor()
  }

  struct AddTodo: StateUpdater, Codable {
    let title: String
    func updateState(_ state: inout AppState) { state.todos.append(title) }
  }

  struct TypeText: StateUpdater, Codable {
    let text: String
    func updateState(_ state: inout Editor) { state.text += text }
  }
  // ARTICLE-SNIPPET-END: state

  // ARTICLE-SNIPPET-BEGIN: undo-invertible
  struct RemoveLastTodo: StateUpdater {
    func updateState(_ state: inout AppState) { state.todos.removeLast() }
  }

  struct AddTodoUndoably: InvertibleStateUpdater {
    let title: String
    func updateState(_ state: inout AppState) -> RemoveLastTodo {
      state.todos.append(title)
      return RemoveLastTodo()  // applied to the state this change produced, it gives back the state before
    }
  }
  // ARTICLE-SNIPPET-END: undo-invertible
}
