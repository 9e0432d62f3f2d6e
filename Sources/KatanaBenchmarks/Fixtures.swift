import Katana

/// The benchmarks' state: a counter, an array whose size the append cases control, and ten other fields
/// for projection observers.
struct BenchState: State {
  var counter = 0
  var items: [Int] = []
  var field0 = 0
  var field1 = 0
  var field2 = 0
  var field3 = 0
  var field4 = 0
  var field5 = 0
  var field6 = 0
  var field7 = 0
  var field8 = 0
  var field9 = 0

  /// Subscribes to the ten fields that the append cases never change, with key-path literals as users
  /// write them (not through an array of closures, which would add reabstraction thunks).
  static func observeOtherFields(of store: BenchStore) -> [StoreStream<Int>] {
    [
      store.values(of: \.field0), store.values(of: \.field1), store.values(of: \.field2),
      store.values(of: \.field3), store.values(of: \.field4), store.values(of: \.field5),
      store.values(of: \.field6), store.values(of: \.field7), store.values(of: \.field8),
      store.values(of: \.field9),
    ]
  }
}

typealias BenchStore = Store<BenchState, EmptySideEffectDependencyContainer>

/// The mutation every baseline also does.
struct Increment: StateUpdater {
  func updateState(_ state: inout BenchState) {
    state.counter &+= 1
  }
}

/// Appends one element and removes it again: exercises `append` on an array of constant size.
struct AppendAndDrop: StateUpdater {
  func updateState(_ state: inout BenchState) {
    state.items.append(state.counter)
    state.items.removeLast()
    state.counter &+= 1
  }
}

struct EmptySideEffect: SideEffect {
  func sideEffect(_ context: SideEffectContext<BenchState, EmptySideEffectDependencyContainer>) async throws {}
}

struct Answer: ReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) async throws -> Int { 42 }
}

struct NestedIncrement: SideEffect {
  func sideEffect(_ context: SideEffectContext<BenchState, EmptySideEffectDependencyContainer>) async throws {
    try await context.dispatch(Increment())
  }
}

/// An interceptor that hands every item on unchanged.
let passThrough: StoreInterceptor = { _ in { next in { item in try await next(item) } } }

/// A ready store.
func makeStore(_ state: BenchState = BenchState(), interceptors: [StoreInterceptor] = []) async throws -> BenchStore {
  let store = BenchStore(initialState: state, interceptors: interceptors)
  try await store.waitUntilReady()
  return store
}
