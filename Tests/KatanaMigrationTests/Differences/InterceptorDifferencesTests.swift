import KatanaPromises
import KatanaTestSupport
import Testing

/// MIGRATION.md, "Interceptors": when the middle closure runs, and what a kind-changing `next` does.
@Suite("Differences: interceptors", .timeLimit(.failsafeMinutes(3)), .taskExecutorPathOfThisRun)
struct InterceptorDifferencesTests {
  @Test func asyncInterceptor_middleClosureRunsOncePerStore() async throws {
    let middleCalls = LockedValue(0)
    let interceptor: StoreInterceptor = { _ in
      { next in
        middleCalls.withLock { $0 += 1 }
        return { item in try await next(item) }
      }
    }
    let store = counterStore(interceptors: [interceptor], configuration: StoreConfiguration())
    for _ in 0..<3 { try await store.dispatch(Stage1.IncrementCounter()) }
    #expect(middleCalls.current == 1)
  }

  @Test func synchronousInterceptor_middleClosureRunsOncePerDispatch_asInKatana6() async throws {
    let middleCalls = LockedValue(0)
    let interceptor: SynchronousStoreInterceptor = { _ in
      { next in
        middleCalls.withLock { $0 += 1 }
        return { item in try next(item) }
      }
    }
    let store = counterStore(interceptors: [synchronousInterceptor(interceptor)])
    for _ in 0..<3 { try await store.dispatch(Stage1.IncrementCounter()) }
    #expect(middleCalls.current == 3)
  }

  @Test func katana6Configuration_interceptorsAreInitialisedOffTheMainQueue() async throws {
    // Katana 6 initialised them in the state initializer's block, on the main queue by default.
    let initialisedOnMain = Recorder<Bool>()
    let interceptor: StoreInterceptor = { _ in
      initialisedOnMain.append(isOnMainQueue)
      return { next in next }
    }
    let store = counterStore(interceptors: [interceptor])
    try await store.waitUntilReady()
    #expect(initialisedOnMain.values == [false])
  }

  @Test func nextWithASideEffectInsteadOfAnUpdater_theDispatchPromiseWaitsForIt() async throws {
    // Katana 6 resolved the updater's promise at once and ran the side effect later, fire-and-forget.
    let store = counterStore(interceptors: [
      replacing(Stage1.IncrementCounter.self, with: Stage1.GenerateRandomNumberFromBackendAndWait())
    ])
    try await store.dispatch(Stage1.IncrementCounter()).value
    #expect(store.state.counter == 42)
  }

  @Test func nextNeverCalled_forASideEffect_theDispatchPromiseResolves() async throws {
    // Katana 6 crashed (fatalError) when `store.dispatch(sideEffect)` was not handed on.
    let store = counterStore(interceptors: [dropping(Stage1.GenerateRandomNumberFromBackendAndWait.self)])
    try await store.dispatch(Stage1.GenerateRandomNumberFromBackendAndWait()).value
    #expect(store.state.counter == 0)
  }

  @Test func nextNeverCalled_forAReturningSideEffect_rejectsWithReturnValueUnavailable() async throws {
    // Katana 6 crashed for non-optional return types.
    let store = counterStore(interceptors: [dropping(Stage1.ReadCounter.self)])
    await #expect(throws: StoreError.returnValueUnavailable(String(reflecting: Stage1.ReadCounter.self))) {
      try await store.dispatch(Stage1.ReadCounter()).value
    }
  }
}
