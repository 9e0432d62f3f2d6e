import Katana

let observationStep = Step(title: "Observation: a listener and a stream of values(of:)") { trace in
  let store = makeTodoStore(api: FakeRemoteAPI())
  try await store.dispatch(AddTodo(todo: Todo(id: 1, title: "Pay rent")))

  // A badge that shows the number of to-dos, rendered by its own task, like a view would.
  let (rendered, screen) = AsyncStream.makeStream(of: Int.self)
  let badge = Task {
    for await count in store.values(of: \.todos.count, buffering: .bufferingOldest(16)) {
      screen.yield(count)
    }
    screen.finish()
  }
  var renders = rendered.makeAsyncIterator()
  let first = await renders.next()
  trace.say("a task iterates store.values(of: \\.todos.count); it renders the current value first: \(first ?? -1)")
  try trace.expect(first, 1, "first rendered count")

  let listened = Protected<[String]>([])
  let unsubscribe = store.addListener { old, new in
    listened.withLock { $0.append("\(old.todos.count)->\(new.todos.count)") }
  }
  try await store.dispatch(AddTodo(todo: Todo(id: 2, title: "Book dentist")))
  try await store.dispatch(CompleteTodo(id: 1))
  try await store.dispatch(AddTodo(todo: Todo(id: 3, title: "Water the plants")))
  trace.say("dispatch AddTodo(#2), CompleteTodo(#1), AddTodo(#3)")
  trace.say("the listener has already seen each change: \(listened.current.joined(separator: ", "))")
  try trace.expect(listened.current, ["1->2", "2->2", "2->3"], "listener calls when the dispatches returned")
  unsubscribe()

  var counts: [Int] = []
  while counts.last != 3, let count = await renders.next() {
    counts.append(count)
  }
  trace.say("the badge rendered next: \(counts)  (CompleteTodo left the count at 2: skipped)")
  try trace.expect(counts, [2, 3], "rendered counts after the first")

  await store.shutdown()
  await badge.value
  try trace.expect(await renders.next(), nil, "the rendered stream after shutdown")
  trace.say("await store.shutdown(): the stream finished and the badge task returned")
  trace.proves(
    "listeners see every committed change before the dispatch returns; a stream of values(of:) is one "
      + "subscriber with its own bounded buffer, skips repeats, and finishes when the store shuts down")
}
