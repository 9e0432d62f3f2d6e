import Dispatch
import KatanaPromises

// Katana 6-style code: a promise-returning API client, a synchronous side effect that blocks in
// `Hydra.await`, and app code that chains `then` on a dispatch.

extension FakeRemoteAPI {
  /// The API as a Katana 6 app's client exposed it: a Hydra promise.
  func legacyFetchTodos() -> Promise<[Todo]> {
    Promise { try await self.fetchTodos() }
  }
}

/// A Katana 6 side effect: synchronous, waiting for promises with `Hydra.await`.
private struct LegacyImport: SideEffect {
  func sideEffect(_ context: SideEffectContext<TodoState, TodoDependencies>) throws {
    let todos = try Hydra.await(context.dependencies.api.legacyFetchTodos())
    for todo in todos {
      try Hydra.await(context.dispatch(AddTodo(todo: todo)))
    }
  }
}

/// Tells whether code runs on the main queue. (`Thread.isMainThread` would not do: in this async `main` on
/// Linux, main-queue blocks run on a thread other than the process's first one.)
private enum MainQueue {
  static let key = DispatchSpecificKey<Bool>()

  static func mark() {
    DispatchQueue.main.setSpecific(key: key, value: true)
  }

  static var isCurrent: Bool {
    DispatchQueue.getSpecific(key: key) == true
  }
}

/// Katana 6 app code, from synchronous code: `store.dispatch` returns a promise; `then` runs on the main
/// queue, as in Hydra.
private func importButtonTapped(_ store: TodoStore, report: Protected<[String]>) -> Promise<Void> {
  store.dispatch(LegacyImport()).then { _ in
    report.withLock { $0.append("then: \(store.state.todos.count) to-dos, on the main queue: \(MainQueue.isCurrent)") }
  }
}

let promisesStep = Step(title: "The promise compatibility path (KatanaPromises)") { trace in
  let api = FakeRemoteAPI(todos: [Todo(id: 1, title: "Buy milk"), Todo(id: 2, title: "Call the plumber")])
  let store = TodoStore(
    interceptors: [], stateInitializer: { TodoState() },
    dependenciesInitializer: { _, _ in TodoDependencies(api: api) }, configuration: .katana6)
  trace.say("a store with configuration: .katana6 (listeners on the main queue, side effects on threads that")
  trace.say("may block), a synchronous side effect that blocks in Hydra.await, and app code that chains then")

  MainQueue.mark()
  let report = Protected<[String]>([])
  store.addListener { _, new in
    report.withLock { $0.append("listener: \(new.todos.count) to-dos, on the main queue: \(MainQueue.isCurrent)") }
  }
  let promise = importButtonTapped(store, report: report)
  try await promise.value
  for line in report.current {
    trace.say(line)
  }
  try trace.expect(
    report.current,
    [
      "listener: 1 to-dos, on the main queue: true",
      "listener: 2 to-dos, on the main queue: true",
      "then: 2 to-dos, on the main queue: true",
    ], "what the listener and the then closure saw")

  do {
    _ = try Hydra.await(api.legacyFetchTodos())
    throw TourFailure(description: "Hydra.await blocked inside a Swift task instead of throwing")
  } catch PromiseError.invalidContext {
    trace.say("Hydra.await called from async code throws PromiseError.invalidContext instead of blocking")
  }
  trace.proves(
    "Katana 6 code keeps working: promise-returning dispatch from synchronous code, then on the main queue "
      + "after the listeners, Hydra.await in synchronous side effects on threads of their own; blocking "
      + "where it could starve Swift's thread pool is an error, not a hang")
}
