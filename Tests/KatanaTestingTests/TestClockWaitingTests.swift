import KatanaTestSupport
import KatanaTesting
import Testing

/// `TestClock.waitForSleepers(count:)` and `run()`: they wait for events, and a failsafe (the test store's)
/// turns a wait that cannot end into an issue at the caller's line.
@Suite("TestClock: waiting for sleepers, running to the end", .timeLimit(.failsafeMinutes(3)))
struct TestClockWaitingTests {
  let clock = TestClock()
  let failsafeClock = TestClock()

  /// Sleeps one second on the store's clock `times` times, dispatching `Increment` after each.
  struct Countdown: SideEffect {
    let times: Int
    func sideEffect(_ context: SideEffectContext<CounterState, CounterDependencies>) async throws {
      for _ in 0..<times {
        try await context.clock.sleep(for: .seconds(1))
        try await context.dispatch(Increment())
      }
    }
  }

  // MARK: - waitForSleepers

  @Test func waitForSleepers_whenTheStoresWorkAllSleeps_andTooFewSleep_failsAtOnce() async throws {
    let store = makeStore(failsafeClock: failsafeClock, clock: clock)
    store.send(Nap())
    try await clock.waitForSleepers(count: 1)
    let thrown = LockedValue<(any Error)?>(nil)
    let line = #line + 5
    await expectOneIssue(
      containing: ["waitForSleepers(count: 2): 1 task sleeps on the test clock, and no other sleep can start", "Nap("],
      atLine: line
    ) {
      do { try await clock.waitForSleepers(count: 2) } catch { thrown.withLock { $0 = error } }
    }
    #expect(thrown.current is ExpectationFailedError)  // reported once: the issue, not a caught error too
    await clock.advance(by: .milliseconds(300))
    await store.receive(Log.self) { $0.log = ["woke"] }
    await store.finish()
  }

  @Test func waitForSleepers_whenTheSleepersNeverCome_givesUpAfterTheTestStoresFailsafe() async throws {
    let store = makeStore(failsafeClock: failsafeClock, clock: clock)
    let stop = LockedValue(false)
    // Busy (it can always run), but never sleeps on the clock.
    store.send(
      Script(name: "spinner") { context in
        while !stop.current { await Task.yield() }
        try await context.dispatch(Log(tag: "after gate"))
      })
    let thrown = LockedValue<(any Error)?>(nil)
    await expectOneIssue(containing: [
      "waitForSleepers(count: 1): 0 tasks sleep on the test clock after 30 seconds (the failsafe)",
      "the test store still runs",
    ]) {
      async let waiting: Void = {
        do { try await clock.waitForSleepers(count: 1) } catch { thrown.withLock { $0 = error } }
      }()
      try await failsafeClock.waitForSleepers(count: 1)
      await failsafeClock.advance(by: .seconds(30))
      await waiting
    }
    #expect(thrown.current is ExpectationFailedError)  // reported once: the issue, not a caught error too
    stop.withLock { $0 = true }
    await store.receive(Log.self) { $0.log = ["after gate"] }
    await store.finish()
  }

  @Test func waitForSleepers_withoutATestStore_givesUpAfterItsTimeout() async throws {
    let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
    try await clock.waitForSleepers(count: 1)
    let thrown = LockedValue<(any Error)?>(nil)
    await expectOneIssue(containing: [
      "waitForSleepers(count: 2): 1 task sleeps on the test clock after", "a task until 1.0 seconds",
    ]) {
      // Nothing will ever add the second sleeper: the outcome does not depend on the timeout's length.
      do { try await clock.waitForSleepers(count: 2, timeout: .milliseconds(1)) } catch {
        thrown.withLock { $0 = error }
      }
    }
    #expect(thrown.current is ExpectationFailedError)  // reported once: the issue, not a caught error too
    sleeper.cancel()
  }

  @Test func waitForSleepers_isCancellable() async throws {
    let waiter = Task { try await clock.waitForSleepers(count: 1) }
    waiter.cancel()
    await #expect(throws: CancellationError.self) { try await waiter.value }
  }

