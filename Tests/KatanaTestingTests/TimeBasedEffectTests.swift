import Katana
import KatanaTestSupport
import KatanaTesting
import Testing

extension TimeEffects {
  /// A side effect that logs `entry` once its search is debounced by 300 ms.
  static func search(_ entry: String) -> Script {
    Script { context in
      try await context.debounce(id: ID(), for: .milliseconds(300)) {
        try await context.dispatch(Log(entry: entry))
      }
    }
  }

  /// A side effect that logs `entry`, throttled to once per second.
  static func throttled(_ entry: String, _ mode: ThrottleMode) -> Script {
    Script { context in
      try await context.throttle(id: ID(), for: .seconds(1), mode: mode) {
        try await context.dispatch(Log(entry: entry))
      }
    }
  }

  /// A side effect that starts a one-second timer dispatching `Tick`, and records the tick count after each.
  static func startTimer(recording ticks: Recorder<Int>) -> Script {
    Script { context in
      try await context.timer(id: ID(), every: .seconds(1)) {
        try await context.dispatch(Tick())
        ticks.append(context.getState().ticks)
      }
    }
  }

  @Suite("Debounce", .timeLimit(.failsafeMinutes(3)))
  struct DebounceTests {
    @Test func debounce_runsOnceTheQuietPeriodHasPassed() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      let search = store.send(TimeEffects.search("a"))
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .milliseconds(299))
      #expect(clock.sleeperCount == 1)
      #expect(store.state.log.isEmpty)
      await clock.advance(by: .milliseconds(1))
      try await search.value
      #expect(store.state.log == ["a"])
      #expect(store.runningEffectCount == 0)
    }

    @Test func debounce_newInputRestartsTheQuietPeriod_andOnlyTheLastCallRuns() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      let first = store.send(TimeEffects.search("a"))
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .milliseconds(200))
      let second = store.send(TimeEffects.search("ab"))
      await #expect(throws: CancellationError.self) { try await first.value }
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .milliseconds(299))
      #expect(store.state.log.isEmpty)
      await clock.advance(by: .milliseconds(1))
      try await second.value
      #expect(store.state.log == ["ab"])
      #expect(store.runningEffectCount == 0)
    }

    @Test func debounce_newInputCancelsAnOperationAlreadyRunning() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      let started = Gate()
      let stale = store.send(
        Script { context in
          try await context.debounce(id: ID(), for: .milliseconds(300)) {
            started.open()
            try await clock.sleep(for: .seconds(60))  // a slow request
          }
        })
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .milliseconds(300))
      await started.wait()
      let fresh = store.send(TimeEffects.search("fresh"))
      await #expect(throws: CancellationError.self) { try await stale.value }
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .milliseconds(300))
      try await fresh.value
      #expect(store.state.log == ["fresh"])
    }

    /// A quiet period of zero is a sleep until now: on a test clock it waits for the next advance, of zero
    /// too (as with pointfreeco/swift-clocks' `TestClock`).
    @Test func debounce_zeroDuration_runsOnTheNextAdvance_evenOfZero() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      let task = store.send(
        Script { context in
          try await context.debounce(id: ID(), for: .zero) { try await context.dispatch(Log(entry: "now")) }
        })
      // A plain store: the advance cannot wait for the work to reach its sleep, so the test does.
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .zero)
      try await task.value
      #expect(store.state.log == ["now"])
    }

    @Test func debounce_negativeDuration_throwsInvalidDuration() async throws {
      let store = try await makeStore(clock: TestClock())
      await #expect(
        throws: EffectError.invalidDuration(
          "debounce(id:for:operation:) needs a duration of zero or more, got -1.0 seconds.")
      ) {
        try await store.dispatch(Script { context in try await context.debounce(id: ID(), for: .seconds(-1)) {} })
      }
    }
  }

  @Suite("Throttle", .timeLimit(.failsafeMinutes(3)))
  struct ThrottleTests {
    @Test func leading_runsTheFirstCall_dropsTheCallsOfTheWindow_thenRunsAgain() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      try await store.dispatch(throttled("1", .leading))
      #expect(store.state.log == ["1"])
      await #expect(throws: CancellationError.self) { try await store.dispatch(throttled("2", .leading)) }
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .milliseconds(999))
      await #expect(throws: CancellationError.self) { try await store.dispatch(throttled("3", .leading)) }
      await clock.advance(by: .milliseconds(1))
      try await store.waitUntilNoRunningEffects()
      try await store.dispatch(throttled("4", .leading))
      #expect(store.state.log == ["1", "4"])
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .seconds(1))
      try await store.waitUntilNoRunningEffects()
    }

    @Test func latest_runsTheFirstCallAtOnce_andTheLatestCallOfEachWindowAtItsEnd() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      try await store.dispatch(throttled("1", .latest))
      #expect(store.state.log == ["1"])
      try await clock.waitForSleepers(count: 1)
      let second = store.send(throttled("2", .latest))
      try await store.waitForRunningEffects(count: 2)  // the window and the held call
      let third = store.send(throttled("3", .latest))
      await #expect(throws: CancellationError.self) { try await second.value }
      await clock.advance(by: .milliseconds(999))
      #expect(store.state.log == ["1"])
      await clock.advance(by: .milliseconds(1))
      try await third.value
      #expect(store.state.log == ["1", "3"])
      // Running the held call opened a new window.
      try await clock.waitForSleepers(count: 1)
      let fourth = store.send(throttled("4", .latest))
      try await store.waitForRunningEffects(count: 2)
      await clock.advance(by: .seconds(1))
      try await fourth.value
      #expect(store.state.log == ["1", "3", "4"])
      // A window in which nothing arrives closes, and the registry is empty again.
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .seconds(1))
      try await store.waitUntilNoRunningEffects()
      try await store.dispatch(throttled("5", .latest))
      #expect(store.state.log == ["1", "3", "4", "5"])
    }

    @Test func cancelByID_closesTheWindow_andDropsTheHeldCall() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      try await store.dispatch(throttled("1", .latest))
      let held = store.send(throttled("2", .latest))
      try await store.waitForRunningEffects(count: 2)
      store.cancel(id: ID())
      await #expect(throws: CancellationError.self) { try await held.value }
      try await store.waitUntilNoRunningEffects()
      #expect(clock.sleeperCount == 0)
      try await store.dispatch(throttled("3", .latest))
      #expect(store.state.log == ["1", "3"])
    }

    @Test func heldCall_whoseCallerIsCancelled_isWithdrawn() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      try await store.dispatch(throttled("1", .latest))
      let caller = Task { try await store.dispatch(throttled("2", .latest)) }
      try await store.waitForRunningEffects(count: 2)
      caller.cancel()
      await #expect(throws: CancellationError.self) { try await caller.value }
      try await store.waitForRunningEffects(count: 1)
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .seconds(1))
      try await store.waitUntilNoRunningEffects()
      #expect(store.state.log == ["1"])
    }

    @Test func shutdown_dropsTheHeldCall_andClosesTheWindow() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      try await store.dispatch(throttled("1", .latest))
      let held = store.send(throttled("2", .latest))
      try await store.waitForRunningEffects(count: 2)
      await store.shutdown()
      await #expect(throws: CancellationError.self) { try await held.value }
      #expect(store.state.log == ["1"])
    }

    @Test func intervalNotPositive_throwsInvalidDuration() async throws {
      let store = try await makeStore(clock: TestClock())
      await #expect(
        throws: EffectError.invalidDuration(
          "throttle(id:for:mode:operation:) needs an interval longer than zero, got 0.0 seconds.")
      ) {
        try await store.dispatch(
          Script { context in try await context.throttle(id: ID(), for: .zero, mode: .leading) {} })
      }
    }
  }

  @Suite("Timer", .timeLimit(.failsafeMinutes(3)))
  struct TimerTests {
    @Test func timer_ticksOncePerPeriod_andStopsWhenCancelled() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      let ticks = Recorder<Int>()
      let timer = store.send(startTimer(recording: ticks))
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .milliseconds(999))
      #expect(store.state.ticks == 0)
      await clock.advance(by: .milliseconds(1))
      await ticks.wait(forCount: 1)
      for period in 2...5 {
        try await clock.waitForSleepers(count: 1)
        await clock.advance(by: .seconds(1))
        await ticks.wait(forCount: period)
      }
      #expect(ticks.values == [1, 2, 3, 4, 5])
      store.cancel(id: ID())
      await #expect(throws: CancellationError.self) { try await timer.value }
      #expect(clock.sleeperCount == 0)
      await clock.advance(by: .seconds(5))
      #expect(store.state.ticks == 5)
      #expect(store.runningEffectCount == 0)
    }

    /// A test clock wakes the timer at each tick time in turn (advanced by three intervals at once, it ticks
    /// three times), so the ticks to merge pass while the first tick runs long, held by a gate.
    @Test func timer_keepsItsScheduleWithoutDrift_andMergesTheTicksMissedWhileATickRanLong() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      let ticks = Recorder<Int>()
      let firstTickEnds = Gate()
      let timer = store.send(
        Script { context in
          try await context.timer(id: ID(), every: .seconds(1)) {
            try await context.dispatch(Tick())
            ticks.append(context.getState().ticks)
            await firstTickEnds.wait()
          }
        })
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .seconds(1))
      await ticks.wait(forCount: 1)
      await clock.advance(by: .milliseconds(2500))  // the tick times 2 s and 3 s pass while the first tick runs
      firstTickEnds.open()
      await ticks.wait(forCount: 2)  // one late tick for both
      try await clock.waitForSleepers(count: 1)
      #expect(clock.nextDeadline == .zero.advanced(by: .seconds(4)))  // still on the schedule
      #expect(ticks.values == [1, 2])
      await clock.advance(by: .milliseconds(500))
      await ticks.wait(forCount: 3)
      #expect(ticks.values == [1, 2, 3])
      store.cancel(id: ID())
      await #expect(throws: CancellationError.self) { try await timer.value }
    }

    @Test func timer_advancedByThreeIntervalsAtOnce_ticksThreeTimes() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      let ticks = Recorder<Int>()
      let timer = store.send(startTimer(recording: ticks))
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .milliseconds(3500))
      await ticks.wait(forCount: 3)
      try await clock.waitForSleepers(count: 1)
      #expect(clock.nextDeadline == .zero.advanced(by: .seconds(4)))
      #expect(ticks.values == [1, 2, 3])
      store.cancel(id: ID())
      await #expect(throws: CancellationError.self) { try await timer.value }
    }

    @Test func timer_cancelInFlight_replacesTheTimerRunningUnderTheID() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      let first = store.send(
        Script { context in
          try await context.timer(id: ID(), every: .seconds(1)) { try await context.dispatch(Log(entry: "first")) }
        })
      try await clock.waitForSleepers(count: 1)
      let ticks = Recorder<Int>()
      let second = store.send(
        Script { context in
          try await context.timer(id: ID(), every: .seconds(1), cancelInFlight: true) {
            try await context.dispatch(Log(entry: "second"))
            ticks.append(context.getState().log.count)
          }
        })
      await #expect(throws: CancellationError.self) { try await first.value }
      try await clock.waitForSleepers(count: 1)  // the first timer's sleep was cancelled: this is the second's
      await clock.advance(by: .seconds(1))
      await ticks.wait(forCount: 1)
      #expect(store.state.log == ["second"])
      #expect(store.runningEffectCount == 1)
      store.cancel(id: ID())
      await #expect(throws: CancellationError.self) { try await second.value }
      #expect(store.runningEffectCount == 0)
    }

    @Test func timer_stopsWhenTheStoreShutsDown() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      let timer = store.send(startTimer(recording: Recorder()))
      try await clock.waitForSleepers(count: 1)
      await store.shutdown()
      await #expect(throws: CancellationError.self) { try await timer.value }
      #expect(clock.sleeperCount == 0)
    }

    @Test func timer_tickError_stopsTheTimer_andReachesTheCaller() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      let timer = store.send(
        Script { context in
          try await context.timer(id: ID(), every: .seconds(1)) { throw TestError(code: 1) }
        })
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .seconds(1))
      await #expect(throws: TestError(code: 1)) { try await timer.value }
      #expect(store.runningEffectCount == 0)
    }

    @Test func timer_intervalNotPositive_throwsInvalidDuration() async throws {
      let store = try await makeStore(clock: TestClock())
      await #expect(
        throws: EffectError.invalidDuration(
          "timer(id:every:cancelInFlight:tick:) needs an interval longer than zero, got 0.0 seconds.")
      ) {
        try await store.dispatch(Script { context in try await context.timer(id: ID(), every: .zero) {} })
      }
    }
  }

  @Suite("Time-based effects: stress", .timeLimit(.failsafeMinutes(3)))
  struct TimeBasedEffectStressTests {
    @Test(arguments: [UInt64(7), 8])
    func manyConcurrentDebouncedAndThrottledCalls_finishWithNoLeakedEntries(seed: UInt64) async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      var generator = SeededGenerator(seed: seed)
      let calls = (0..<200).map { _ in
        (
          id: Int.random(in: 0..<6, using: &generator), kind: Int.random(in: 0..<3, using: &generator),
          delay: Duration.milliseconds(Int.random(in: 0..<500, using: &generator))
        )
      }
      // Moves time on whenever somebody sleeps, until cancelled: waits for events, never for time.
      let driver = Task {
        while !Task.isCancelled {
          try await clock.waitForSleepers(count: 1)
          if let latest = clock.sleepers.last?.deadline { await clock.advance(to: latest) }
        }
      }
      let completed = try await withThrowingTaskGroup(of: Bool.self) { group in
        for call in calls {
          group.addTask {
            let id = ID(value: call.id)
            let script = Script { context in
              switch call.kind {
              case 0: try await context.debounce(id: id, for: call.delay) { try await context.dispatch(Tick()) }
              case 1:
                try await context.throttle(id: id, for: call.delay + .milliseconds(1), mode: .latest) {
                  try await context.dispatch(Tick())
                }
              default:
                try await context.throttle(id: id, for: call.delay + .milliseconds(1), mode: .leading) {
                  try await context.dispatch(Tick())
                }
              }
            }
            do {
              try await store.dispatch(script)
              return true
            } catch is CancellationError {
              return false
            }
          }
        }
        return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
      }
      try await store.waitUntilNoRunningEffects()
      driver.cancel()
      _ = await driver.result
      // A completed call dispatched its tick; a cancelled one may have, just before being cancelled.
      #expect(store.state.ticks >= completed)
      #expect(store.state.ticks <= calls.count)
      #expect(store.runningEffectCount == 0)
    }
  }
}
