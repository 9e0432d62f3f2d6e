import KatanaTestSupport
import KatanaTesting
import Testing

/// When everything the store has in flight is asleep on the test clock, nothing can happen until the test
/// advances it: the test store's waits fail at once, naming the sleepers, instead of waiting for the
/// failsafe. Every test here uses a failsafe clock that nobody advances, so a wait that does not fail fast
/// hangs until the suite's time limit.
@Suite("TestStore: failing fast when the work sleeps on the test clock", .timeLimit(.failsafeMinutes(3)))
struct TestStoreFailFastTests {
  let clock = TestClock()
  let failsafeClock = TestClock()

  func makeClockedStore(
    exhaustivity: Exhaustivity = .on, fileID: String = #fileID, filePath: String = #filePath, line: Int = #line,
    column: Int = #column
  ) -> CounterTestStore {
    makeStore(
      exhaustivity: exhaustivity, failsafeClock: failsafeClock, clock: clock, fileID: fileID, filePath: filePath,
      line: line, column: column)
  }

  static let napSleeps =
    #"Nap(duration: 0.3 seconds, tag: "woke") is sleeping on the test clock until 0.3 seconds (the clock is at "#
    + "0.0 seconds)"

  @Test func receive_whenTheOnlyWorkSleepsOnTheTestClock_failsAtOnce_namingTheSleeper() async throws {
    let store = makeClockedStore()
    store.send(Nap())
    try await clock.waitForSleepers(count: 1)
    let fragments = [
      "Expected to receive Log, but nothing was received, and nothing can arrive until the test clock moves: "
        + Self.napSleeps + "; advance the clock (`clock.advance(by:)`) before expecting what follows the sleep."
    ]
    let line = #line + 2
    await expectOneIssue(containing: fragments, atLine: line) {
      await store.receive(Log.self) { $0.log = ["woke"] }
    }
    await clock.advance(by: .milliseconds(300))
    await store.receive(Log.self) { $0.log = ["woke"] }
    await store.finish()
  }

  /// The advance waits for work still on its way to its sleep (here, held at a gate the test opened just
  /// before), then wakes it: no `waitForSleepers` first. (Before, the advance found nobody asleep, and the
  /// sleep that started later measured from the new time.)
  @Test func advancingBeforeTheSleepStarts_waitsForTheSleep_thenWakesIt() async throws {
    for _ in 0..<50 {
      let clock = TestClock()
      let store = makeStore(failsafeClock: failsafeClock, clock: clock)
      let gate = Gate()
      store.send(
        Script(name: "late nap") { context in
          await gate.wait()
          try await context.clock.sleep(for: .milliseconds(300))
          try await context.dispatch(Log(tag: "woke"))
        })
      gate.open()
      await clock.advance(by: .milliseconds(300))
      await store.receive(Log.self) { $0.log = ["woke"] }
      await store.finish()
      #expect(clock.now == .zero.advanced(by: .milliseconds(300)))
    }
  }

  @Test func receive_ofTheWrongItem_whileTheRestSleeps_failsAtOnce_andTakesTheReceivedOne() async throws {
    let store = makeClockedStore()
    store.send(
      Script(name: "log, then nap") { context in
        try await context.dispatch(Log(tag: "first"))
        try await context.clock.sleep(for: .seconds(1))
        try await context.dispatch(Log(tag: "second"))
      })
    try await clock.waitForSleepers(count: 1)
    await expectOneIssue(containing: [
      #"Expected to receive Increment, but received Log(tag: "first")."#,
      "Nothing else can arrive until the test clock moves: ", "is sleeping on the test clock until 1.0 seconds",
    ]) {
      await store.receive(Increment.self)
    }
    await clock.advance(by: .seconds(1))
    await store.receive(Log(tag: "second")) { $0.log = ["first", "second"] }
    await store.finish()
  }

  @Test func finish_whenWorkSleepsOnTheTestClock_failsAtOnce_andCancelsIt() async throws {
    let store = makeClockedStore()
    store.send(Nap())
    try await clock.waitForSleepers(count: 1)
    let fragments = [
      "finish(): the store still has work in flight, and it cannot go on until the test clock moves: "
        + Self.napSleeps + ". Advance the clock, or cancel the work, before the test ends."
    ]
    await expectOneIssue(containing: fragments) {
      await store.finish()
    }
    #expect(clock.sleeperCount == 0)
  }

  @Test func finish_nonExhaustive_cancelsWorkAsleepOnTheTestClock_withoutAnIssue() async throws {
    let store = makeClockedStore(exhaustivity: .off)
    store.send(Nap())
    try await clock.waitForSleepers(count: 1)
    await store.finish()
    #expect(clock.sleeperCount == 0)
  }

