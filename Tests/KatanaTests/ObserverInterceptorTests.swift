import Foundation
import KatanaTestSupport
import Testing

@testable import Katana

// MARK: - Items the observer dispatches

/// Logs the observed item's type and the counter before and after it; nil (nothing dispatched) for a `Log`
/// tagged "skip".
struct RecordDispatch: StateUpdater, DispatchObserverDispatchable {
  let entry: String

  init?(dispatchedItem: any Dispatchable, prevState: any State, currentState: any State) {
    if let log = dispatchedItem as? Log, log.tag == "skip" { return nil }
    guard let prev = prevState as? CounterState, let current = currentState as? CounterState else { return nil }
    entry = "\(type(of: dispatchedItem)) \(prev.counter)->\(current.counter)"
  }

  func updateState(_ state: inout CounterState) { state.log.append(entry) }
}

/// A second follow-up type, to check that entries and types act independently.
struct RecordDispatchAgain: StateUpdater, DispatchObserverDispatchable {
  init?(dispatchedItem: any Dispatchable, prevState: any State, currentState: any State) {}
  func updateState(_ state: inout CounterState) { state.log.append("again") }
}

/// Logs the counter before and after the observed updater.
struct RecordStateChange: StateUpdater, StateObserverDispatchable {
  let entry: String

  init?(prevState: any State, currentState: any State) {
    guard let prev = prevState as? CounterState, let current = currentState as? CounterState else { return nil }
    entry = "changed \(prev.counter)->\(current.counter)"
  }

  func updateState(_ state: inout CounterState) { state.log.append(entry) }
}

/// A state-change follow-up that never dispatches.
struct NeverOnStateChange: StateUpdater, StateObserverDispatchable {
  init?(prevState: any State, currentState: any State) { nil }
  func updateState(_ state: inout CounterState) { state.log.append("never") }
}

struct StartLog: StateUpdater, OnStartObserverDispatchable {
  func updateState(_ state: inout CounterState) { state.log.append("onStart") }
}

struct NeverOnStart: StateUpdater, OnStartObserverDispatchable {
  init?() { nil }
  func updateState(_ state: inout CounterState) { state.log.append("never") }
}

/// Logs the notification's "tag" (default "noted"); nil when its "skip" is true. Records each call in the
/// `Recorder<String>` posted as the notification's object, if any.
struct Noted: StateUpdater, NotificationObserverDispatchable {
  let tag: String

  init?(notification: Notification) {
    (notification.object as? Recorder<String>)?.append("observed")
    if notification.userInfo?["skip"] as? Bool == true { return nil }
    tag = notification.userInfo?["tag"] as? String ?? "noted"
  }

  func updateState(_ state: inout CounterState) { state.log.append(tag) }
}

/// A side effect that signals it started, then waits for a gate, so a test can act while it runs.
struct Held: SideEffect {
  let started: Gate
  let gate: Gate
  let followUps: Recorder<String>

  func sideEffect(_ context: SideEffectContext<CounterState, TestDependencies>) async throws {
    started.open()
    await gate.wait()
  }
}

/// Records, in the observed `Held` item, that the observer created it.
struct HeldFollowUp: StateUpdater, DispatchObserverDispatchable {
  init?(dispatchedItem: any Dispatchable, prevState: any State, currentState: any State) {
    (dispatchedItem as? Held)?.followUps.append("created")
  }
  func updateState(_ state: inout CounterState) { state.log.append("held follow-up") }
}

/// Follows an observed item, up to a depth of 3: an `onDispatch(Chained.self, [Chained.self])` entry
/// observes the items it dispatched itself.
struct Chained: StateUpdater, DispatchObserverDispatchable {
  let depth: Int

  init?(dispatchedItem: any Dispatchable, prevState: any State, currentState: any State) {
    let previous = (dispatchedItem as? Chained)?.depth ?? 0
    guard previous < 3 else { return nil }
    depth = previous + 1
  }

  func updateState(_ state: inout CounterState) { state.log.append("chained \(depth)") }
}

/// A context that is not a store's, the way a unit test of an interceptor might fake one.
final class FakeContext: AnySideEffectContext {
  let sent = Recorder<String>()
  let anyDependencies: any SideEffectDependencyContainer = EmptySideEffectDependencyContainer()
  var clock: any Clock<Duration> { ContinuousClock() }
  func getAnyState() -> any State { CounterState() }
  func anyDispatch(_ dispatchable: any Dispatchable) async throws -> any Sendable { () }
  func anySend(_ dispatchable: any Dispatchable) -> DispatchHandle<any Sendable> {
    sent.append("\(type(of: dispatchable))")
    return .failed(CancellationError())
  }
}

