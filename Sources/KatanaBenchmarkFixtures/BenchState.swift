import Foundation
import Katana
import KatanaBenchmarkBaselines

/// The benchmarks' state: a counter, an array whose size the append cases control, and ten other fields
/// for projection observers.
public struct BenchState: State {
  public var counter = 0
  public var items: [Int] = []
  public var field0 = 0
  public var field1 = 0
  public var field2 = 0
  public var field3 = 0
  public var field4 = 0
  public var field5 = 0
  public var field6 = 0
  public var field7 = 0
  public var field8 = 0
  public var field9 = 0

  /// An empty state.
  public init() {}

  /// A state with `items` in its array.
  public init(items: [Int]) {
    self.items = items
  }

  /// Subscribes to the ten fields that the append cases never change, with key-path literals as users
  /// write them (not through an array of closures, which would add reabstraction thunks).
  public static func observeOtherFields(of store: BenchStore) -> [StoreStream<Int>] {
    [
      store.values(of: \.field0), store.values(of: \.field1), store.values(of: \.field2),
      store.values(of: \.field3), store.values(of: \.field4), store.values(of: \.field5),
      store.values(of: \.field6), store.values(of: \.field7), store.values(of: \.field8),
      store.values(of: \.field9),
    ]
  }
}

/// The store most cases dispatch to.
public typealias BenchStore = Store<BenchState, EmptySideEffectDependencyContainer>

/// The mutation every baseline also does.
public struct Increment: StateUpdater {
  /// An increment.
  public init() {}

  public func updateState(_ state: inout BenchState) {
    state.counter &+= 1
  }
}

/// Appends one element and removes it again: exercises `append` on an array of constant size.
public struct AppendAndDrop: StateUpdater {
  /// An append and a drop.
  public init() {}

  public func updateState(_ state: inout BenchState) {
    state.items.append(state.counter)
    state.items.removeLast()
    state.counter &+= 1
  }
}

/// A side effect that does nothing.
public struct EmptySideEffect: SideEffect {
  /// An empty side effect.
  public init() {}

  public func sideEffect(_ context: SideEffectContext<BenchState, EmptySideEffectDependencyContainer>) async throws {}
}

/// A side effect that returns a value to the dispatcher.
public struct Answer: ReturningSideEffect {
  /// The side effect.
  public init() {}

  public func sideEffect(_ context: any AnySideEffectContext) async throws -> Int { 42 }
}

/// A side effect that awaits a nested state-updater dispatch.
public struct NestedIncrement: SideEffect {
  /// The side effect.
  public init() {}

  public func sideEffect(_ context: SideEffectContext<BenchState, EmptySideEffectDependencyContainer>) async throws {
    try await context.dispatch(Increment())
  }
}

/// An interceptor that hands every item on unchanged.
public let passThrough: StoreInterceptor = { _ in { next in { item in try await next(item) } } }

/// A pass-through interceptor of the faster form.
public struct PassThrough: DispatchInterceptor {
  public init() {}

  public func intercept(_ item: any Dispatchable, next: DispatchInterceptorNext) async throws {
    try await next(item)
  }
}

/// A ready store.
public func makeStore(
  _ state: BenchState = BenchState(), interceptors: [StoreInterceptor] = [], observers: [DispatchObserver] = [],
  dispatchInterceptors: [any DispatchInterceptor] = []
) async throws -> BenchStore {
  let store = BenchStore(
    initialState: state, interceptors: interceptors,
    configuration: StoreConfiguration(dispatchObservers: observers, dispatchInterceptors: dispatchInterceptors))
  try await store.waitUntilReady()
  return store
}

/// Throws unless the store's counter is `expected`: every dispatched increment was applied once.
public func expectCounter(of store: BenchStore, _ expected: Int, _ what: String = "lost updates") throws {
  guard store.state.counter == expected else {
    throw CorrectnessError(description: "\(what): \(store.state.counter) of \(expected)")
  }
}

/// A counter that listeners can bump from any thread.
public final class Counter: @unchecked Sendable {  // Sendable: `count` is only touched under `lock`.
  private let lock = NSLock()
  private var count = 0

  /// A counter at zero.
  public init() {}

  /// The current count.
  public var value: Int {
    lock.lock()
    defer { lock.unlock() }
    return count
  }

  /// Adds `amount` to the count.
  public func add(_ amount: Int) {
    lock.lock()
    count &+= amount
    lock.unlock()
  }
}

extension PreparedFixture {
  /// `operations` awaited dispatches of `Increment()` to `store`, checked to have all been applied: the updater
  /// dispatch that the cases measure on stores set up in different ways (interceptors, observers, a recorder).
  static func dispatchingIncrements(to store: BenchStore, operations: Int) -> PreparedFixture {
    PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(Increment()) }
    } verify: {
      try expectCounter(of: store, operations)
    }
  }
}
