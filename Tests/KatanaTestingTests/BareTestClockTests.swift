import KatanaTestSupport
import KatanaTesting
import Testing

/// A `TestClock` that no test store uses, given to the test's own tasks: it behaves as pointfreeco/swift-clocks'
/// `TestClock`. One test per behaviour that swift-clocks' own tests check, written for this clock, plus the
/// timer on other clocks.
///
/// Where letting a task just started reach its sleep is what a test checks (the advance, `run()` and
/// `checkSuspension()` yield to it first, as swift-clocks' do), the test starts the task and calls the clock
/// at once, as swift-clocks' tests do. Otherwise the tests synchronise on the clock's own events
/// (`waitForSleepers`), never on real time.
@Suite("TestClock without a test store", .timeLimit(.failsafeMinutes(3)))
struct BareTestClockTests {
  /// The real-time bound of the runs below, which are not about it: a bare `run()` yields to let the work it
  /// wakes run, and in a parallel run under the thread sanitizer those trips through the pool can take longer
  /// than the default 30 seconds. (The timeout's own test drives it with a failsafe clock.)
  static let runTimeout = Duration.seconds(600)

  let clock = TestClock()

  /// The instant `duration` after the clock's zero.
  static func at(_ duration: Duration) -> TestClock.Instant {
    .zero.advanced(by: duration)
  }

  /// A task that sleeps one second on `clock` `times` times, counting each wake-up in `count`.
  static func sleepRepeatedly(
    on clock: TestClock, times: Int, counting count: LockedValue<Int>
  ) -> Task<Void, any Error> {
    Task {
      for _ in 0..<times {
        try await clock.sleep(until: clock.now.advanced(by: .seconds(1)))
        count.withLock { $0 += 1 }
      }
    }
  }

  // MARK: - advance

  @Test func advance_letsAJustStartedTaskReachItsSleep_andRunsItOnceWoken() async throws {
    let finished = LockedValue(false)
    let task = Task {
      try await clock.sleep(until: clock.now.advanced(by: .seconds(1)))
      finished.withLock { $0 = true }
    }
    #expect(!finished.current)
    await clock.advance(by: .seconds(1))
    #expect(finished.current)  // read before awaiting the task: the advance let it run
    try await task.valueCancelledWithTheTest
  }