// MARK: - Helpers

/// A ready store with activity tracking on, so that tests can wait for the items observers sent.
private func makeObservedStore(
  _ items: [ObserverInterceptor.ObserverType], center: NotificationCenter = NotificationCenter(),
  extra: [StoreInterceptor] = []
) async throws -> TestStore {
  try await makeTrackedStore(interceptors: [ObserverInterceptor.observe(items, notificationCenter: center)] + extra)
}

private let noted = Notification.Name("KatanaTests.noted")

// MARK: - Tests

@Suite("ObserverInterceptor", .timeLimit(.failsafeMinutes(3)))
struct ObserverInterceptorTests {
  // MARK: onDispatch

  @Test func onDispatch_dispatchesAfterItemsOfExactlyTheObservedType() async throws {
    let store = try await makeObservedStore([
      .onDispatch(Increment.self, [RecordDispatch.self]), .onDispatch(BaseLog.self, [RecordDispatch.self]),
    ])
    try await store.dispatch(Increment())
    try await store.dispatch(Add(by: 5))
    try await store.dispatch(DerivedLog(tag: "derived"))
    try await store.dispatch(BaseLog(tag: "base"))
    try await store.waitUntilIdle()
    #expect(store.state.log == ["Increment 0->1", "derived", "base", "BaseLog 6->6"])
  }

  @Test func onDispatch_observesSideEffects_withTheStatesAroundTheirBody() async throws {
    let store = try await makeObservedStore([.onDispatch(IncrementTwice.self, [RecordDispatch.self])])
    try await store.dispatch(Increment())
    try await store.dispatch(IncrementTwice())
    try await store.waitUntilIdle()
    #expect(store.state.log == ["IncrementTwice 1->3"])
  }

  @Test func onDispatch_whenHandlingThrows_dispatchesNothing() async throws {
    let rejecting = interceptor { item, next, _ in
      if item is Increment { throw TestError(code: 1) }
      try await next(item)
    }
    let store = try await makeObservedStore(
      [.onDispatch(Fail.self, [RecordDispatch.self]), .onDispatch(Increment.self, [RecordDispatch.self])],
      extra: [rejecting])
    await #expect(throws: TestError(code: 4)) { try await store.dispatch(Fail(code: 4)) }
    await #expect(throws: TestError(code: 1)) { try await store.dispatch(Increment()) }
    try await store.waitUntilIdle()
    #expect(store.state.log == [])
  }

  // MARK: onStateChange

  @Test func onStateChange_evaluatesTheClosureForEveryStateUpdater_evenWithoutAChange() async throws {
    let evaluated = Recorder<String>()
    let store = try await makeObservedStore([
      .onStateChange(
        { prev, current in
          evaluated.append("\((prev as? CounterState)?.counter ?? -1)->\((current as? CounterState)?.counter ?? -1)")
          return false
        }, [RecordStateChange.self])
    ])
    try await store.dispatch(Increment())
    try await store.dispatch(SetCounter(value: 1))
    try await store.dispatch(AppendItem(value: 0))
    #expect(evaluated.values == ["0->1", "1->1", "1->1"])
  }

  @Test func onStateChange_neverEvaluatesTheClosureForSideEffects() async throws {
    let evaluated = Recorder<String>()
    let store = try await makeObservedStore([
      .onStateChange(
        { _, _ in
          evaluated.append("evaluated")
          return false
        }, [RecordStateChange.self])
    ])
    try await store.dispatch(Script { _ in })
    _ = try await store.dispatch(ReturningScript { _ in 1 })
    #expect(evaluated.values.isEmpty)
    try await store.dispatch(IncrementTwice())  // Only its two nested updaters count.
    #expect(evaluated.values.count == 2)
  }

  @Test func onStateChange_dispatchesWhenTheClosureReturnsTrue() async throws {
    let store = try await makeObservedStore([
      .onStateChange(
        { prev, current in (prev as? CounterState)?.counter != (current as? CounterState)?.counter },
        [
          RecordStateChange.self
        ])
    ])
    try await store.dispatch(Increment())
    try await store.dispatch(AppendItem(value: 0))
    try await store.dispatch(Increment(by: 2))
    try await store.waitUntilIdle()
    #expect(store.state.log == ["changed 0->1", "changed 1->3"])
  }

