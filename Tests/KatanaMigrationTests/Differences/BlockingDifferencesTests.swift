import Foundation
import KatanaPromises
import KatanaTestSupport
import Testing

/// MIGRATION.md, "Hydra.await" and "getState": where blocking waits work, and what a side effect reads after
/// one.
@Suite("Differences: blocking waits and getState", .timeLimit(.failsafeMinutes(3)), .taskExecutorPathOfThisRun)
struct BlockingDifferencesTests {
  @Test func hydraAwait_insideATask_throwsInvalidContext() {
    #expect(throws: PromiseError.invalidContext) { try Hydra.await(Promise(resolved: 1)) }
  }

  @Test func blockingSideEffect_inAStoreWithoutTheKatana6Configuration_rejectsWithInvalidContext() async throws {
    let store = counterStore(configuration: StoreConfiguration())
    await #expect(throws: PromiseError.invalidContext) {
      try await store.dispatch(Stage1.GenerateRandomNumberFromBackendAndWait()).value
    }
    #expect(store.state.counter == 0)
  }

  @Test func blockingSideEffect_inAKatana6Store_completes() async throws {
    let store = counterStore()
    try await store.dispatch(Stage1.GenerateRandomNumberFromBackendAndWait()).value
    #expect(store.state.counter == 42)
  }

  @Test func blockingSideEffects_inAKatana6Store_allBlockAtOnce() async throws {
    // Katana 6's side effects shared GCD's worker threads; on two cores, 16 blocked side effects queued up.
    let store = counterStore()
    let barrier = Barrier(count: 16)
    let promises = (0..<16).map { _ in store.dispatch(BlockAtBarrier(barrier: barrier)) }
    for promise in promises {
      #expect(try await promise.value)
    }
  }

  @Test func getState_afterAHydraAwaitedUpdater_includesIt() async throws {
    let store = counterStore()
    #expect(try await store.dispatch(IncrementAndRead()).value == 1)
  }

  @Test func getState_inTheDependenciesInitializer_isTheEmptyState() async throws {
    // Katana 6 asserted (debug builds) when a dependency read the state before the store was ready.
    let seen = LockedValue<Int?>(nil)
    let store = CounterStore(
      interceptors: [],
      stateInitializer: { Stage1.CounterState(counter: 5) },
      dependenciesInitializer: { dispatch, getState in
        seen.withLock { $0 = getState().counter }
        return Stage1.AppDependencies(dispatch: dispatch, getState: { getState() })
      },
      configuration: .katana6)
    try await store.waitUntilReady()
    #expect(seen.current == 0)
    #expect(store.state.counter == 5)
  }

  @Test func containerDispatch_afterTheStoreIsReleased_rejectsWithStoreShutDown() async throws {
    // Katana 6's closures captured the store `unowned`: using them after it was released crashed.
    var store: CounterStore? = counterStore()
    let dependencies = try #require(store?.dependencies)
    weak let released = store
    store = nil
    #expect(released == nil)
    await #expect(throws: StoreError.storeShutDown) { try await dependencies.dispatch(Stage1.IncrementCounter()).value }
  }
}
