import Foundation
import KatanaPromises
import KatanaTestSupport

// Items for the suites that check MIGRATION.md's "Behaviour differences from Katana 6".

typealias CounterStore = Store<Stage1.CounterState, Stage1.AppDependencies>

/// A Katana 6-style store with fakes: `configuration` is `.katana6` unless a test passes another.
func counterStore(
  interceptors: [StoreInterceptor] = [], configuration: StoreConfiguration = .katana6,
  stateInitializer: @escaping CounterStore.StateInitializer = { Stage1.CounterState() }
) -> CounterStore {
  CounterStore(
    interceptors: interceptors,
    stateInitializer: stateInitializer,
    dependenciesInitializer: { dispatch, _ in
      Stage1.AppDependencies(
        APIManager: Stage1.FakeAPI(number: 42), monetization: Stage1.FakeMonetization(), dispatch: dispatch)
    },
    configuration: configuration)
}

/// A returning side effect that fails until its `succeedOn`-th attempt, counting attempts.
struct FlakyReadCounter: ReturningSideEffect {
  let attempts: LockedValue<Int>
  let succeedOn: Int

  func sideEffect(_ context: any AnySideEffectContext) throws -> Int {
    let attempt = attempts.withLock { attempts -> Int in
      attempts += 1
      return attempts
    }
    guard attempt >= succeedOn else { throw TestError(code: attempt) }
    return attempt
  }
}

/// A Katana 6 side effect that dispatches `inner` through the context's promise API and retries it.
struct RetryThroughContext: ReturningSideEffect {
  let inner: FlakyReadCounter
  let anyDispatch: Bool

  func sideEffect(_ context: any AnySideEffectContext) throws -> Int {
    if anyDispatch {
      let value = try Hydra.await(context.anyDispatch(inner).retry(3))
      return value as? Int ?? -1
    }
    return try Hydra.await(context.dispatch(inner).retry(3))
  }
}

/// Reads the state after awaiting an increment, in a Katana 6 side effect.
struct IncrementAndRead: ReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) throws -> Int {
    try Hydra.await(context.dispatch(Stage1.IncrementCounter()))
    return (context.getAnyState() as? Stage1.CounterState)?.counter ?? -1
  }
}

/// An item that is neither a state updater nor a side effect.
struct NeitherKind: Dispatchable {}

/// An interceptor that drops items of type `T` (never calls `next` for them).
func dropping<T: Dispatchable>(_: T.Type) -> StoreInterceptor {
  { _ in
    { next in
      { item in
        if item is T { return }
        try await next(item)
      }
    }
  }
}

/// An interceptor that hands `next` a `replacement` instead of each `T`.
func replacing<T: Dispatchable>(_: T.Type, with replacement: any Dispatchable) -> StoreInterceptor {
  { _ in
    { next in
      { item in try await next(item is T ? replacement : item) }
    }
  }
}

// A log, for ordering.

struct LogState: State {
  var log: [String] = []
}

struct Append: StateUpdater {
  let entry: String
  func updateState(_ state: inout LogState) { state.log.append(entry) }
}

struct Observed: StateUpdater {
  func updateState(_ state: inout LogState) { state.log.append("observed") }
}

struct FollowUp: StateUpdater, DispatchObserverDispatchable {
  init() {}
  init?(dispatchedItem: any Dispatchable, prevState: any State, currentState: any State) {}
  func updateState(_ state: inout LogState) { state.log.append("follow-up") }
}

/// Blocks its thread until `count` callers are waiting at once (or a 30-second failsafe expires).
final class Barrier: @unchecked Sendable {  // Sendable: `arrived` is only touched with `condition` locked.
  private let condition = NSCondition()
  private let count: Int
  private var arrived = 0

  init(count: Int) { self.count = count }

  /// Returns true once everyone arrived; false if the failsafe expired first.
  func arriveAndWait() -> Bool {
    condition.lock()
    defer { condition.unlock() }
    arrived += 1
    condition.broadcast()
    let deadline = Date(timeIntervalSinceNow: 30)
    while arrived < count {
      if !condition.wait(until: deadline) { return false }
    }
    return true
  }
}

/// A Katana 6 side effect that blocks its thread at a barrier, as one blocking in `Hydra.await` would.
struct BlockAtBarrier: ReturningSideEffect {
  let barrier: Barrier

  func sideEffect(_ context: any AnySideEffectContext) throws -> Bool {
    barrier.arriveAndWait()
  }
}
