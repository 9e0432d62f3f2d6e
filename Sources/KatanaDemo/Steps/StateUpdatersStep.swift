import Katana

/// Katana 6 code that runs in synchronous code, such as a button action: `send` fixes the updater's place
/// in line at the call and returns a handle.
private func addTodoButtonTapped(_ store: TodoStore, _ todo: Todo) -> DispatchHandle<Void> {
  store.send(AddTodo(todo: todo))
}

let stateUpdatersStep = Step(title: "State updaters: the only way to change the state") { trace in
  let store = makeTodoStore(api: FakeRemoteAPI())
  try await store.waitUntilReady()

  try await store.dispatch(AddTodo(todo: Todo(id: 1, title: "Read the README")))
  trace.say("try await store.dispatch(AddTodo(#1 Read the README))  -> returned")
  try trace.expect(store.state.todos.map(\.title), ["Read the README"], "store.state right after dispatch returned")

  try await store.dispatch(CompleteTodo(id: 1))
  trace.say("try await store.dispatch(CompleteTodo(id: 1))         -> returned")
  try trace.check(store.state.todos.first?.isDone == true, "#1 is not done after CompleteTodo returned")

  let handle = addTodoButtonTapped(store, Todo(id: 2, title: "Run katana-demo"))
  trace.say("store.send(AddTodo(#2 Run katana-demo)) from synchronous code, then try await handle.value")
  try await handle.value

  trace.say("store.state.todos (synchronous read, no await): \(store.state.todos)")
  try trace.expect(
    store.state.todos, [Todo(id: 1, title: "Read the README", isDone: true), Todo(id: 2, title: "Run katana-demo")],
    "store.state.todos")
  trace.proves(
    "an awaited dispatch of a state updater returns once its change is committed, and store.state reads "
      + "it synchronously; send hands an updater over from synchronous code")
}