  @Test func dispatch_ofASideEffectThatSleepsOnTheTestClock_failsAtOnce_andThrows() async throws {
    let store = makeClockedStore()
    let thrown = LockedValue<(any Error)?>(nil)
    await expectOneIssue(containing: [
      "Nap(duration: 0.3 seconds, tag: \"woke\") cannot return until the test clock moves: " + Self.napSleeps,
      "start it with `send` and drive the clock from the test",
    ]) {
      do {
        try await store.dispatch(Nap())
      } catch {
        thrown.withLock { $0 = error }
      }
    }
    // The error a failed `#require` throws: Swift Testing does not report it again (one mistake, one issue).
    #expect(thrown.current is ExpectationFailedError)
    await store.finish()
  }

  @Test func sentTaskValue_whenItSleepsOnTheTestClock_failsAtOnce() async throws {
    let store = makeClockedStore()
    let nap = store.send(Nap())
    try await clock.waitForSleepers(count: 1)
    let thrown = LockedValue<(any Error)?>(nil)
    await expectOneIssue(containing: ["cannot return until the test clock moves: " + Self.napSleeps]) {
      do {
        try await nap.value
      } catch {
        thrown.withLock { $0 = error }
      }
    }
    #expect(thrown.current is ExpectationFailedError)  // reported once: the issue, not a caught error too
    await store.finish()
  }

  @Test func waitUntilIdle_whenWorkSleepsOnTheTestClock_failsAtOnce() async throws {
    let store = makeClockedStore()
    store.send(Nap())
    try await clock.waitForSleepers(count: 1)
    await expectOneIssue(containing: ["waitUntilIdle(): the store cannot become idle until the test clock moves: "]) {
      await store.waitUntilIdle()
    }
    await clock.advance(by: .milliseconds(300))
    await store.receive(Log.self) { $0.log = ["woke"] }
    await store.finish()
  }

  // MARK: - Never too early

  @Test func receive_whileOtherWorkIsAwake_waitsForIt_evenIfSomeWorkSleeps() async throws {
    let store = makeClockedStore()
    store.send(Nap())
    try await clock.waitForSleepers(count: 1)
    // Work that can run (it yields, so it is queued on the test store's executor again and again).
    store.send(
      Script(name: "busy") { context in
        for _ in 0..<200 { await Task.yield() }
        try await context.dispatch(Log(tag: "after gate"))
      })
    await store.receive(Log(tag: "after gate")) { $0.log = ["after gate"] }
    await clock.advance(by: .milliseconds(300))
    await store.receive(Log(tag: "woke")) { $0.log = ["after gate", "woke"] }
    await store.finish()
  }

  @Test func release_withNothingInFlight_recordsNothing_evenIfOthersSleepOnTheSameClock() async throws {
    let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
    try await clock.waitForSleepers(count: 1)
    do {
      let store = makeClockedStore()
      try await store.dispatch(Increment()) { $0.count = 1 }
    }
    sleeper.cancel()
    _ = await sleeper.result
  }

  /// A sleep in a task of its own (here the debounce's run): the store hands the waiting side effect's work
  /// over to the run's task, so the wait still fails at once, naming the sleeper.
  @Test func receive_whenTheSleepIsInADebouncesTask_failsAtOnce_namingTheSleeper() async throws {
    let store = makeClockedStore()
    store.send(
      Script(name: "debounced") { context in
        try await context.debounce(id: "search", for: .milliseconds(300)) {
          try await context.dispatch(Log(tag: "searched"))
        }
      })
    try await clock.waitForSleepers(count: 1)
    await expectOneIssue(containing: [
      "Expected to receive Increment, but nothing was received, and nothing can arrive until the test clock moves",
      #"Script(name: "debounced", "#, "is sleeping on the test clock until 0.3 seconds",
    ]) {
      await store.receive(Increment.self)
    }
    await clock.advance(by: .milliseconds(300))
    await store.receive(Log.self) { $0.log = ["searched"] }
    await store.finish()
  }

  /// Runs under ids nest: the side effect waits for a run, which waits for another, which sleeps.
  @Test func finish_whenANestedRunSleeps_failsAtOnce_andCancelsIt() async throws {
    let store = makeClockedStore()
    store.send(
      Script(name: "nested runs") { context in
        try await context.run(id: "outer") {
          try await context.run(id: "inner") {
            try await context.clock.sleep(for: .seconds(2))
          }
        }
      })
    try await clock.waitForSleepers(count: 1)
    await expectOneIssue(containing: [
      "finish(): the store still has work in flight, and it cannot go on until the test clock moves",
      #"Script(name: "nested runs", "#, "is sleeping on the test clock until 2.0 seconds",
    ]) {
      await store.finish()
    }
    #expect(clock.sleeperCount == 0)
  }

