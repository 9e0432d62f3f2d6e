import Dispatch
import KatanaTestSupport
import KatanaTesting
import Testing

extension TimeEffects {
  /// Runs the jobs of the tasks that prefer it one at a time, in the order they arrive, so that the order in
  /// which a clock resumes its sleepers becomes the order in which they run.
  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
  final class SerialTaskExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "TimeEffects.SerialTaskExecutor")

    func enqueue(_ job: consuming ExecutorJob) {
      let job = UnownedJob(job)
      let executor = asUnownedTaskExecutor()
      queue.async { job.runSynchronously(on: executor) }
    }
  }

  @Suite("TestClock", .timeLimit(.failsafeMinutes(3)))
  struct TestClockTests {
    /// The instant `duration` after the clock's zero.
    static func at(_ duration: Duration) -> TestClock.Instant {
      .zero.advanced(by: duration)
    }

    @Test func sleep_returnsAtOnce_whenTheDeadlineIsInThePast() async throws {
      let clock = TestClock()
      await clock.advance(by: .seconds(5))
      try await clock.sleep(until: Self.at(.seconds(3)))
      try await clock.sleep(until: Self.at(.seconds(5) - .nanoseconds(1)))
      #expect(clock.now == Self.at(.seconds(5)))
      #expect(clock.sleeperCount == 0)
    }

    /// As with pointfreeco/swift-clocks' `TestClock`: a sleep until now is not over; it waits for the next
    /// advance, of any amount, zero included. (Before, it returned at once.)
    @Test func sleepUntilNow_waitsForTheNextAdvance_ofZeroToo() async throws {
      let clock = TestClock()
      await clock.advance(by: .seconds(5))
      let zero = Task { try await clock.sleep(for: .zero) }
      let untilNow = Task { try await clock.sleep(until: Self.at(.seconds(5))) }
      try await clock.waitForSleepers(count: 2)
      #expect(clock.sleepers.map(\.deadline) == [Self.at(.seconds(5)), Self.at(.seconds(5))])
      await clock.advance(by: .zero)
      try await zero.value
      try await untilNow.value
      #expect(clock.now == Self.at(.seconds(5)))
      #expect(clock.sleeperCount == 0)
    }

    @Test func sleeper_resumesOnlyOnceTheClockReachesItsDeadline() async throws {
      let clock = TestClock()
      let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
      try await clock.waitForSleepers(count: 1)
      #expect(clock.nextDeadline == Self.at(.seconds(1)))
      await clock.advance(by: .milliseconds(999))
      #expect(clock.sleeperCount == 1)
      await clock.advance(by: .milliseconds(1))
      try await sleeper.value
      #expect(clock.sleeperCount == 0)
      #expect(clock.nextDeadline == nil)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func advance_resumesSleepersInDeadlineOrder_andEqualDeadlinesInArrivalOrder() async throws {
      let clock = TestClock()
      let executor = SerialTaskExecutor()
      let order = Recorder<String>()
      let plan: [(String, Duration)] = [
        ("c", .seconds(3)), ("a1", .seconds(1)), ("b", .seconds(2)), ("a2", .seconds(1)),
      ]
      for (index, (name, delay)) in plan.enumerated() {
        Task(executorPreference: executor) {
          try await clock.sleep(until: Self.at(delay))
          order.append(name)
        }
        // One at a time, so that the arrival order is the plan's.
        try await clock.waitForSleepers(count: index + 1)
      }
      await clock.advance(by: .seconds(3))
      await order.wait(forCount: plan.count)
      #expect(order.values == ["a1", "a2", "b", "c"])
    }

    /// As with pointfreeco/swift-clocks' `TestClock`, an advance moves time deadline by deadline: a woken
    /// task sees its own deadline as the time, and the clock ends at the target. (Before, a clock that no test
    /// store used moved to the target in one step.)
    @Test func advance_movesTimeToEachDeadlineBeforeResumingItsSleepers_thenToTheTarget() async throws {
      let clock = TestClock()
      let sleeper = Task { () -> TestClock.Instant in
        try await clock.sleep(for: .seconds(1))
        return clock.now
      }
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .seconds(10))
      #expect(try await sleeper.value == Self.at(.seconds(1)))
      #expect(clock.now == Self.at(.seconds(10)))
    }

    @Test func advance_neverMovesTimeBack() async {
      let clock = TestClock()
      await clock.advance(to: Self.at(.seconds(5)))
      await clock.advance(to: Self.at(.seconds(2)))
      await clock.advance(by: .seconds(-1))
      #expect(clock.now == Self.at(.seconds(5)))
    }

    @Test func sleep_cancelled_throwsCancellationError_andLeavesTheClock() async throws {
      let clock = TestClock()
      let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
      try await clock.waitForSleepers(count: 1)
      sleeper.cancel()
      await #expect(throws: CancellationError.self) { try await sleeper.value }
      #expect(clock.sleeperCount == 0)
    }

    @Test func sleep_inAnAlreadyCancelledTask_throwsWithoutSleeping() async throws {
      let clock = TestClock()
      let sleeper = Task {
        withUnsafeCurrentTask { $0?.cancel() }
        try await clock.sleep(for: .seconds(1))
      }
      await #expect(throws: CancellationError.self) { try await sleeper.value }
      #expect(clock.sleeperCount == 0)
    }

    @Test func waitForSleepers_isCancellable() async throws {
      let clock = TestClock()
      let waiter = Task { try await clock.waitForSleepers(count: 1) }
      waiter.cancel()
      await #expect(throws: CancellationError.self) { try await waiter.value }
    }

    @Test func instant_arithmetic() {
      let start = TestClock.Instant.zero
      let later = start.advanced(by: .milliseconds(1500))
      #expect(start.duration(to: later) == .milliseconds(1500))
      #expect(start < later)
      #expect(later.description == "1.5 seconds")
    }
  }
}
