import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

/// A Katana 6 blocking side effect dispatched from actor-isolated code (the main actor, an actor on a queue of
/// its own, a default actor) runs on a thread where `Hydra.await` may block, wherever the dispatch comes from:
/// inside a sent side effect (whose task runs bodies in place) as inside any other task.
///
/// XCTest, not Swift Testing: the synchronous test methods wait in the main run loop (``outcome(of:)``), so the
/// main actor runs while they wait, as in an app.
final class LegacyDispatchFromActorsXCTests: XCTestCase {
  override func invokeTest() {
    // On the pre-macOS 15 fallbacks too, in .ci/run's second run (KATANA_TASK_EXECUTOR_FALLBACKS=forced).
    onTaskExecutorPathOfThisRun { super.invokeTest() }
  }

  func testSentSideEffect_dispatchingABlockingSideEffectFromTheMainActor_runsIt() {
    let store = makeStore()
    let sent = Promise<Bool> {
      try await store.send(
        OnTheMainActor { context in
          let onMainThread = Thread.isMainThread
          try await context.dispatch(IncrementTwice())
          return onMainThread
        }
      ).value
    }
    XCTAssertEqual(value(of: sent), true, "dispatched from the main thread")
    XCTAssertEqual(store.state.counter, 2)
  }

  func testSentSideEffect_dispatchingABlockingReturningSideEffectFromTheMainActor_returnsItsValue() {
    let store = makeStore()
    let blocking = RunReturning { context in
      try Hydra.await(context.dispatch(Increment()))
      return Thread.isMainThread ? -1 : 7
    }
    let sent = Promise<Int> {
      try await store.send(OnTheMainActor { context in try await context.dispatch(blocking) }).value
    }
    XCTAssertEqual(value(of: sent), 7)
    XCTAssertEqual(store.state.counter, 1)
  }

  func testSentSideEffect_dispatchingABlockingSideEffectThroughTheStoreFromTheMainActor_runsIt() {
    let store = makeStore()
    let sent = Promise<Bool> {
      try await store.send(
        OnTheMainActor { _ in
          try await store.dispatch(IncrementTwice())
          return true
        }
      ).value
    }
    XCTAssertEqual(value(of: sent), true)
    XCTAssertEqual(store.state.counter, 2)
  }

  func testAwaitedFromATask_dispatchingABlockingSideEffectFromTheMainActor_runsIt() {
    let store = makeStore()
    let awaited = Promise<Bool> {
      try await store.dispatch(
        OnTheMainActor { context in
          try await context.dispatch(IncrementTwice())
          return true
        })
    }
    XCTAssertEqual(value(of: awaited), true)
    XCTAssertEqual(store.state.counter, 2)
  }

  func testSentSideEffect_dispatchingABlockingSideEffectFromAnActorOnAQueue_runsIt() {
    let store = makeStore()
    let caller = QueueActor()
    let sent = Promise<Bool> {
      try await store.send(FromQueueActor(caller: caller, effect: IncrementTwice())).value
    }
    XCTAssertEqual(value(of: sent), true, "dispatched from the actor's queue")
    XCTAssertEqual(store.state.counter, 2)
  }

  func testSentSideEffect_blockingSideEffectFromADefaultActor_doesNotHoldTheActorWhileItBlocks() {
    // The blocking body waits for a call to the actor that dispatched it: that call runs only if the actor
    // is free while the body blocks, as it is while any `await` waits.
    let store = makeStore()
    let caller = DefaultActor()
    let waitsForTheActor = Run { _ in
      try Hydra.await(failsafe(Promise<Int> { await caller.touch() }))
    }
    let sent = Promise<Int> {
      try await store.send(FromDefaultActor(caller: caller, effect: waitsForTheActor)).value
      return await caller.calls
    }
    XCTAssertEqual(value(of: sent), 2)
  }
}

// MARK: - Async side effects that dispatch from an actor

/// An `async` side effect that runs `body` on the main actor and returns its value.
private struct OnTheMainActor<Value: Sendable>: ReturningSideEffect {
  let body: @MainActor @Sendable (SideEffectContext<CounterState, AppDependencies>) async throws -> Value

  func sideEffect(_ context: any AnySideEffectContext) async throws -> Value {
    try await body(context.typed(CounterState.self, AppDependencies.self))
  }
}

/// An actor whose code runs on a serial queue of its own (a custom executor), where blocking is not allowed.
private actor QueueActor {
  let queue: MarkedQueue
  private let executor: QueueExecutor

  init() {
    queue = MarkedQueue("test.queue-actor")
    executor = QueueExecutor(queue: queue.queue)
  }

  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

  /// Dispatches `effect`; returns whether that ran on the actor's queue.
  func dispatch<E: SideEffect>(_ effect: E, with context: SideEffectContext<CounterState, AppDependencies>)
    async throws -> Bool where E.StateType == CounterState, E.Dependencies == AppDependencies
  {
    let onQueue = queue.isCurrent
    try await context.dispatch(effect)
    return onQueue
  }
}

/// Runs jobs on `queue`, one at a time.
private final class QueueExecutor: SerialExecutor {
  let queue: DispatchQueue

  init(queue: DispatchQueue) { self.queue = queue }

  func enqueue(_ job: UnownedJob) {
    let target = asUnownedSerialExecutor()
    queue.async { job.runSynchronously(on: target) }
  }
}

/// An `async` side effect that dispatches `effect` from `caller`; returns whether that ran on its queue.
private struct FromQueueActor<E: SideEffect>: ReturningSideEffect
where E.StateType == CounterState, E.Dependencies == AppDependencies {
  let caller: QueueActor
  let effect: E

  func sideEffect(_ context: any AnySideEffectContext) async throws -> Bool {
    try await caller.dispatch(effect, with: context.typed(CounterState.self, AppDependencies.self))
  }
}

/// A default actor (no executor of its own) that counts its calls.
private actor DefaultActor {
  private(set) var calls = 0

  func touch() -> Int {
    calls += 1
    return calls
  }

  func dispatch<E: SideEffect>(_ effect: E, with context: SideEffectContext<CounterState, AppDependencies>)
    async throws where E.StateType == CounterState, E.Dependencies == AppDependencies
  {
    calls += 1
    try await context.dispatch(effect)
  }
}

/// An `async` side effect that dispatches `effect` from `caller`.
private struct FromDefaultActor<E: SideEffect>: SideEffect
where E.StateType == CounterState, E.Dependencies == AppDependencies {
  let caller: DefaultActor
  let effect: E

  func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) async throws {
    try await caller.dispatch(effect, with: context)
  }
}