  /// A throttled call held for the end of its window waits for the task that closes the window, which
  /// sleeps on the clock.
  @Test func receive_whenAThrottledCallIsHeldForItsWindow_failsAtOnce() async throws {
    let store = makeClockedStore()
    let throttled = { @Sendable (tag: String) in
      Script(name: tag) { context in
        try await context.throttle(id: "save", for: .seconds(1), mode: .latest) {
          try await context.dispatch(Log(tag: tag))
        }
      }
    }
    store.send(throttled("first"))
    await store.receive(Log(tag: "first")) { $0.log = ["first"] }
    try await clock.waitForSleepers(count: 1)
    store.send(throttled("second"))
    try await store.store.waitForRunningEffects(count: 2)  // the window and the held call
    await expectOneIssue(containing: [
      "Expected to receive Increment, but nothing was received, and nothing can arrive until the test clock moves",
      "is sleeping on the test clock until 1.0 seconds",
    ]) {
      await store.receive(Increment.self)
    }
    await clock.advance(by: .seconds(1))
    await store.receive(Log(tag: "second")) { $0.log = ["first", "second"] }
    await store.finish()
  }

  /// A run that is awake (here waiting for a gate the test opens) is not parked, even while other work
  /// sleeps: the wait waits for it.
  @Test func receive_whileARunIsAwake_waitsForIt_evenIfOtherWorkSleeps() async throws {
    let store = makeClockedStore()
    store.send(Nap())
    try await clock.waitForSleepers(count: 1)
    store.send(
      Script(name: "busy run") { context in
        try await context.run(id: "busy") {
          for _ in 0..<200 { await Task.yield() }
          try await context.dispatch(Log(tag: "after gate"))
        }
      })
    await store.receive(Log(tag: "after gate")) { $0.log = ["after gate"] }
    await clock.advance(by: .milliseconds(300))
    await store.receive(Log(tag: "woke")) { $0.log = ["after gate", "woke"] }
    await store.finish()
  }

  /// Seeded rounds of side effects that each sleep a distinct time on the test clock, advanced one deadline
  /// at a time, each advance followed at once by a `receive`: the woken task is still running when the
  /// receive looks, and it must wait for it, never fail. Closed form: no issue, and the log in deadline
  /// order.
  @Test(arguments: [11, 12, 13] as [UInt64])
  func advancingAndReceivingAtOnce_neverFailsEarly(seed: UInt64) async throws {
    try await advanceAndReceiveRounds(seed: seed) { store, delay, _ in
      store.send(Nap(duration: .milliseconds(delay * 10), tag: "\(delay)"))
    }
  }

  /// The same rounds with each sleep inside an effect tool's task of its own (a run under an id, or a
  /// debounce, chosen by the seed): the work is handed over to that task, which is no longer asleep once
  /// the clock has moved, so the receive waits for it and never fails early.
  @Test(arguments: [21, 22, 23] as [UInt64])
  func advancingAndReceivingAtOnce_withSleepsInEffectTasks_neverFailsEarly(seed: UInt64) async throws {
    try await advanceAndReceiveRounds(seed: seed) { store, delay, generator in
      let debounced = Bool.random(using: &generator)
      store.send(
        Script(name: "\(delay)") { context in
          if debounced {
            try await context.debounce(id: delay, for: .milliseconds(delay * 10)) {
              try await context.dispatch(Log(tag: "\(delay)"))
            }
          } else {
            try await context.run(id: delay) {
              try await context.clock.sleep(for: .milliseconds(delay * 10))
              try await context.dispatch(Log(tag: "\(delay)"))
            }
          }
        })
    }
  }

  /// 15 seeded rounds: `send(store, delay, &generator)` starts work that sleeps `delay` × 10 ms on the
  /// store's clock and then logs `delay`; the rounds advance to each deadline and receive the log at once.
  func advanceAndReceiveRounds(
    seed: UInt64, send: (CounterTestStore, Int, inout SeededGenerator) -> Void
  ) async throws {
    var generator = SeededGenerator(seed: seed)
    for _ in 0..<15 {
      let clock = TestClock()
      let store = makeStore(failsafeClock: failsafeClock, clock: clock)
      let count = Int.random(in: 1...5, using: &generator)
      let delays = Array((1...20).shuffled(using: &generator).prefix(count))
      for delay in delays {
        send(store, delay, &generator)
      }
      try await clock.waitForSleepers(count: count)
      var log: [String] = []
      for delay in delays.sorted() {
        await clock.advance(to: .zero.advanced(by: .milliseconds(delay * 10)))
        log.append("\(delay)")
        await store.receive(Log(tag: "\(delay)")) { [log] in $0.log = log }
      }
      await store.finish()
      #expect(store.state.log == delays.sorted().map { "\($0)" })
    }
  }
}