  @Test func sleepers_sayWhoseWorkSleeps_andUntilWhen() async throws {
    let store = makeStore(clock: clock)
    store.send(Nap(duration: .seconds(2), tag: "late"))
    store.send(Nap(duration: .seconds(1), tag: "early"))
    try await clock.waitForSleepers(count: 2)
    #expect(
      clock.sleepers.map(\.description) == [
        #"Nap(duration: 1.0 seconds, tag: "early") until 1.0 seconds"#,
        #"Nap(duration: 2.0 seconds, tag: "late") until 2.0 seconds"#,
      ])
    store.exhaustivity = .off
    await store.finish()
  }

  // MARK: - run

  @Test func run_advancesUntilNothingSleeps_lettingEachWokenStepSettle() async throws {
    let store = makeStore(clock: clock)
    store.send(Countdown(times: 3))
    await clock.run()
    #expect(clock.now == .zero.advanced(by: .seconds(3)))
    await store.receive(Increment.self) { $0.count = 1 }
    await store.receive(Increment.self) { $0.count = 2 }
    await store.receive(Increment.self) { $0.count = 3 }
    await store.finish()
  }

  @Test func run_followsSeveralSleepersInDeadlineOrder() async throws {
    let store = makeStore(clock: clock)
    store.send(Nap(duration: .seconds(2), tag: "b"))
    store.send(Nap(duration: .seconds(1), tag: "a"))
    try await clock.waitForSleepers(count: 2)
    await clock.run()
    await store.receive(Log(tag: "a")) { $0.log = ["a"] }
    await store.receive(Log(tag: "b")) { $0.log = ["a", "b"] }
    await store.finish()
  }

  @Test func run_withWorkThatNeverStopsSleeping_reportsTheSleepersLeft_afterTheFailsafe() async throws {
    let store = makeStore(exhaustivity: .off, failsafeClock: failsafeClock, clock: clock)
    store.send(Countdown(times: 1_000_000))
    try await clock.waitForSleepers(count: 1)
    // When the failsafe expires the countdown is either asleep ("1 sleeper: … Countdown(…)") or between two
    // sleeps ("0 sleepers …; still running: Countdown(…)"): both name the work left.
    let fragments = ["run(): the clock still has", "after 30 seconds (the failsafe)", "Countdown("]
    let line = #line + 2
    await expectOneIssue(containing: fragments, atLine: line) {
      async let running: Void = clock.run()
      try await failsafeClock.waitForSleepers(count: 1)
      await failsafeClock.advance(by: .seconds(30))
      await running
    }
    await store.finish()
  }

  // MARK: - checkSuspension

  @Test func checkSuspension_withATestStore_letsItsWorkReachItsSleep_thenNamesIt() async throws {
    let store = makeStore(clock: clock)
    store.send(Countdown(times: 1))
    let error = await #expect(throws: TestClockError.self) { try await clock.checkSuspension() }
    let named = "1 task sleeps on the test clock: Countdown(times: 1) until 1.0 seconds"
    #expect(error?.description.contains(named) == true)
    await clock.advance(by: .seconds(1))
    await store.receive(Increment.self) { $0.count = 1 }
    try await clock.checkSuspension()
    await store.finish()
  }

  /// Without a test store, run() runs the clock as swift-clocks' does (BareTestClockTests has the rest).
  @Test func run_withoutATestStore_advancesUntilNothingSleeps() async throws {
    let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
    try await clock.waitForSleepers(count: 1)
    // A real-time bound longer than the default: a bare run yields, and under the thread sanitizer the pool
    // can be starved for longer than 30 seconds.
    await clock.run(timeout: .seconds(600))
    #expect(clock.now == .zero.advanced(by: .seconds(1)))
    sleeper.cancel()  // nothing once it has woken; a run that failed must not leave the test waiting for it
    try await sleeper.value
  }
}
