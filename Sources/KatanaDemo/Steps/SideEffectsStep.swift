import Katana

let sideEffectsStep = Step(title: "Side effects with dependencies") { trace in
  let api = FakeRemoteAPI(todos: [Todo(id: 1, title: "Buy milk"), Todo(id: 2, title: "Call the plumber")])
  let store = makeTodoStore(api: api)
  trace.say("the store's dependency container holds a fake remote API with 2 to-dos")

  let changes = Protected<[String]>([])
  store.addListener { old, new in
    if old.isSyncing != new.isSyncing { changes.withLock { $0.append("isSyncing \(new.isSyncing)") } }
    if old.todos != new.todos { changes.withLock { $0.append("todos \(new.todos.count)") } }
  }

  try await store.dispatch(SyncTodos())
  trace.say("try await store.dispatch(SyncTodos())  -> returned when its body returned")
  trace.say("the changes it committed, in order: \(changes.current.joined(separator: ", "))")
  try trace.expect(changes.current, ["isSyncing true", "todos 2", "isSyncing false"], "committed changes")
  try trace.expect(api.fetchCount, 1, "remote fetches")
  trace.say("store.state.todos: \(store.state.todos)")
  try trace.expect(store.state.todos.map(\.id), [1, 2], "to-do ids after the sync")
  trace.proves(
    "a side effect reaches the outside world through the injected dependencies, and each state updater it "
      + "awaits is committed when its dispatch returns, so the side effect reads like straight-line code")
}
