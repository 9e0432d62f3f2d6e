import KatanaTestSupport
import Testing

@testable import Katana

/// An effect id for these tests.
struct EffectTestID: Hashable, Sendable {
  var value = 0
}

/// A context that no store created, as a hand-written test double would be.
struct DetachedContext: AnySideEffectContext {
  var anyDependencies: any SideEffectDependencyContainer { EmptySideEffectDependencyContainer() }
  var clock: any Clock<Duration> { ContinuousClock() }
  func getAnyState() -> any State { CounterState() }
  func anyDispatch(_ dispatchable: any Dispatchable) async throws -> any Sendable { () }
  func anySend(_ dispatchable: any Dispatchable) -> DispatchHandle<any Sendable> { .failed(TestError(code: 0)) }
}

/// A task-local value, to check what a run under an id inherits from its caller.
enum CallerTaskLocal {
  @TaskLocal static var tag: String?
}

/// The context of a side effect, kept to call the tools from outside a side effect's body.
func savedContext(of store: TestStore) async throws -> SideEffectContext<CounterState, TestDependencies> {
  let saved = LockedValue<SideEffectContext<CounterState, TestDependencies>?>(nil)
  try await store.dispatch(Script { context in saved.withLock { $0 = context } })
  return try #require(saved.current)
}

/// Sends a side effect that runs `waitForCancellation` under `id`, and returns its handle once the operation
/// has started.
func sendRunWaitingForCancellation(
  _ store: TestStore, id: EffectTestID, cancelInFlight: Bool = false, cancelled: Gate = Gate()
) async -> DispatchHandle<Void> {
  let started = Gate()
  let handle = store.send(
    Script { context in
      try await context.run(id: id, cancelInFlight: cancelInFlight) {
        try await waitForCancellation(started: started, cancelled: cancelled)
      }
    })
  await started.wait()
  return handle
}

@Suite("Cancellation by id", .timeLimit(.failsafeMinutes(3)))
struct CancellationByIDTests {
  @Test func run_returnsTheOperationsValue_andLeavesNoEntry() async throws {
    let store = try await makeReadyStore()
    let value = try await store.dispatch(
      ReturningScript { context in
        try await context.run(id: EffectTestID()) {
          try await context.dispatch(AddAndRead(by: 2))
        }
      })
    #expect(value == 2)
    #expect(store.runningEffectCount == 0)
  }

