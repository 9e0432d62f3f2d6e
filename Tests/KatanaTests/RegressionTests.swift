import Katana
import KatanaTestSupport
import Testing

/// A returning side effect whose value is optional, and that counts its runs.
struct MaybeValue: ReturningSideEffect {
  let runs: EventCounter
  func sideEffect(_ context: any AnySideEffectContext) async throws -> Int? {
    runs.increment()
    return nil
  }
}

@Suite("Regressions", .timeLimit(.failsafeMinutes(3)))
struct RegressionTests {
  /// A returning side effect that returns `nil` through interceptors runs once and returns `nil`.
  @Test func optionalNilValue_throughInterceptors_runsOnceAndReturnsNil() async throws {
    let passThrough: StoreInterceptor = { _ in { next in { item in try await next(item) } } }
    let store = try await makeReadyStore(interceptors: [passThrough])
    let runs = EventCounter()
    let value = try await store.dispatch(MaybeValue(runs: runs))
    #expect(value == nil)
    #expect(runs.count == 1)
    let erased = try await store.anyDispatch(MaybeValue(runs: runs))
    #expect((erased as? Int?) == .some(nil))
    #expect(runs.count == 2)
  }

  /// An interceptor running for a side effect may await a state updater before calling `next`: the
  /// updater is applied before the awaited dispatch returns.
  @Test func sideEffectInterceptor_awaitingAnUpdater_seesItApplied() async throws {
    let seen = Recorder<[String]>()
    let interceptor: StoreInterceptor = { context in
      { next in
        { item in
          if item is IncrementTwice {
            _ = try await context.anyDispatch(Log(tag: "before"))
            seen.append((context.getAnyState() as? CounterState)?.log ?? [])
          }
          try await next(item)
        }
      }
    }
    let store = try await makeReadyStore(interceptors: [interceptor])
    try await store.dispatch(IncrementTwice())
    #expect(seen.values == [["before"]])
    #expect(store.state.counter == 2)
  }

  /// Cancelling a sent updater that the pump has taken in a batch but not started withdraws it.
  @Test func cancellingABatchedSentUpdater_withdrawsIt() async throws {
    let gate = Gate()
    let started = Gate()
    let store = try await makeReadyStore(interceptors: [gatingInterceptor(tag: "first", gate: gate, started: started)])
    let first = store.send(Log(tag: "first"))
    await started.wait()
    // "second" and "third" queue behind "first"; when "first" is done the pump takes both in one batch.
    let second = store.send(Log(tag: "second"))
    let third = store.send(Log(tag: "third"))
    // A listener on "second"'s commit cancels "third", which is then batched but not started.
    let cancelled = Gate()
    store.addListener { _, new in
      if new.log.last == "second", !cancelled.isOpen {
        third.cancel()
        cancelled.open()
      }
    }
    gate.open()
    try await first.value
    try await second.value
    await #expect(throws: CancellationError.self) { try await third.value }
    #expect(store.state.log == ["first", "second"])
  }

  /// Shutting down from inside a sent side effect (a store-owned task) does not wait for itself.
  @Test func shutdownFromInsideASentSideEffect_returns() async throws {
    let store = try await makeReadyStore()
    let done = Recorder<String>()
    let handle = store.send(
      Script { _ in
        await store.shutdown()
        done.append("shut down")
      })
    try await handle.value
    #expect(done.values == ["shut down"])
    #expect(!store.isReady)
  }

  /// An interceptor running for a sent updater that waits for another sent updater, batched behind it but
  /// not started, gets a deadlock error instead of hanging.
  @Test func waitingForABatchedSentUpdaterFromItsPredecessor_throwsDeadlock() async throws {
    let gate = Gate()
    let started = Gate()
    let later = LockedValue<DispatchHandle<Void>?>(nil)
    let outcome = Recorder<String>()
    let waiting: StoreInterceptor = { _ in
      { next in
        { item in
          if let log = item as? Log, log.tag == "a", let handle = later.current {
            do {
              try await handle.value
              outcome.append("waited")
            } catch let error as StoreError {
              if case .deadlock = error { outcome.append("deadlock") }
            }
          }
          try await next(item)
        }
      }
    }
    let store = try await makeReadyStore(interceptors: [
      gatingInterceptor(tag: "zero", gate: gate, started: started), waiting,
    ])
    store.send(Log(tag: "zero"))
    await started.wait()
    let a = store.send(Log(tag: "a"))
    later.withLock { $0 = store.send(Log(tag: "b")) }
    gate.open()
    try await a.value
    try await later.current?.value
    #expect(outcome.values == ["deadlock"])
    #expect(store.state.log == ["zero", "a", "b"])
  }
}
