import KatanaTestSupport

@testable import Katana

/// The state most tests use.
struct CounterState: State, Equatable {
  var counter = 0
  var log: [String] = []
  var items: [Int] = []
  var other = 0
}

struct Increment: StateUpdater {
  var by = 1
  func updateState(_ state: inout CounterState) { state.counter += by }
}

/// Appends `tag` to the log.
struct Log: StateUpdater {
  let tag: String
  func updateState(_ state: inout CounterState) { state.log.append(tag) }
}

struct SetCounter: StateUpdater {
  let value: Int
  func updateState(_ state: inout CounterState) { state.counter = value }
}

struct AppendItem: StateUpdater {
  let value: Int
  func updateState(_ state: inout CounterState) { state.items.append(value) }
}

/// Another state, to check type mismatches.
struct OtherState: State, Equatable {
  var name = ""
}

struct Rename: StateUpdater {
  let name: String
  func updateState(_ state: inout OtherState) { state.name = name }
}

struct TestError: Error, Equatable {
  let code: Int
}

/// Dependencies with an API double whose answers tests control.
final class TestDependencies: SideEffectDependencyContainer {
  let dispatch: AnyDispatch
  let getState: GetState

  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    self.dispatch = dispatch
    self.getState = getState
  }
}

typealias TestStore = Store<CounterState, TestDependencies>

/// A side effect that increments through a nested dispatch.
struct IncrementTwice: SideEffect {
  func sideEffect(_ context: SideEffectContext<CounterState, TestDependencies>) async throws {
    try await context.dispatch(Increment())
    try await context.dispatch(Increment())
  }
}

/// A side effect that throws `TestError(code:)`.
struct Fail: SideEffect {
  let code: Int
  func sideEffect(_ context: SideEffectContext<CounterState, TestDependencies>) async throws {
    throw TestError(code: code)
  }
}

/// A returning side effect that returns the counter after adding `by`.
struct AddAndRead: ReturningSideEffect {
  let by: Int
  func sideEffect(_ context: any AnySideEffectContext) async throws -> Int {
    let context = try context.typed(CounterState.self, TestDependencies.self)
    try await context.dispatch(Increment(by: by))
    return context.getState().counter
  }
}

/// A returning side effect that runs `AddAndRead` through a nested dispatch, `depth` levels deep.
struct Nested: ReturningSideEffect {
  let depth: Int
  func sideEffect(_ context: any AnySideEffectContext) async throws -> Int {
    if depth == 0 { return try await context.dispatch(AddAndRead(by: 1)) }
    return try await context.dispatch(Nested(depth: depth - 1))
  }
}

/// A returning side effect that fails `depth` levels deep.
struct NestedFailure: ReturningSideEffect {
  let depth: Int
  func sideEffect(_ context: any AnySideEffectContext) async throws -> String {
    let context = try context.typed(CounterState.self, TestDependencies.self)
    if depth == 0 { try await context.dispatch(Fail(code: 42)) }
    return try await context.dispatch(NestedFailure(depth: depth - 1))
  }
}

/// A side effect that runs a closure, so that tests can script it.
struct Script: SideEffect {
  let body: @Sendable (SideEffectContext<CounterState, TestDependencies>) async throws -> Void
  func sideEffect(_ context: SideEffectContext<CounterState, TestDependencies>) async throws {
    try await body(context)
  }
}

/// A returning side effect that runs a closure.
struct ReturningScript<Value: Sendable>: ReturningSideEffect {
  let body: @Sendable (any AnySideEffectContext) async throws -> Value
  func sideEffect(_ context: any AnySideEffectContext) async throws -> Value {
    try await body(context)
  }
}

/// Makes a ready store (the start-up has finished).
func makeReadyStore(
  _ initial: CounterState = CounterState(), interceptors: [StoreInterceptor] = []
) async throws -> TestStore {
  let store = TestStore(initialState: initial, interceptors: interceptors)
  try await store.waitUntilReady()
  return store
}

/// An interceptor that passes every item on, recording its type name under `name`.
func recordingInterceptor(_ name: String, into recorder: Recorder<String>) -> StoreInterceptor {
  { _ in
    { next in
      { item in
        recorder.append("\(name):\(type(of: item))")
        try await next(item)
      }
    }
  }
}

/// A ready store whose mailbox reports every dispatch that has to wait to `enqueued`.
func makeObservedStore(
  interceptors: [StoreInterceptor] = [], enqueued: EventCounter
) async throws -> TestStore {
  var configuration = StoreConfiguration()
  configuration.onMailboxEnqueue = { _ in enqueued.increment() }
  let store = TestStore(interceptors: interceptors, stateInitializer: { CounterState() }, configuration: configuration)
  try await store.waitUntilReady()
  return store
}

/// An interceptor that, for state updaters whose log tag is in `gated`, waits for the gate before handing
/// them on (holding the turn meanwhile, even if the dispatching task is cancelled), after reporting that it
/// started.
func gatingInterceptor(tag: String, gate: Gate, started: Gate) -> StoreInterceptor {
  { _ in
    { next in
      { item in
        if let log = item as? Log, log.tag == tag {
          started.open()
          await gate.waitIgnoringCancellation()
        }
        try await next(item)
      }
    }
  }
}

/// Adds `by` to the counter and counts the application in `other`.
struct Add: StateUpdater {
  let by: Int
  func updateState(_ state: inout CounterState) {
    state.counter += by
    state.other += 1
  }
}