  @Test func run_operationError_reachesTheCallerUnchanged() async throws {
    let store = try await makeReadyStore()
    await #expect(throws: TestError(code: 7)) {
      try await store.dispatch(
        Script { context in try await context.run(id: EffectTestID()) { throw TestError(code: 7) } })
    }
    #expect(store.runningEffectCount == 0)
  }

  @Test func cancelInFlight_cancelsExactlyTheOlderRun() async throws {
    let store = try await makeReadyStore()
    let older = await sendRunWaitingForCancellation(store, id: EffectTestID())
    let otherCancelled = Gate()
    let other = await sendRunWaitingForCancellation(store, id: EffectTestID(value: 1), cancelled: otherCancelled)
    let newerStarted = Gate()
    let release = Gate()
    let newer = store.send(
      ReturningScript { context in
        try await context.run(id: EffectTestID(), cancelInFlight: true) {
          newerStarted.open()
          await release.wait()
          return "newer"
        }
      })
    await #expect(throws: CancellationError.self) { try await older.value }
    await newerStarted.wait()
    release.open()
    #expect(try await newer.value == "newer")
    #expect(!otherCancelled.isOpen)
    #expect(store.runningEffectCount == 1)
    store.cancel(id: EffectTestID(value: 1))
    await #expect(throws: CancellationError.self) { try await other.value }
    #expect(store.runningEffectCount == 0)
  }

  @Test func run_withoutCancelInFlight_leavesTheRunsUnderTheSameIDRunning() async throws {
    let store = try await makeReadyStore()
    let olderCancelled = Gate()
    let older = await sendRunWaitingForCancellation(store, id: EffectTestID(), cancelled: olderCancelled)
    let value = try await store.dispatch(
      ReturningScript { context in try await context.run(id: EffectTestID()) { "second" } })
    #expect(value == "second")
    #expect(!olderCancelled.isOpen)
    #expect(store.runningEffectCount == 1)
    store.cancel(id: EffectTestID())
    await #expect(throws: CancellationError.self) { try await older.value }
  }

  @Test func cancelFromTheStore_cancelsEveryRunUnderTheID_andOnlyThose() async throws {
    let store = try await makeReadyStore()
    let first = await sendRunWaitingForCancellation(store, id: EffectTestID())
    let second = await sendRunWaitingForCancellation(store, id: EffectTestID())
    let otherCancelled = Gate()
    let other = await sendRunWaitingForCancellation(store, id: EffectTestID(value: 1), cancelled: otherCancelled)
    store.cancel(id: EffectTestID())
    await #expect(throws: CancellationError.self) { try await first.value }
    await #expect(throws: CancellationError.self) { try await second.value }
    #expect(!otherCancelled.isOpen)
    store.cancel(id: EffectTestID(value: 1))
    await #expect(throws: CancellationError.self) { try await other.value }
    #expect(store.runningEffectCount == 0)
  }

  @Test func cancelFromASideEffect_cancelsTheRun() async throws {
    let store = try await makeReadyStore()
    let running = await sendRunWaitingForCancellation(store, id: EffectTestID())
    try await store.dispatch(Script { context in context.cancel(id: EffectTestID()) })
    await #expect(throws: CancellationError.self) { try await running.value }
    #expect(store.runningEffectCount == 0)
  }

  @Test func idsOfDifferentTypes_areDifferent_evenWithEqualHashes() async throws {
    struct FirstID: Hashable {}
    struct SecondID: Hashable {}
    #expect(FirstID().hashValue == SecondID().hashValue)  // what makes this case worth testing
    let store = try await makeReadyStore()
    let started = Gate()
    let cancelled = Gate()
    let running = store.send(
      Script { context in
        try await context.run(id: SecondID()) { try await waitForCancellation(started: started, cancelled: cancelled) }
      })
    await started.wait()
    store.cancel(id: FirstID())
    try await store.dispatch(Script { context in try await context.run(id: FirstID(), cancelInFlight: true) {} })
    #expect(!cancelled.isOpen)
    store.cancel(id: SecondID())
    await #expect(throws: CancellationError.self) { try await running.value }
  }

  @Test func cancellingAnIDWithNothingUnderIt_doesNothing() async throws {
    let store = try await makeReadyStore()
    store.cancel(id: EffectTestID())
    try await store.dispatch(Script { context in context.cancel(id: "nothing here") })
    #expect(store.runningEffectCount == 0)
    try await store.dispatch(Increment())
    #expect(store.state.counter == 1)
  }

  @Test func equalIDsInTwoStores_doNotInterfere() async throws {
    let first = try await makeReadyStore()
    let second = try await makeReadyStore()
    let firstCancelled = Gate()
    let running = await sendRunWaitingForCancellation(first, id: EffectTestID(), cancelled: firstCancelled)
    let replaced = await sendRunWaitingForCancellation(second, id: EffectTestID())
    let replacing = await sendRunWaitingForCancellation(second, id: EffectTestID(), cancelInFlight: true)
    await #expect(throws: CancellationError.self) { try await replaced.value }
    second.cancel(id: EffectTestID())
    await #expect(throws: CancellationError.self) { try await replacing.value }
    #expect(!firstCancelled.isOpen)
    #expect(first.runningEffectCount == 1)
    first.cancel(id: EffectTestID())
    await #expect(throws: CancellationError.self) { try await running.value }
  }

  @Test func cancellingTheCaller_cancelsTheRun() async throws {
    let store = try await makeReadyStore()
    let started = Gate()
    let cancelled = Gate()
    let caller = Task {
      try await store.dispatch(
        Script { context in
          try await context.run(id: EffectTestID()) {
            try await waitForCancellation(started: started, cancelled: cancelled)
          }
        })
    }
    await started.wait()
    caller.cancel()
    await cancelled.wait()
    await #expect(throws: CancellationError.self) { try await caller.value }
    #expect(store.runningEffectCount == 0)
  }

  @Test func cancelledRun_throwsCancellationError_whateverTheOperationReturnsOrThrows() async throws {
    let store = try await makeReadyStore()
    let returnedStarted = Gate()
    let returned = store.send(
      ReturningScript { context in
        try await context.run(id: EffectTestID()) { () async -> String in
          _ = try? await waitForCancellation(started: returnedStarted, cancelled: Gate())
          return "finished anyway"
        }
      })
    let threwStarted = Gate()
    let threw = store.send(
      Script { context in
        try await context.run(id: EffectTestID()) {
          _ = try? await waitForCancellation(started: threwStarted, cancelled: Gate())
          throw TestError(code: 1)
        }
      })
    await returnedStarted.wait()
    await threwStarted.wait()
    store.cancel(id: EffectTestID())
    await #expect(throws: CancellationError.self) { try await returned.value }
    await #expect(throws: CancellationError.self) { try await threw.value }
  }

  @Test func alreadyCancelledCaller_neitherStartsTheOperationNorCancelsInFlight() async throws {
    let store = try await makeReadyStore()
    let olderCancelled = Gate()
    let older = await sendRunWaitingForCancellation(store, id: EffectTestID(), cancelled: olderCancelled)
    let started = Gate()
    let caller = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await store.dispatch(
        Script { context in try await context.run(id: EffectTestID(), cancelInFlight: true) { started.open() } })
    }
    await #expect(throws: CancellationError.self) { try await caller.value }
    #expect(!started.isOpen)
    #expect(!olderCancelled.isOpen)
    store.cancel(id: EffectTestID())
    await #expect(throws: CancellationError.self) { try await older.value }
  }

  @Test func shutdown_cancelsRunsUnderAnID_evenAwaitedOnes_andLaterRunsThrowStoreShutDown() async throws {
    let store = try await makeReadyStore()
    let registry = try #require(EffectRegistry.of(store.core))
    let saved = LockedValue<SideEffectContext<CounterState, TestDependencies>?>(nil)
    let started = Gate()
    let awaited = Task {
      try await store.dispatch(
        Script { context in
          saved.withLock { $0 = context }
          try await context.run(id: EffectTestID()) {
            try await waitForCancellation(started: started, cancelled: Gate())
          }
        })
    }
    let sent = await sendRunWaitingForCancellation(store, id: EffectTestID(value: 1))
    await started.wait()
    await store.shutdown()
    await #expect(throws: CancellationError.self) { try await awaited.value }
    await #expect(throws: CancellationError.self) { try await sent.value }
    #expect(registry.entryCount == 0)
    let context = try #require(saved.current)
    await #expect(throws: StoreError.storeShutDown) { try await context.run(id: EffectTestID()) { 1 } }
    #expect(store.runningEffectCount == 0)
  }

  @Test func run_operationKeepsTheCallersPriorityAndTaskLocalValues() async throws {
    let store = try await makeReadyStore()
    let context = try await savedContext(of: store)
    let seen = Recorder<(priority: TaskPriority, tag: String?)>()
    let caller = Task(priority: .low) {
      try await CallerTaskLocal.$tag.withValue("the caller's") {
        try await context.run(id: EffectTestID()) { seen.append((Task.currentPriority, CallerTaskLocal.tag)) }
      }
    }
    // Waits for the operation's report before awaiting the caller: awaiting a task raises its priority (and
    // that of the task it awaits) to the waiter's, which would hide a run that did not inherit `.low`.
    await seen.wait(forCount: 1)
    try await caller.value
    let (priority, tag) = try #require(seen.values.first)
    #expect(priority == .low)
    #expect(tag == "the caller's")
    #expect(store.runningEffectCount == 0)
  }

  @Test(arguments: [false, true])
  func everyTool_calledAfterShutdown_throwsStoreShutDown(registryInUseBeforeShutdown: Bool) async throws {
    let store = try await makeReadyStore()
    let context = try await savedContext(of: store)
    if registryInUseBeforeShutdown {
      #expect(try await context.run(id: EffectTestID()) { 1 } == 1)
    }
    await store.shutdown()
    // If a tool ran instead of throwing, each of these would end with another outcome, never hang: the
    // operations return at once, the timer's first tick throws a `TestError` after a millisecond.
    await #expect(throws: StoreError.storeShutDown) { try await context.run(id: EffectTestID()) { 1 } }
    await #expect(throws: StoreError.storeShutDown) {
      try await context.debounce(id: EffectTestID(), for: .zero) { 1 }
    }
    await #expect(throws: StoreError.storeShutDown) {
      try await context.throttle(id: EffectTestID(), for: .seconds(1), mode: .leading) { 1 }
    }
    await #expect(throws: StoreError.storeShutDown) {
      try await context.throttle(id: EffectTestID(), for: .seconds(1), mode: .latest) { 1 }
    }
    await #expect(throws: StoreError.storeShutDown) {
      try await context.timer(id: EffectTestID(), every: .milliseconds(1)) { throw TestError(code: 1) }
    }
    await #expect(throws: StoreError.storeShutDown) {
      try await context.forEach(AsyncStream<Int> { $0.finish() }, id: EffectTestID()) { _ in }
    }
    context.cancel(id: EffectTestID())  // documented as a no-op after shutdown
    store.cancel(id: EffectTestID())
    #expect(store.runningEffectCount == 0)
  }

  @Test func toolsOnAContextWithoutStore_throwContextWithoutStore() async throws {
    let context = DetachedContext()
    await #expect(throws: EffectError.contextWithoutStore(String(reflecting: DetachedContext.self))) {
      try await context.run(id: EffectTestID()) { 1 }
    }
    await #expect(throws: EffectError.self) {
      try await context.forEach(AsyncStream<Int> { $0.finish() }, id: EffectTestID()) { _ in }
    }
    context.cancel(id: EffectTestID())  // nothing to cancel, and no crash
  }
}