  @Test func onStateChange_whenHandlingThrows_doesNotEvaluateTheClosure() async throws {
    let evaluated = Recorder<String>()
    let rejecting = interceptor { item, next, _ in
      if item is Increment { throw TestError(code: 1) }
      try await next(item)
    }
    let store = try await makeObservedStore(
      [
        .onStateChange(
          { _, _ in
            evaluated.append("evaluated")
            return true
          }, [RecordStateChange.self])
      ], extra: [rejecting])
    await #expect(throws: TestError(code: 1)) { try await store.dispatch(Increment()) }
    #expect(evaluated.values.isEmpty)
  }

  @Test func typedStateChange_passesTypedStates_andIsFalseForAnotherStateType() {
    let evaluated = Recorder<String>()
    let observer = ObserverInterceptor.ObserverType.typedStateChange { (prev: CounterState, current: CounterState) in
      evaluated.append("\(prev.counter)->\(current.counter)")
      return true
    }
    #expect(observer(CounterState(counter: 1), CounterState(counter: 2)))
    #expect(!observer(OtherState(), CounterState()))
    #expect(!observer(CounterState(), OtherState()))
    #expect(evaluated.values == ["1->2"])
  }

  // MARK: Rules shared by every kind

  @Test func failableInitializerReturningNil_dispatchesNothing() async throws {
    let center = NotificationCenter()
    let store = try await makeObservedStore(
      [
        .onStart([NeverOnStart.self]),
        .onStateChange({ _, _ in true }, [NeverOnStateChange.self]),
        .onDispatch(Log.self, [RecordDispatch.self]),
        .onNotification(noted, [Noted.self]),
      ], center: center)
    try await store.dispatch(Log(tag: "skip"))
    center.post(name: noted, object: nil, userInfo: ["skip": true])
    try await store.waitUntilIdle()
    #expect(store.state.log == ["skip"])
    // The same entries do dispatch when the initializers return an item.
    try await store.dispatch(Log(tag: "go"))
    center.post(name: noted, object: nil, userInfo: ["tag": "posted"])
    try await store.waitUntilIdle()
    #expect(store.state.log == ["skip", "go", "Log 0->0", "posted"])
  }

  @Test func entriesOfTheSameKind_actIndependently_inEntryOrder() async throws {
    let store = try await makeObservedStore([
      .onDispatch(Increment.self, [RecordDispatch.self, RecordDispatchAgain.self]),
      .onDispatch(Increment.self, [RecordDispatch.self]),
      .onStart([StartLog.self]),
      .onStart([StartLog.self]),
    ])
    try await store.dispatch(Increment())
    try await store.waitUntilIdle()
    #expect(store.state.log == ["onStart", "onStart", "Increment 0->1", "again", "Increment 0->1"])
  }

