import KatanaTestSupport
import Testing

@testable import Katana

/// Dependencies that dispatch from their initializer, the way a reachability monitor reports its first
/// status.
final class DispatchingDependencies: SideEffectDependencyContainer {
  let initialDispatch: Task<Void, any Error>
  let dispatch: AnyDispatch
  let getState: GetState

  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    self.dispatch = dispatch
    self.getState = getState
    initialDispatch = Task { _ = try await dispatch(Log(tag: "from dependencies")) }
  }
}

@Suite("Lifecycle", .timeLimit(.failsafeMinutes(3)))
struct LifecycleTests {
  @Test func dispatchesBeforeReady_keepTheirOrder() async throws {
    let gate = Gate()
    let enqueued = EventCounter()
    var configuration = StoreConfiguration()
    configuration.onMailboxEnqueue = { _ in enqueued.increment() }
    let store = TestStore(
      stateInitializer: {
        await gate.wait()
        return CounterState(log: ["initial"])
      }, configuration: configuration)
    let seen = Recorder<[String]>()
    store.send(Log(tag: "a"))
    let awaited = Task { try await store.dispatch(Log(tag: "b")) }
    await enqueued.wait(for: 2)
    let sideEffect = Task { try await store.dispatch(Script { context in seen.append(context.getState().log) }) }
    await enqueued.wait(for: 3)
    let last = store.send(Log(tag: "c"))
    #expect(!store.isReady)
    gate.open()
    try await awaited.value
    try await sideEffect.value
    try await last.value
    #expect(store.state.log == ["initial", "a", "b", "c"])
    #expect(seen.values.first.map { Array($0.prefix(3)) } == ["initial", "a", "b"])
  }

  @Test func dependencies_mayDispatchFromTheirInitializer() async throws {
    let store = Store<CounterState, DispatchingDependencies>(initialState: CounterState())
    try await store.dependencies.initialDispatch.value
    #expect(store.state.log == ["from dependencies"])
  }

  @Test func dependenciesInitializer_overridesTheContainer() async throws {
    let override = EmptySideEffectDependencyContainer()
    let store = Store<CounterState, EmptySideEffectDependencyContainer>(
      interceptors: [], stateInitializer: { CounterState(counter: 3) },
      dependenciesInitializer: { _, _ in override })
    try await store.waitUntilReady()
    #expect(store.dependencies === override)
    #expect(store.state.counter == 3)
  }

  @Test func failingStateInitializer_failsWaitingAndLaterDispatches() async throws {
    let gate = Gate()
    let enqueued = EventCounter()
    var configuration = StoreConfiguration()
    configuration.onMailboxEnqueue = { _ in enqueued.increment() }
    let store = TestStore(
      stateInitializer: {
        await gate.wait()
        throw TestError(code: 9)
      }, configuration: configuration)
    let waiting = Task { try await store.dispatch(Increment()) }
    await enqueued.wait(for: 1)
    let sent = store.send(Increment())
    gate.open()
    let expected = StoreError.startupFailed(TestError(code: 9))
    await #expect(throws: expected) { try await waiting.value }
    await #expect(throws: expected) { try await sent.value }
    await #expect(throws: expected) { try await store.waitUntilReady() }
    await #expect(throws: expected) { try await store.dispatch(IncrementTwice()) }
    await #expect(throws: expected) { try await store.send(Increment()).value }
    #expect(!store.isReady)
    #expect(store.state == CounterState())
  }

  @Test func stateInitializerDispatchingToItsOwnStore_throwsDeadlock() async throws {
    let box = LockedValue<TestStore?>(nil)
    let outcome = Recorder<String>()
    let gate = Gate()
    let store = TestStore(stateInitializer: {
      await gate.wait()
      do {
        try await box.current?.dispatch(Increment())
        outcome.append("dispatched")
      } catch let error as StoreError {
        if case .deadlock = error { outcome.append("deadlock") }
      }
      return CounterState()
    })
    box.withLock { $0 = store }
    gate.open()
    try await store.waitUntilReady()
    #expect(outcome.values == ["deadlock"])
    box.withLock { $0 = nil }
  }

  @Test func shutdown_failsLaterDispatches_andQueuedOnes() async throws {
    let gate = Gate()
    let started = Gate()
    let store = try await makeReadyStore(interceptors: [gatingInterceptor(tag: "first", gate: gate, started: started)])
    let first = Task { try await store.dispatch(Log(tag: "first")) }
    await started.wait()
    let queued = store.send(Log(tag: "queued"))
    await store.shutdown()
    await #expect(throws: StoreError.storeShutDown) { try await queued.value }
    gate.open()
    await #expect(throws: StoreError.storeShutDown) { try await first.value }
    await #expect(throws: StoreError.storeShutDown) { try await store.dispatch(Increment()) }
    await #expect(throws: StoreError.storeShutDown) { try await store.dispatch(IncrementTwice()) }
    await #expect(throws: StoreError.storeShutDown) { _ = try await store.dispatch(AddAndRead(by: 1)) }
    await #expect(throws: StoreError.storeShutDown) { try await store.send(Increment()).value }
    await #expect(throws: StoreError.storeShutDown) { try await store.waitUntilReady() }
    #expect(!store.isReady)
    #expect(store.state.log == [])
    await store.shutdown()  // Idempotent.
  }

  @Test func shutdown_cancelsStoreOwnedWork_andWaitsForIt() async throws {
    let store = try await makeReadyStore()
    let started = Gate()
    let cancelled = Gate()
    let finished = Recorder<String>()
    let handle = store.send(
      Script { _ in
        defer { finished.append("done") }
        try await waitForCancellation(started: started, cancelled: cancelled)
      })
    await started.wait()
    await store.shutdown()
    #expect(finished.values == ["done"])
    await #expect(throws: CancellationError.self) { try await handle.value }
    #expect(store.core.ownedTaskCount == 0)
  }

  @Test func shutdown_finishesStreams_andDropsListeners() async throws {
    let store = try await makeReadyStore()
    let calls = Recorder<Int>()
    store.addListener { _, new in calls.append(new.counter) }
    var iterator = store.states().makeAsyncIterator()
    #expect(await iterator.next()?.counter == 0)
    await store.shutdown()
    #expect(await iterator.next() == nil)
    #expect(store.core.observerCount == 0)
    var late = store.states().makeAsyncIterator()
    #expect(await late.next() == nil)
  }

  @Test func releasedStore_deinits_withAListenerAndAStreamAttached_andTheStreamFinishes() async throws {
    weak var weakStore: TestStore?
    let consumer: Task<[Int], Never>
    let subscribed = Gate()
    do {
      let store = try await makeReadyStore()
      weakStore = store
      store.addListener { _, _ in }
      let stream = store.values(of: \.counter, buffering: .bufferingNewest(10))
      consumer = Task {
        var values: [Int] = []
        var iterator = stream.makeAsyncIterator()
        subscribed.open()
        while let value = await iterator.next() { values.append(value) }
        return values
      }
      await subscribed.wait()
      try await store.dispatch(Increment())
    }
    #expect(weakStore == nil)
    let values = await consumer.value
    #expect(values == [0, 1])
  }

  @Test func dependencyContainerOutlivingTheStore_getsErrors() async throws {
    var store: TestStore? = try await makeReadyStore(CounterState(counter: 4))
    let dependencies = try #require(store?.dependencies)
    store = nil
    await #expect(throws: StoreError.storeShutDown) { _ = try await dependencies.dispatch(Increment()) }
    #expect(dependencies.getState() is CounterState)
  }
}