@Suite("Cancellation by id: stress", .timeLimit(.failsafeMinutes(3)))
struct CancellationByIDStressTests {
  enum Step: Sendable {
    case run(id: Int, cancelInFlight: Bool, yields: Int)
    case cancel(id: Int)
  }

  enum Outcome: Sendable {
    case completed
    case cancelled
    case cancelCall
  }

  static func plan(seed: UInt64, count: Int) -> [Step] {
    var generator = SeededGenerator(seed: seed)
    return (0..<count).map { _ in
      let id = Int.random(in: 0..<16, using: &generator)
      if Int.random(in: 0..<10, using: &generator) == 0 { return .cancel(id: id) }
      return .run(
        id: id, cancelInFlight: Int.random(in: 0..<4, using: &generator) == 0,
        yields: Int.random(in: 0..<4, using: &generator))
    }
  }

  static func perform(_ step: Step, store: TestStore) async throws -> Outcome {
    switch step {
    case .cancel(let id):
      store.cancel(id: EffectTestID(value: id))
      return .cancelCall
    case .run(let id, let cancelInFlight, let yields):
      do {
        try await store.dispatch(
          Script { context in
            try await context.run(id: EffectTestID(value: id), cancelInFlight: cancelInFlight) {
              for _ in 0..<yields { await Task.yield() }
              try await context.dispatch(Increment())
            }
          })
        return .completed
      } catch is CancellationError {
        return .cancelled
      }
    }
  }

