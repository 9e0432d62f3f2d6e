import Katana
import KatanaTestSupport
import Testing

/// A `DispatchInterceptor` that records each item's type under `name` and does what `handle` says (hand it on, by
/// default).
private struct Named: DispatchInterceptor {
  let name: String
  let recorder: Recorder<String>
  var handle: @Sendable (any Dispatchable, DispatchInterceptorNext) async throws -> Void = { try await $1($0) }

  func intercept(_ item: any Dispatchable, next: DispatchInterceptorNext) async throws {
    recorder.append("\(name):\(type(of: item))")
    try await handle(item, next)
  }
}

/// The faster interceptor form. What each kind of handler may do is checked against the closure form on seeded plans
/// (`InterceptorChainTwinTests`) and on the observation fuzzer's schedules; these tests pin what the form adds.
@Suite("Dispatch interceptors", .timeLimit(.failsafeMinutes(3)))
struct DispatchInterceptorTests {
  func makeStore(
    interceptors: [StoreInterceptor] = [], dispatchInterceptors: [any DispatchInterceptor], plainChain: Bool = false
  ) async throws -> TestStore {
    var configuration = StoreConfiguration(dispatchInterceptors: dispatchInterceptors)
    configuration.usesPlainInterceptorChain = plainChain
    let store = TestStore(initialState: CounterState(), interceptors: interceptors, configuration: configuration)
    try await store.waitUntilReady()
    return store
  }

  @Test func runAfterTheClosureInterceptors_inArrayOrder_oncePerItem() async throws {
    let recorder = Recorder<String>()
    let store = try await makeStore(
      interceptors: [recordingInterceptor("a", into: recorder)],
      dispatchInterceptors: [Named(name: "b", recorder: recorder), Named(name: "c", recorder: recorder)])
    try await store.dispatch(Increment())
    let doubled = try await store.dispatch(Double(value: 4))
    #expect(doubled == 8)
    #expect(
      recorder.values == [
        "a:Increment", "b:Increment", "c:Increment", "a:Double", "b:Double", "c:Double",
      ])
    #expect(store.state.counter == 1)
  }

  @Test func aStoreWithOnlyDispatchInterceptors_runsThemForEveryWayToDispatch() async throws {
    let recorder = Recorder<String>()
    let store = try await makeStore(dispatchInterceptors: [Named(name: "x", recorder: recorder)])
    try await store.dispatch(Increment())
    _ = try await store.anyDispatch(Increment())
    try await store.send(Increment()).value
    try await store.dispatch(Script { context in try await context.dispatch(Increment()) })
    #expect(
      recorder.values == ["x:Increment", "x:Increment", "x:Increment", "x:Script", "x:Increment"])
    #expect(store.state.counter == 4)
  }

  @Test func next_givesTheStoresContext() async throws {
    let recorder = Recorder<String>()
    let reader = Named(name: "r", recorder: recorder) { item, next in
      let before = (next.context.getAnyState() as? CounterState)?.counter ?? -1
      try await next(item)
      let after = (next.context.getAnyState() as? CounterState)?.counter ?? -1
      recorder.append("\(before) -> \(after)")
    }
    let store = try await makeStore(dispatchInterceptors: [reader])
    try await store.dispatch(Increment())
    #expect(recorder.values == ["r:Increment", "0 -> 1"])
  }

  @Test func throwing_rejects_andReturningWithoutNext_drops() async throws {
    let recorder = Recorder<String>()
    let gate = Named(name: "g", recorder: recorder) { item, next in
      if item is IncrementTwice { throw TestError(code: 7) }
      if item is SetCounter { return }
      try await next(item)
    }
    let store = try await makeStore(dispatchInterceptors: [gate])
    await #expect(throws: TestError(code: 7)) { try await store.dispatch(IncrementTwice()) }
    try await store.dispatch(SetCounter(value: 9))
    try await store.dispatch(Increment())
    #expect(store.state.counter == 1)
  }

  @Test func aNextKeptPastItsDispatch_throwsOutOfScope() async throws {
    let kept = LockedValue<DispatchInterceptorNext?>(nil)
    let keeper = Named(name: "k", recorder: Recorder()) { item, next in
      kept.withLock { $0 = next }
      try await next(item)
    }
    let store = try await makeStore(dispatchInterceptors: [keeper])
    try await store.dispatch(Increment())
    let next = try #require(kept.withLock { $0 })
    await #expect {
      try await next(Increment())
    } throws: { error in
      if case StoreError.nextCalledOutOfScope = error { return true }
      return false
    }
    #expect(store.state.counter == 1)
  }

  /// The chains a `DispatchInterceptorNext` is given in: alone on the opaque chain (the frame handed over, no
  /// task-local), alone on the plain twin, and after a closure interceptor (the frame found in the task where the
  /// dispatch interceptors start).
  static let chains: [(plainChain: Bool, closureFirst: Bool)] = [(false, false), (true, false), (false, true)]

  fileprivate func makeStore(chain: (plainChain: Bool, closureFirst: Bool), _ interceptor: Named) async throws
    -> TestStore
  {
    let passThrough: StoreInterceptor = { _ in { next in { item in try await next(item) } } }
    return try await makeStore(
      interceptors: chain.closureFirst ? [passThrough] : [], dispatchInterceptors: [interceptor],
      plainChain: chain.plainChain)
  }

  /// A `next` carries its dispatch: kept from one dispatch and called in the next one's chain (the same interceptor,
  /// the same task), it is out of scope, and the later dispatch goes on with its own `next`. (A closure interceptor's
  /// `next` would hand on in the later dispatch: `InterceptorChainTwinTests`.)
  @Test(arguments: 0..<3)
  func aNextKeptForALaterDispatch_throwsOutOfScopeThere(chainIndex: Int) async throws {
    let kept = LockedValue<DispatchInterceptorNext?>(nil)
    let outcomes = Recorder<String>()
    let keeper = Named(name: "k", recorder: Recorder()) { item, next in
      if let earlier = kept.withLock({ $0 }) {
        do {
          try await earlier(Increment(by: 100))
          outcomes.append("handled")
        } catch StoreError.nextCalledOutOfScope {
          outcomes.append("out of scope")
        }
      }
      kept.withLock { $0 = next }
      try await next(item)
    }
    let store = try await makeStore(chain: Self.chains[chainIndex], keeper)
    try await store.dispatch(Increment())
    try await store.dispatch(Increment())
    _ = try await store.anyDispatch(Increment())
    #expect(outcomes.values == ["out of scope", "out of scope"])
    #expect(store.state.counter == 3)
  }

  /// A `next` carries its dispatch: called from a detached task (which inherits no task-local value) while that
  /// dispatch runs, it hands on, for a state updater (committed within the dispatch, which returns after it) and for
  /// a side effect.
  @Test(arguments: 0..<3)
  func aNextCalledFromADetachedTask_handsOnInItsDispatch(chainIndex: Int) async throws {
    let detaching = Named(name: "d", recorder: Recorder()) { item, next in
      try await Task.detached { try await next(item) }.value
    }
    let store = try await makeStore(chain: Self.chains[chainIndex], detaching)
    try await store.dispatch(Increment())
    #expect(store.state.counter == 1)
    _ = try await store.anyDispatch(Increment(by: 2))
    #expect(store.state.counter == 3)
    try await store.dispatch(Script { context in try await context.dispatch(Increment(by: 4)) })
    #expect(store.state.counter == 7)
    let value = try await store.dispatch(ReturningScript { _ in 11 })
    #expect(value == 11)
  }
}