  @Test func advance_wakesAReentrantTaskAtEachDeadlineWithinTheTarget() async throws {
    let count = LockedValue(0)
    let task = Self.sleepRepeatedly(on: clock, times: 5, counting: count)
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .seconds(5))
    #expect(count.current == 5)
    #expect(clock.now == Self.at(.seconds(5)))
    #expect(clock.sleeperCount == 0)
    task.cancel()  // does nothing once it is done; ends it if the advance fell short
    _ = await task.result
  }

  @Test func advance_stopsAtTheTarget_leavingLaterSleepsAsleep() async throws {
    let count = LockedValue(0)
    let task = Self.sleepRepeatedly(on: clock, times: 5, counting: count)
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .milliseconds(2500))
    #expect(count.current == 2)
    #expect(clock.now == Self.at(.milliseconds(2500)))
    #expect(clock.sleepers.map(\.deadline) == [Self.at(.seconds(3))])
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
  }

  @Test func now_isTheTargetOfTheLastAdvance() async throws {
    let task = Task { try await clock.sleep(for: .seconds(5)) }
    try await clock.waitForSleepers(count: 1)
    let start = clock.now
    await clock.advance(by: .seconds(5))
    #expect(clock.now == start.advanced(by: .seconds(5)))
    try await task.valueCancelledWithTheTest
  }

  @Test func sleepUntilExactlyNow_waitsForTheNextAdvance() async throws {
    let advancer = Task {
      try await clock.waitForSleepers(count: 1)
      // The sleep stays asleep while work runs: only an advance ends it, of zero too.
      await #expect(throws: TestClockError.self) { try await clock.checkSuspension() }
      await clock.advance()
    }
    try await clock.sleep(until: clock.now)
    try await advancer.valueCancelledWithTheTest
    #expect(clock.now == .zero)
  }

  // MARK: - run

  @Test func run_wakesTheSleeper_andRunsItsWork() async throws {
    let finished = LockedValue(false)
    let task = Task {
      try await clock.sleep(until: clock.now.advanced(by: .seconds(1)))
      finished.withLock { $0 = true }
    }
    #expect(!finished.current)
    await clock.run(timeout: Self.runTimeout)
    #expect(finished.current)
    #expect(clock.now == Self.at(.seconds(1)))
    try await task.valueCancelledWithTheTest
  }

  @Test func run_withReentrantWork_runsUntilNothingSleeps() async throws {
    let count = LockedValue(0)
    let task = Self.sleepRepeatedly(on: clock, times: 5, counting: count)
    try await clock.waitForSleepers(count: 1)
    await clock.run(timeout: Self.runTimeout)
    #expect(count.current == 5)
    #expect(clock.now == Self.at(.seconds(5)))
    task.cancel()
    _ = await task.result
  }

  @Test func run_withSeveralUnitsOfWorkOnATimer_ticksEachOne() async throws {
    let ticks = LockedValue(0)
    let task = Task {
      for await _ in clock.timer(interval: .seconds(1)).prefix(10) {
        ticks.withLock { $0 += 1 }
      }
    }
    try await clock.waitForSleepers(count: 1)
    await clock.run(timeout: Self.runTimeout)
    #expect(ticks.current == 10)
    #expect(clock.now == Self.at(.seconds(10)))
    task.cancel()
    await task.valueCancelledWithTheTest
  }

  @Test func run_wakesSleepersInDeadlineOrder_notTheOrderTheyStartedIn() async throws {
    let order = Recorder<Int>()
    let late = Task {
      try await clock.sleep(for: .seconds(2))
      order.append(2)
    }
    try await clock.waitForSleepers(count: 1)
    let early = Task {
      try await clock.sleep(for: .seconds(1))
      order.append(1)
    }
    try await clock.waitForSleepers(count: 2)
    await clock.run(timeout: Self.runTimeout)
    #expect(order.values == [1, 2])
    try await late.valueCancelledWithTheTest
    try await early.valueCancelledWithTheTest
  }

  /// The timeout is measured on a test clock of its own here, so that the test knows when it has run out;
  /// by default it is real time.
  @Test func run_withARepeatingTimer_recordsAnIssueOnceTheTimeoutRunsOut() async throws {
    let failsafeClock = TestClock()
    let clock = TestClock(failsafeClock: failsafeClock)
    let isRunning = LockedValue(true)
    let timer = Task {
      for await _ in clock.timer(interval: .seconds(1)) {
        if !isRunning.current { break }
      }
    }
    try await clock.waitForSleepers(count: 1)
    // expectOneIssue asserts the issue with `withKnownIssue`, and checks it is the only one.
    // The default failsafe: 30 seconds, unless `KATANA_FAILSAFE_SCALE` scales it (CI's thread-sanitizer pass).
    let failsafe = TestStoreConfiguration.defaultFailsafe
    await expectOneIssue(containing: [
      "run(): the clock still has 1 sleeper after \(failsafe.components.seconds) seconds (the failsafe): a task until",
      "A repeating timer never stops sleeping",
    ]) {
      async let running: Void = clock.run()
      try await failsafeClock.waitForSleepers(count: 1)
      await failsafeClock.advance(by: failsafe)
      await running
    }
    #expect(clock.sleeperCount == 1)  // the timer still sleeps
    isRunning.withLock { $0 = false }
    await clock.run(timeout: Self.runTimeout)  // its next tick ends it
    await timer.valueCancelledWithTheTest
    #expect(clock.sleeperCount == 0)
  }

  @Test func run_withATimeout_ofRealTime_recordsAnIssueForARepeatingTimer() async throws {
    let timer = Task {
      for await _ in clock.timer(interval: .seconds(1)) {}
    }
    try await clock.waitForSleepers(count: 1)
    await expectOneIssue(containing: ["run(): the clock still has 1 sleeper after 1 millisecond (the failsafe)"]) {
      // The timer never ends: the outcome does not depend on the timeout's length.
      await clock.run(timeout: .milliseconds(1))
    }
    timer.cancel()
    await timer.valueCancelledWithTheTest
  }

  // MARK: - checkSuspension

  @Test func checkSuspension_throwsWhileSomethingSleeps_andNotOnceItIsDone() async throws {
    let task = Task { try await clock.sleep(for: .seconds(1)) }
    let error = await #expect(throws: TestClockError.self) { try await clock.checkSuspension() }
    #expect(
      error
        == .sleepersSuspended(
          "checkSuspension(): 1 task sleeps on the test clock: a task until 1.0 seconds. Advance the clock "
            + "(`advance(by:)`, `run()`) until the work is done, or cancel it."))
    await clock.advance(by: .seconds(1))
    try await clock.checkSuspension()
    try await task.valueCancelledWithTheTest
  }

  // MARK: - Cancellation

  @Test func cancelledBeforeItSleeps_theTaskNeverRuns_andRunReturns() async throws {
    let finished = LockedValue(false)
    let task = Task {
      try await clock.sleep(for: .seconds(1))
      finished.withLock { $0 = true }
    }
    task.cancel()
    await clock.run(timeout: Self.runTimeout)
    #expect(!finished.current)
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(clock.now == .zero)
  }

  @Test func cancellingASleeper_removesItFromTheClock() async throws {
    let task = Task { try await clock.sleep(for: .seconds(1)) }
    try await clock.waitForSleepers(count: 1)
    task.cancel()
    try await clock.checkSuspension()
    #expect(clock.sleeperCount == 0)
    await #expect(throws: CancellationError.self) { try await task.value }
  }

  // MARK: - timer

  @Test func timer_ticksAtEachInterval_withTheClocksTime() async throws {
    let instants = Recorder<TestClock.Instant>()
    let task = Task {
      for await now in clock.timer(interval: .seconds(1)).prefix(3) {
        instants.append(now)
      }
    }
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .seconds(3))
    #expect(instants.values == [Self.at(.seconds(1)), Self.at(.seconds(2)), Self.at(.seconds(3))])
    task.cancel()
    await task.valueCancelledWithTheTest
  }

  @Test func timer_skipsTheTicksThatPassedWhileTheLoopRan() async throws {
    let instants = Recorder<TestClock.Instant>()
    let bodyDone = Gate()
    let task = Task {
      var ticks = clock.timer(interval: .seconds(1)).makeAsyncIterator()
      if let first = await ticks.next() { instants.append(first) }
      await bodyDone.wait()  // a loop body that runs while the clock passes two more tick times
      if let next = await ticks.next() { instants.append(next) }
    }
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .seconds(1))
    await instants.wait(forCount: 1)
    await clock.advance(by: .milliseconds(2500))
    bodyDone.open()
    try await clock.waitForSleepers(count: 1)
    #expect(clock.nextDeadline == Self.at(.seconds(4)))
    await clock.advance(by: .milliseconds(500))
    await instants.wait(forCount: 2)
    #expect(instants.values == [Self.at(.seconds(1)), Self.at(.seconds(4))])
    await task.valueCancelledWithTheTest
  }

  @Test func timer_endsWhenItsTaskIsCancelled() async throws {
    let task = Task { () -> Int in
      var ticks = 0
      for await _ in clock.timer(interval: .seconds(1)) { ticks += 1 }
      return ticks
    }
    try await clock.waitForSleepers(count: 1)
    task.cancel()
    #expect(await task.valueCancelledWithTheTest == 0)
    #expect(clock.sleeperCount == 0)
  }

  @Test func timer_onAnImmediateClock_ticksAtOnce() async {
    let clock = ImmediateClock()
    var instants: [ImmediateClock.Instant] = []
    for await now in clock.timer(interval: .seconds(1)).prefix(3) {
      instants.append(now)
    }
    #expect(instants == [Self.at(.seconds(1)), Self.at(.seconds(2)), Self.at(.seconds(3))])
  }

  @Test(arguments: [Duration.zero, .seconds(-1)])
  func timer_withAnIntervalNotLongerThanZero_endsAtOnce(interval: Duration) async {
    var ticks = 0
    for await _ in clock.timer(interval: interval) { ticks += 1 }
    #expect(ticks == 0)
    #expect(clock.sleeperCount == 0)
  }
}

extension Task {
  /// The task's value; if the waiting test is cancelled (at its time limit), the task is cancelled too. A
  /// task that sleeps on a clock nobody advances any more would otherwise keep the test, and the whole run,
  /// waiting for it.
  fileprivate var valueCancelledWithTheTest: Success {
    get async throws {
      try await withTaskCancellationHandler {
        try await value
      } onCancel: {
        cancel()
      }
    }
  }
}

extension Task where Failure == Never {
  /// See the other `valueCancelledWithTheTest`: for a task that does not throw.
  fileprivate var valueCancelledWithTheTest: Success {
    get async {
      await withTaskCancellationHandler {
        await value
      } onCancel: {
        cancel()
      }
    }
  }
}
