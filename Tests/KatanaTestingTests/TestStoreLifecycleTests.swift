import KatanaTestSupport
import KatanaTesting
import Testing

@Suite("TestStore: send, finish and the end of the test", .timeLimit(.failsafeMinutes(3)))
struct TestStoreLifecycleTests {
  @Test func finish_waitsForSentSideEffects() async throws {
    let store = makeStore()
    let gate = Gate()
    let started = Gate()
    store.send(WaitForGate(gate: gate, started: started))
    await started.wait()
    gate.open()  // the test drives what the side effect waits for: it can run now
    await store.receive(Log.self) { $0.log = ["after gate"] }
    await store.finish()
    #expect(store.state.log == ["after gate"])
  }

  @Test func finish_waitsForWorkTheStoreOwns() async throws {
    let store = makeStore(exhaustivity: .off)
    let gate = Gate()
    try await store.dispatch(
      Script { context in
        // Handed to the store: it runs in a task the store owns, after this body has returned.
        context.send(
          Script { context in
            await gate.wait()
            try await context.dispatch(Log(tag: "owned"))
          })
        gate.open()
      })
    await store.finish()
    #expect(store.state.log == ["owned"])
  }

  @Test func waitUntilIdle_isAnIdlePoint_andTheStoreKeepsWorking() async throws {
    let store = makeStore(exhaustivity: .off)
    store.send(LogAll(tags: ["a", "b"]))
    await store.waitUntilIdle()
    #expect(store.state.log == ["a", "b"])
    try await store.dispatch(Increment()) { $0.count = 1 }
    await store.finish()
  }

  @Test func sendTask_value_returnsTheValue() async throws {
    let store = makeStore()
    let task = store.send(ReturningScript { _ in 42 })
    #expect(try await task.value == 42)
    await store.finish()
  }

  @Test func sendTask_value_rethrowsTheError() async throws {
    let store = makeStore()
    let task = store.send(Fail(code: 5))
    await #expect(throws: TestError(code: 5)) { try await task.value }
    await store.finish()
  }

  @Test func sendTask_finish_waitsForTheSideEffect_whateverItsOutcome() async throws {
    let store = makeStore()
    let gate = Gate()
    let started = Gate()
    let task = store.send(WaitForGate(gate: gate, started: started))
    await started.wait()
    gate.open()  // the test drives what the side effect waits for: it can run now
    await task.finish()
    #expect(store.state.log == ["after gate"])
    await store.receive(Log.self) { $0.log = ["after gate"] }
    await store.send(Fail(code: 1)).finish()
    await store.finish()
  }

  @Test func sendTask_cancel_cancelsTheSideEffect() async throws {
    let store = makeStore()
    let started = Gate()
    let task = store.send(
      Script { _ in
        started.open()
        try await waitForCancellation()
      })
    await started.wait()
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
    await store.finish()
  }

  // MARK: - Work left running: exactly one issue

  @Test func release_withASideEffectStillRunning_recordsOneIssue_atTheCreationLine() async throws {
    let gate = Gate()
    let started = Gate()
    let fragments = ["released while work was still in flight", "WaitForGate", "(running)"]
    let line = #line + 2
    await expectOneIssue(containing: fragments, atLine: line) {
      let store = makeStore()
      store.send(WaitForGate(gate: gate, started: started))
      await started.wait()
    }
    gate.open()
  }

  @Test func release_cancelsTheTestsSideEffects_andWhatTheStoreOwns() async throws {
    let started = Gate()
    let ownedStarted = Gate()
    let ownedCancelled = Gate()
    let released = Gate()
    let sentCancelled = Gate()
    do {
      let store = makeStore(exhaustivity: .off)
      store.send(
        Script { context in
          // Handed to the store: a task the store owns.
          context.send(
            Script { _ in
              ownedStarted.open()
              try? await waitForCancellation()
              ownedCancelled.open()
            })
          started.open()
          await released.waitIgnoringCancellation()  // so this task keeps the store alive
        })
      let sentStarted = Gate()
      store.send(
        Script { _ in
          sentStarted.open()
          try? await waitForCancellation()
          sentCancelled.open()
        })
      await started.wait()
      await ownedStarted.wait()
      await sentStarted.wait()
    }
    await sentCancelled.wait()
    await ownedCancelled.wait()
    released.open()
    #expect(sentCancelled.isOpen && ownedCancelled.isOpen)
  }

