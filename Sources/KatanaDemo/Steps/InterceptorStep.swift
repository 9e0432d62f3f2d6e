import Katana

let interceptorStep = Step(title: "An interceptor: DispatchableLogger with a sink") { trace in
  let log = Protected<[String]>([])
  let logger = DispatchableLogger.interceptor(blackList: [SetSyncing.self]) { item in
    log.withLock { $0.append(DispatchableLogger.message(for: item)) }
  }
  let store = makeTodoStore(api: FakeRemoteAPI(), interceptors: [logger])
  trace.say("DispatchableLogger.interceptor(blackList: [SetSyncing.self]) { item in log.append(...) }")

  try await store.dispatch(SetSyncing(isSyncing: true))
  trace.say("dispatch SetSyncing(true)                 (black-listed)")
  try await store.dispatch(AddTodo(todo: Todo(id: 1, title: "Pay rent")))
  trace.say("dispatch AddTodo(#1 Pay rent)")
  _ = try await store.dispatch(CreateTodo(title: "Book dentist"))
  trace.say("dispatch CreateTodo(\"Book dentist\")       (dispatches AddTodo itself)")
  do {
    _ = try await store.dispatch(CreateTodo(title: ""))
    throw TourFailure(description: "CreateTodo(\"\") returned a to-do; expected RemoteAPIError.invalidTitle")
  } catch is RemoteAPIError {
    trace.say("dispatch CreateTodo(\"\")                   (the API refuses it: it throws)")
  }

  trace.say("the sink received:")
  for line in log.current {
    trace.say("  \(line)")
  }
  try trace.expect(
    log.current,
    [
      "[Dispatchable]: KatanaDemo.AddTodo",
      "[Dispatchable]: KatanaDemo.AddTodo",
      "[Dispatchable]: KatanaDemo.CreateTodo",
    ], "logged items")
  trace.proves(
    "an interceptor sees every dispatch, nested ones included; the logger reports each item once it has been "
      + "handled without an error (a side effect after the updaters it dispatched), skips the black list and "
      + "failures, and writes to the sink you give it")
}
