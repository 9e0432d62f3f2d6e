import Dispatch
import KatanaPromises
import KatanaTestSupport
import Testing

// The package-level hooks the store's promise-returning `dispatch` is built on: an eager body that `retry`
// runs again, settled from `DispatchHandle.whenComplete`.

struct LogState: State {
  var log: [String] = []
}

struct Append: StateUpdater {
  let entry: String
  func updateState(_ state: inout LogState) { state.log.append(entry) }
}

/// Fails with `TestError(code: attempt)` until `succeedOn`, appending each attempt to the log.
struct FlakyEffect: ReturningSideEffect {
  let attempts: LockedValue<Int>
  let succeedOn: Int

  func sideEffect(_ context: any AnySideEffectContext) async throws -> Int {
    let attempt = attempts.withLock { attempts -> Int in
      attempts += 1
      return attempts
    }
    _ = try await context.anyDispatch(Append(entry: "attempt \(attempt)"))
    guard attempt >= succeedOn else { throw TestError(code: attempt) }
    return attempt
  }
}

/// Waits until its task is cancelled.
struct WaitForCancellation: SideEffect {
  let started: Gate
  let cancelled: Gate

  func sideEffect(_ context: SideEffectContext<LogState, EmptySideEffectDependencyContainer>) async throws {
    let never = Gate()
    await withTaskCancellationHandler {
      started.open()
      await never.wait()
    } onCancel: {
      cancelled.open()
      never.open()
    }
  }
}

typealias LogStore = Store<LogState, EmptySideEffectDependencyContainer>

/// What the store integration does: dispatch now, settle from the handle, cancel the handle with the promise.
func dispatchPromise<U: StateUpdater>(_ store: LogStore, _ updater: U) -> Promise<Void> where U.StateType == LogState {
  Promise(eager: { resolver in
    let handle = store.send(updater)
    handle.whenComplete(resolver.settle)
    resolver.onCancel { handle.cancel() }
  })
}

func dispatchPromise(_ store: LogStore, _ effect: FlakyEffect) -> Promise<Int> {
  Promise(eager: { resolver in store.send(effect).whenComplete(resolver.settle) })
}

@Suite("Store hooks: eager promises settled from dispatch handles", .timeLimit(.failsafeMinutes(3)))
struct StoreHooksTests {
  @Test func eagerBody_runsDuringInit_onTheCallingThread() {
    let ran = LockedValue(false)
    let promise = Promise<Int>(eager: { resolver in
      ran.withLock { $0 = true }
      resolver.resolve(1)
    })
    #expect(ran.current)
    #expect(promise.result == 1)
  }

  @Test func dispatchPromises_startWithoutObservers_inCallOrder() async throws {
    let store = LogStore()
    let promises = ["a", "b", "c"].map { dispatchPromise(store, Append(entry: $0)) }
    for promise in promises { try await promise.value }
    #expect(store.state.log == ["a", "b", "c"])
  }

  @Test func dispatchPromise_thenOnMain_seesTheCommittedState() async throws {
    let store = LogStore()
    let seen = try await dispatchPromise(store, Append(entry: "x")).then { store.state.log }.value
    #expect(seen == ["x"])
  }

  @Test func retry_dispatchesTheItemAgain() async throws {
    let store = LogStore()
    let attempts = LockedValue(0)
    let value = try await dispatchPromise(store, FlakyEffect(attempts: attempts, succeedOn: 3)).retry(3).value
    #expect(value == 3)
    #expect(store.state.log == ["attempt 1", "attempt 2", "attempt 3"])
  }

  @Test func retry_onADerivedPromise_doesNotDispatchAgain() async throws {
    let store = LogStore()
    let attempts = LockedValue(0)
    let derived = dispatchPromise(store, FlakyEffect(attempts: attempts, succeedOn: 3)).then(in: .background) { $0 }
    await #expect(throws: TestError(code: 1)) { try await derived.retry(3).value }
    #expect(store.state.log == ["attempt 1"])
  }

  @Test func cancellingThePromise_cancelsTheHandle() async throws {
    let store = LogStore()
    let started = Gate()
    let cancelled = Gate()
    let promise = Promise<Void>(eager: { resolver in
      let handle = store.send(WaitForCancellation(started: started, cancelled: cancelled))
      handle.whenComplete(resolver.settle)
      resolver.onCancel { handle.cancel() }
    })
    await started.wait()
    promise.cancel()
    await cancelled.wait()
    await #expect(throws: CancellationError.self) { try await promise.value }
  }

  @Test func whenSettled_reportsTheOutcome_withoutStartingALazyBody() async throws {
    let queue = TestQueue()
    let runs = LockedValue(0)
    let lazy = Promise<Int>(in: queue.context) { resolve, _, _ in
      runs.withLock { $0 += 1 }
      resolve(1)
    }
    let reported = Recorder<Int>()
    lazy.whenSettled { result in reported.append((try? result.get()) ?? -1) }
    queue.drain()
    #expect(runs.current == 0)
    _ = try await lazy.value
    await reported.wait(forCount: 1)
    #expect(reported.values == [1])

    let cancelled = Promise<Int>()
    let outcome = LockedValue<(any Error)?>(nil)
    cancelled.whenSettled { result in
      if case .failure(let error) = result { outcome.withLock { $0 = error } }
    }
    cancelled.cancel()
    #expect(outcome.current is CancellationError)
  }
}