  @Test func followUps_goThroughEveryInterceptor_theObserverIncluded() async throws {
    let seen = Recorder<String>()
    let store = try await makeTrackedStore(interceptors: [
      recordingInterceptor("before", into: seen),
      ObserverInterceptor.observe([
        .onDispatch(Increment.self, [Chained.self]), .onDispatch(Chained.self, [Chained.self]),
      ]),
      recordingInterceptor("after", into: seen),
    ])
    try await store.dispatch(Increment())
    try await store.waitUntilIdle()
    // "chained 2" and "chained 3" exist only because the observer saw the items it dispatched itself.
    #expect(store.state.log == ["chained 1", "chained 2", "chained 3"])
    #expect(
      seen.values == [
        "before:Increment", "after:Increment", "before:Chained", "after:Chained", "before:Chained", "after:Chained",
        "before:Chained", "after:Chained",
      ])
  }

  // MARK: onStart and start-up

  @Test func onStart_runsAfterItemsDispatchedBeforeReady_andNotificationsDuringStartupAfterIt() async throws {
    let center = NotificationCenter()
    let gate = Gate()
    let enqueued = EventCounter()
    var configuration = StoreConfiguration()
    configuration.tracksActivity = true
    configuration.onMailboxEnqueue = { _ in enqueued.increment() }
    // Interceptors are initialised in array order: this one posts once the observer has registered.
    let postingAtStartup: StoreInterceptor = { _ in
      center.post(name: noted, object: nil, userInfo: ["tag": "posted during start-up"])
      return { next in next }
    }
    let store = TestStore(
      interceptors: [
        ObserverInterceptor.observe(
          [.onStart([StartLog.self]), .onNotification(noted, [Noted.self])], notificationCenter: center),
        postingAtStartup,
      ],
      stateInitializer: {
        await gate.wait()
        return CounterState(log: ["initial"])
      }, configuration: configuration)
    store.send(Log(tag: "a"))
    let awaited = Task { try await store.dispatch(Log(tag: "b")) }
    await enqueued.wait(for: 2)
    store.send(Log(tag: "c"))
    gate.open()
    try await store.waitUntilReady()
    try await store.dispatch(Log(tag: "after ready"))
    try await awaited.value
    try await store.waitUntilIdle()
    #expect(store.state.log == ["initial", "a", "b", "c", "onStart", "posted during start-up", "after ready"])
  }

  // MARK: onNotification

  @Test func onNotification_dispatchesOnEachPostToTheGivenCenter() async throws {
    let center = NotificationCenter()
    let store = try await makeObservedStore([.onNotification(noted, [Noted.self])], center: center)
    center.post(name: noted, object: nil, userInfo: ["tag": "first"])
    NotificationCenter.default.post(name: noted, object: nil, userInfo: ["tag": "default center"])
    center.post(name: noted, object: nil, userInfo: ["tag": "second"])
    try await store.waitUntilIdle()
    #expect(store.state.log == ["first", "second"])
  }

  @Test func onNotification_postedBeforeStartupReachesTheInterceptor_isNotObserved() async throws {
    let center = NotificationCenter()
    let observed = Recorder<String>()
    let gate = Gate()
    var configuration = StoreConfiguration()
    configuration.tracksActivity = true
    let store = TestStore(
      interceptors: [ObserverInterceptor.observe([.onNotification(noted, [Noted.self])], notificationCenter: center)],
      stateInitializer: {
        center.post(name: noted, object: observed, userInfo: ["tag": "during the state initializer"])
        await gate.wait()
        return CounterState()
      }, configuration: configuration)
    center.post(name: noted, object: observed, userInfo: ["tag": "right after init"])
    gate.open()
    try await store.waitUntilReady()
    center.post(name: noted, object: observed, userInfo: ["tag": "once ready"])
    try await store.waitUntilIdle()
    #expect(observed.values == ["observed"])
    #expect(store.state.log == ["once ready"])
  }

  @Test func onNotification_afterShutdown_isNotObserved() async throws {
    let center = NotificationCenter()
    let observed = Recorder<String>()
    let store = try await makeObservedStore([.onNotification(noted, [Noted.self])], center: center)
    center.post(name: noted, object: observed)
    try await store.waitUntilIdle()
    await store.shutdown()
    center.post(name: noted, object: observed)
    #expect(observed.values == ["observed"])
    #expect(store.state.log == ["noted"])
  }

  @Test func onNotification_afterTheStoreIsReleased_isNotObserved_andTheStoreIsDeallocated() async throws {
    let center = NotificationCenter()
    let observed = Recorder<String>()
    weak var weakStore: TestStore?
    do {
      let store = try await makeObservedStore(
        [.onNotification(noted, [Noted.self]), .onDispatch(Log.self, [RecordDispatch.self])], center: center)
      weakStore = store
      center.post(name: noted, object: observed)
      try await store.waitUntilIdle()
      #expect(store.state.log == ["noted"])
    }
    #expect(weakStore == nil)
    center.post(name: noted, object: observed)
    #expect(observed.values == ["observed"])
  }

  @Test func observe_withAContextThatIsNotAStore_keepsObservingUntilTheChainIsReleased() async throws {
    let center = NotificationCenter()
    let context = FakeContext()
    var chain: StoreInterceptorNext? = ObserverInterceptor.observe(
      [.onNotification(noted, [Noted.self])], notificationCenter: center)(context)({ _ in })
    center.post(name: noted, object: nil)
    try await chain?(Increment())
    chain = nil
    center.post(name: noted, object: nil)
    #expect(context.sent.values == ["Noted"])
  }

  // MARK: Shutdown

  @Test func followUps_whenTheStoreShutsDownMeanwhile_areDropped() async throws {
    let store = try await makeObservedStore([.onDispatch(Held.self, [HeldFollowUp.self])])
    let started = Gate()
    let gate = Gate()
    let followUps = Recorder<String>()
    let running = Task { try await store.dispatch(Held(started: started, gate: gate, followUps: followUps)) }
    await started.wait()
    await store.shutdown()
    gate.open()
    try await running.value
    #expect(followUps.values == ["created"])
    #expect(store.state.log == [])
    #expect(store.ownedTaskCount == 0)
  }
}
