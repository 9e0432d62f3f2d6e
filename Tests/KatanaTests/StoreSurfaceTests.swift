import Katana
import KatanaTestSupport
import Testing

/// Parts of the store's surface that users asked for: a store made with a container built beforehand, an
/// erased dispatch whose outcome may be ignored, and a shutdown message that fits both causes.
@Suite("Store surface", .timeLimit(.failsafeMinutes(3)))
struct StoreSurfaceTests {
  @Test func storeWithDependenciesBuiltBeforehand_handsThatContainerToSideEffects_andStartsFromTheState() async throws {
    let dependencies = TestDependencies(dispatch: { _ in () }, getState: { CounterState() })
    let store = Store(initialState: CounterState(counter: 7), dependencies: dependencies)
    #expect(store.dependencies === dependencies)
    let seen = LockedValue<TestDependencies?>(nil)
    try await store.dispatch(
      Script { context in
        seen.withLock { $0 = context.dependencies }
        try await context.dispatch(Increment())
      })
    #expect(seen.current === dependencies)
    #expect(store.state.counter == 8)
  }

  @Test func storeWithDependenciesBuiltBeforehand_keepsItsInterceptorsAndConfiguration() async throws {
    let dependencies = TestDependencies(dispatch: { _ in () }, getState: { CounterState() })
    let seen = LockedValue<[String]>([])
    var configuration = StoreConfiguration()
    configuration.tracksActivity = true
    let store = Store(
      initialState: CounterState(), dependencies: dependencies,
      interceptors: [
        { _ in
          { next in
            { item in
              seen.withLock { $0.append("\(type(of: item))") }
              try await next(item)
            }
          }
        }
      ],
      configuration: configuration)
    try await store.dispatch(Increment())
    #expect(seen.current == ["Increment"])
    try await store.waitUntilIdle()
  }

  /// The type-erased context dispatches an updater as a statement: its `()` outcome need not be discarded
  /// by hand (the warnings-as-errors build checks that this compiles without a warning).
  @Test func typeErasedContext_anyDispatch_asAStatement() async throws {
    let store = try await makeReadyStore()
    let count: Int = try await store.dispatch(
      ReturningScript { context in
        try await context.anyDispatch(Increment())
        return (context.getAnyState() as? CounterState)?.counter ?? -1
      })
    try await store.anyDispatch(Increment())
    #expect(count == 1)
    #expect(store.state.counter == 2)
  }

  /// After an explicit shutdown the message does not claim the store was released; it names both causes.
  @Test func storeShutDownMessage_namesBothCauses() {
    let message = StoreError.storeShutDown.description
    #expect(message.contains("shutdown() was called"))
    #expect(message.contains("If nothing was meant to shut it down, it was released"))
  }
}
