import Katana

let concurrencyStep = Step(title: "Concurrent dispatch from many tasks") { trace in
  let tasks = 8
  let perTask = 250
  let store = makeTodoStore(api: FakeRemoteAPI())
  try await store.waitUntilReady()

  // Each task adds its to-dos in its own order; to-do ids encode (task, sequence number).
  try await withThrowingTaskGroup(of: Void.self) { group in
    for task in 0..<tasks {
      group.addTask {
        for sequence in 0..<perTask {
          try await store.dispatch(AddTodo(todo: Todo(id: task * 1_000 + sequence, title: "task \(task)")))
        }
      }
    }
    try await group.waitForAll()
  }
  trace.say("\(tasks) tasks dispatched \(perTask) AddTodo each, at the same time")

  let todos = store.state.todos
  trace.say("store.state.todos.count: \(todos.count)")
  try trace.expect(todos.count, tasks * perTask, "committed to-dos")
  for task in 0..<tasks {
    let sequence = todos.filter { $0.id / 1_000 == task }.map { $0.id % 1_000 }
    try trace.expect(sequence, Array(0..<perTask), "task \(task)'s to-dos, in commit order")
  }
  trace.say("every task's to-dos are in the state in the order that task dispatched them")
  trace.proves(
    "state updaters apply one at a time: no update is lost under contention, and each task's successive "
      + "dispatches apply in its order")
}
