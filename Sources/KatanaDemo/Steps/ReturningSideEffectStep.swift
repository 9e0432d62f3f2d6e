import Katana

let returningSideEffectStep = Step(title: "A returning side effect: dispatch that returns a value") { trace in
  let api = FakeRemoteAPI(todos: [Todo(id: 1, title: "Buy milk"), Todo(id: 2, title: "Call the plumber")])
  let store = makeTodoStore(api: api)
  try await store.dispatch(SyncTodos())

  let todo = try await store.dispatch(CreateTodo(title: "Water the plants"))
  trace.say("let todo = try await store.dispatch(CreateTodo(title: \"Water the plants\"))")
  trace.say("todo: \(todo)  (the server chose the id)")
  try trace.expect(todo, Todo(id: 3, title: "Water the plants"), "returned to-do")
  try trace.expect(store.state.todos.last, todo, "last to-do in the state")
  trace.proves("a ReturningSideEffect's value reaches the caller of dispatch, typed, after what it committed")
}