  @Test func finish_whenWorkNeverEnds_failsafeRecordsOneIssue_insteadOfHanging() async throws {
    let failsafeClock = TestClock()
    let store = makeStore(failsafeClock: failsafeClock)
    let gate = Gate()
    let started = Gate()
    store.send(WaitForGate(gate: gate, started: started))
    await started.wait()
    await expectOneIssue(containing: ["finish(): the store still has work in flight after 30 seconds", "WaitForGate"]) {
      async let finishing: Void = store.finish()
      try await failsafeClock.waitForSleepers(count: 1)
      await failsafeClock.advance(by: .seconds(30))
      await finishing
    }
    gate.open()
  }

  @Test func waitUntilIdle_whenWorkNeverEnds_failsafeRecordsOneIssue_andReturns() async throws {
    let failsafeClock = TestClock()
    let store = makeStore(failsafeClock: failsafeClock)
    let gate = Gate()
    let started = Gate()
    store.send(WaitForGate(gate: gate, started: started))
    await started.wait()
    let fragments = [
      "waitUntilIdle(): the store still has work in flight after 30 seconds (the test store's hang failsafe): "
        + "WaitForGate(",
      "(running). Cancel long-running work, or advance the clock it waits for, before the test ends.",
    ]
    let line = #line + 2
    await expectOneIssue(containing: fragments, atLine: line) {
      async let waiting: Void = store.waitUntilIdle()
      try await failsafeClock.waitForSleepers(count: 1)
      await failsafeClock.advance(by: .seconds(30))
      await waiting
    }
    gate.open()
    await store.receive(Log.self) { $0.log = ["after gate"] }
    await store.finish()
  }

  @Test func receive_whenAnInterceptorHoldsTheReceivedItemsTurn_failsafeRecordsOneIssue() async throws {
    let failsafeClock = TestClock()
    let held = Gate()
    let release = Gate()
    let holding: StoreInterceptor = { _ in
      { next in
        { item in
          if item as? Log == Log(tag: "held") {
            held.open()
            await release.waitIgnoringCancellation()
          }
          try await next(item)
        }
      }
    }
    let store = makeStore(interceptors: [holding], failsafeClock: failsafeClock)
    store.send(LogAll(tags: ["held"]))
    await held.wait()  // received (the test store's interceptor comes first), not applied
    let fragments = [
      #"Received Log(tag: "held"), but it was not applied within 30 seconds (the test store's hang failsafe): "#
        + "an interceptor holds its turn. Still in flight: ", #"Log(tag: "held") (running)"#,
    ]
    let line = #line + 2
    await expectOneIssue(containing: fragments, atLine: line) {
      async let receiving: Log? = store.receive(Log.self) { $0.log = ["held"] }
      try await failsafeClock.waitForSleepers(count: 1)
      await failsafeClock.advance(by: .seconds(30))
      #expect(await receiving == nil)
    }
    release.open()
    await store.finish()
    #expect(store.state.log == ["held"])
  }

  @Test func dispatch_whenTheSideEffectNeverReturns_failsafeRecordsOneIssueAndThrows() async throws {
    let failsafeClock = TestClock()
    let store = makeStore(failsafeClock: failsafeClock)
    let gate = Gate()
    let started = Gate()
    let outcome = LockedValue<(any Error)?>(nil)
    await expectOneIssue(containing: ["WaitForGate", "did not return within 30 seconds", "start it with `send`"]) {
      async let dispatching: Void = {
        do {
          try await store.dispatch(WaitForGate(gate: gate, started: started))
        } catch {
          outcome.withLock { $0 = error }
        }
      }()
      await started.wait()
      try await failsafeClock.waitForSleepers(count: 1)
      await failsafeClock.advance(by: .seconds(30))
      await dispatching
    }
    // The error a failed `#require` throws: Swift Testing does not report it again (one mistake, one issue).
    #expect(outcome.current is ExpectationFailedError)
    gate.open()
    await store.finish()
  }

  @Test func receive_whenTheStoreNeverSettles_failsafeRecordsOneIssue() async throws {
    let failsafeClock = TestClock()
    let store = makeStore(failsafeClock: failsafeClock)
    let gate = Gate()
    let started = Gate()
    store.send(WaitForGate(gate: gate, started: started))
    await started.wait()
    await expectOneIssue(containing: ["Expected to receive Increment", "hang failsafe", "WaitForGate"]) {
      async let receiving: Void = { _ = await store.receive(Increment.self) }()
      try await failsafeClock.waitForSleepers(count: 1)
      await failsafeClock.advance(by: .seconds(30))
      await receiving
    }
    gate.open()
    await store.receive(Log.self) { $0.log = ["after gate"] }
    await store.finish()
  }
}

/// Suspends until the calling task is cancelled, then throws `CancellationError`.
func waitForCancellation() async throws {
  let never = Gate()
  await withTaskCancellationHandler {
    await never.wait()
  } onCancel: {
    never.open()
  }
  try Task.checkCancellation()
}
