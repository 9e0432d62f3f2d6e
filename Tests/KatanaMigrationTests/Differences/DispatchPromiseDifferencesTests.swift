import KatanaPromises
import KatanaTestSupport
import Testing

/// MIGRATION.md, "Behaviour differences": the promise-returning dispatch APIs.
@Suite("Differences: dispatch promises", .timeLimit(.failsafeMinutes(3)), .taskExecutorPathOfThisRun)
struct DispatchPromiseDifferencesTests {
  @Test func retry_onAContextDispatchPromise_dispatchesAgain() async throws {
    // In Katana 6 only the promise of `store.dispatch` re-dispatched; a context's promise rejected at once.
    let store = counterStore()
    let attempts = LockedValue(0)
    let flaky = FlakyReadCounter(attempts: attempts, succeedOn: 3)
    #expect(try await store.dispatch(RetryThroughContext(inner: flaky, anyDispatch: false)).value == 3)
    #expect(attempts.current == 3)
  }

  @Test func retry_onAnAnyDispatchPromise_dispatchesAgain() async throws {
    let store = counterStore()
    let attempts = LockedValue(0)
    let flaky = FlakyReadCounter(attempts: attempts, succeedOn: 3)
    #expect(try await store.dispatch(RetryThroughContext(inner: flaky, anyDispatch: true)).value == 3)
    #expect(attempts.current == 3)
  }

  @Test func retry_onAPartialStoreDispatchPromise_dispatchesAgain() async throws {
    let store = PartialStore(counterStore())
    let attempts = LockedValue(0)
    #expect(try await store.dispatch(FlakyReadCounter(attempts: attempts, succeedOn: 3)).retry(3).value == 3)
    #expect(attempts.current == 3)
  }

  @Test func retry_onAPromiseDerivedWithThen_doesNotDispatchAgain_asInKatana6() async throws {
    let store = counterStore()
    let attempts = LockedValue(0)
    let derived = store.dispatch(FlakyReadCounter(attempts: attempts, succeedOn: 3)).then(in: .background) { $0 }
    await #expect(throws: TestError(code: 1)) { try await derived.retry(3).value }
    #expect(attempts.current == 1)
  }

  @Test func cancel_beforeTheUpdaterRan_withdrawsIt() async throws {
    // Cancelling a Katana 6 dispatch promise did not stop the dispatch, and waiting for it hung.
    let started = Gate()
    let store = counterStore(stateInitializer: {
      await started.wait()
      return Stage1.CounterState()
    })
    let promise: Promise<Void> = store.dispatch(Stage1.IncrementCounter())
    promise.cancel()
    started.open()
    await #expect(throws: CancellationError.self) { try await promise.value }
    await #expect(throws: CancellationError.self) { try await onPlainThread { try Hydra.await(promise) } }
    try await store.dispatch(Stage1.IncrementCounter()).value
    #expect(store.state.counter == 1)
  }

  @Test func anyDispatch_resolvesWithThePlainValue() async throws {
    // Katana 6 resolved with the value boxed in an Optional (`Optional(42)`).
    let store = counterStore()
    let value = try await store.anyDispatch(Stage1.ReadCounter()).value
    #expect(type(of: value) == Int.self)
    #expect(value as? Int == 0)
  }

  @Test func anyDispatch_ofAnItemOfNeitherKind_rejectsInsteadOfCrashing() async throws {
    let store = counterStore()
    await #expect(throws: StoreError.unsupportedDispatchable(String(reflecting: NeitherKind.self))) {
      try await store.anyDispatch(NeitherKind()).value
    }
  }

  @Test func inAsyncCode_thePromiseOverloadNeedsAnExplicitType() async throws {
    let store = counterStore()
    // `store.dispatch(x)` alone picks the async overload here; the annotation picks the promise one.
    let promise: Promise<Void> = store.dispatch(Stage1.IncrementCounter())
    try await promise.value
    #expect(store.state.counter == 1)
  }
}