  @Test(arguments: [UInt64(1), 2, 3])
  func manyConcurrentRunsWithRandomIDs_finishWithNoLeakedEntries(seed: UInt64) async throws {
    let store = try await makeReadyStore()
    let plan = Self.plan(seed: seed, count: 400)
    let outcomes = try await withThrowingTaskGroup(of: Outcome.self) { group in
      for step in plan {
        group.addTask { try await Self.perform(step, store: store) }
      }
      return try await group.reduce(into: [Outcome]()) { $0.append($1) }
    }
    let runs = plan.filter { if case .run = $0 { true } else { false } }.count
    let completed = outcomes.filter { if case .completed = $0 { true } else { false } }.count
    let cancelled = outcomes.filter { if case .cancelled = $0 { true } else { false } }.count
    #expect(completed + cancelled == runs)
    // A completed run dispatched its increment; a cancelled one may have, just before being cancelled.
    #expect(store.state.counter >= completed)
    #expect(store.state.counter <= runs)
    #expect(store.runningEffectCount == 0)
  }

  @Test func manyConcurrentRuns_withShutdownHalfway_finishWithNoLeakedEntries() async throws {
    let store = try await makeReadyStore()
    let registry = try #require(EffectRegistry.of(store.core))
    let plan = Self.plan(seed: 42, count: 300)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (index, step) in plan.enumerated() {
        group.addTask {
          do {
            _ = try await Self.perform(step, store: store)
          } catch StoreError.storeShutDown {
            // Dispatched, or reached a dispatch, after the shutdown.
          }
        }
        if index == plan.count / 2 {
          group.addTask { await store.shutdown() }
        }
      }
      try await group.waitForAll()
    }
    #expect(registry.entryCount == 0)
  }
}
