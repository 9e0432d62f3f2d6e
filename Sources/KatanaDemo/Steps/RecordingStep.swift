import Katana
import KatanaRecordingLog
import KatanaTesting

let recordingStep = Step(title: "Record, replay and undo: a session reproduced in a fresh store, then undone") {
  trace in
  let recorder = StoreRecorder<TodoState>()
  let history = UndoHistory<TodoState>(isUndoable: { !($0 is SetSyncing) })
  // On a test clock, the times the log records are the same on every run.
  let store = makeTodoStore(api: FakeRemoteAPI(), interceptors: [history.interceptor], clock: TestClock())
  try recorder.attach(to: store)
  trace.say("interceptors: [history.interceptor]; recorder.attach(to: store)   (an UndoHistory and a StoreRecorder)")

  _ = try await store.dispatch(CreateTodo(title: "Pay rent"))
  _ = try await store.dispatch(CreateTodo(title: "Book dentist"))
  try await store.dispatch(CompleteTodo(id: 1))
  trace.say("dispatch CreateTodo(\"Pay rent\"), CreateTodo(\"Book dentist\"), CompleteTodo(#1)")
  let recording = recorder.recording()
  for commit in recording.commits {
    let cause = commit.cause.map { " (dispatched by side effect #\($0))" } ?? ""
    trace.say("  commit \(commit.sequence): \(commit.base)\(cause)")
  }

  var registry = ReplayRegistry<TodoState>()
  registry.register(AddTodo.self, as: "todos.add")
  registry.register(CompleteTodo.self, as: "todos.complete")
  registry.register(SetSyncing.self, as: "todos.syncing")
  let log = try RecordingLog.encode(recording, registry: registry)
  trace.say("RecordingLog.encode: \(log.split(separator: "\n").count) JSON lines, for example:")
  trace.say("  \(log.split(separator: "\n")[2])")

  let fresh = makeTodoStore(api: FakeRemoteAPI())
  try await fresh.waitUntilReady()
  try await RecordingLog.decode(log, registry: registry).replay(into: fresh)
  trace.say("decoded and replayed into a fresh store (no side effect runs: their results are in the log)")
  try trace.expect(fresh.state, store.state, "the replayed store's state")

  try await history.undo(on: store)
  trace.say("history.undo: \(store.state.todos)")
  try trace.expect(store.state.todos.map(\.isDone), [false, false], "to-dos after undoing CompleteTodo")
  try await history.undo(on: store)
  trace.say("history.undo: \(store.state.todos)")
  try trace.expect(store.state.todos.map(\.title), ["Pay rent"], "to-dos after undoing the second AddTodo")
  try await history.redo(on: store)
  trace.say("history.redo: \(store.state.todos)")
  try trace.expect(store.state.todos.count, 2, "to-dos after redo")
  trace.proves(
    "every commit is recorded in order with the side effect that caused it; the log rebuilds the same state in a "
      + "fresh store without running a side effect; undo and redo are commits that replay the session without the "
      + "undone steps")
}
