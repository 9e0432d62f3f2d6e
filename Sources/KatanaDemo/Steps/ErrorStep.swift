import Katana

let errorStep = Step(title: "An error reaching the caller") { trace in
  let store = makeTodoStore(api: FakeRemoteAPI())

  trace.say("try await store.dispatch(ImportTodos([\"Pay rent\", \"  \", \"Book dentist\"]))")
  trace.say("  ImportTodos dispatches CreateTodo for each title; the fake API refuses the blank one")
  do {
    try await store.dispatch(ImportTodos(titles: ["Pay rent", "  ", "Book dentist"]))
    throw TourFailure(description: "ImportTodos returned normally; expected RemoteAPIError.invalidTitle")
  } catch let error as RemoteAPIError {
    trace.say("caught RemoteAPIError.\(error), thrown two dispatches deep, unchanged")
    try trace.expect(error, .invalidTitle("  "), "caught error")
  }
  trace.say("store.state.todos: \(store.state.todos)")
  try trace.expect(store.state.todos.map(\.title), ["Pay rent"], "to-dos after the failed import")
  trace.proves(
    "a side effect's error reaches the awaiting caller unchanged, through nested dispatches; what was "
      + "committed before it stays, nothing after it runs")
}
