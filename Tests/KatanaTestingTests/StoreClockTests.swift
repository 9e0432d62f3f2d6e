import KatanaTestSupport
import KatanaTesting
import Testing

extension TimeEffects {
  /// Records where a clock was read, and whether it was the expected one.
  final class ClockReadings: Sendable {
    private let readings = LockedValue<[String]>([])

    func record(_ place: String, _ clock: any Clock<Duration>, expected: TestClock?) {
      let verdict: String
      if let expected {
        verdict = (clock as? TestClock) === expected ? "the injected clock" : "another clock (\(type(of: clock)))"
      } else {
        verdict = clock is ContinuousClock ? "ContinuousClock" : "another clock (\(type(of: clock)))"
      }
      readings.withLock { $0.append("\(place): \(verdict)") }
    }

    var values: [String] { readings.current }
  }

  /// An interceptor that records the clock of its context when the store initialises it, and for each item;
  /// before handing on a `Sleeper`, it sleeps one second on that clock.
  static func clockReadingInterceptor(_ readings: ClockReadings, expected: TestClock?) -> StoreInterceptor {
    { context in
      readings.record("interceptor set-up", context.clock, expected: expected)
      return { next in
        { item in
          readings.record("interceptor", context.clock, expected: expected)
          if item is Sleeper {
            try await context.clock.sleep(for: .seconds(1))
          }
          try await next(item)
        }
      }
    }
  }

  /// A side effect that the clock-reading interceptor sleeps before.
  struct Sleeper: SideEffect {
    func sideEffect(_ context: Context) async throws {}
  }

  @Suite("Store clock", .timeLimit(.failsafeMinutes(3)))
  struct StoreClockTests {
    @Test func defaultClock_isAContinuousClock_forSideEffectsAndInterceptors() async throws {
      #expect(StoreConfiguration().clock is ContinuousClock)
      let readings = ClockReadings()
      let store = TestStore(
        initialState: CounterState(), interceptors: [clockReadingInterceptor(readings, expected: nil)])
      try await store.dispatch(
        Script { context in
          readings.record("side effect", context.clock, expected: nil)
          readings.record("type-erased context", (context as any AnySideEffectContext).clock, expected: nil)
        })
      #expect(
        readings.values == [
          "interceptor set-up: ContinuousClock", "interceptor: ContinuousClock", "side effect: ContinuousClock",
          "type-erased context: ContinuousClock",
        ])
    }

    @Test func injectedClock_isTheClockThatSideEffectsAndInterceptorsRead() async throws {
      let clock = TestClock()
      let readings = ClockReadings()
      let store = TestStore(
        initialState: CounterState(), interceptors: [clockReadingInterceptor(readings, expected: clock)],
        configuration: StoreConfiguration(clock: clock))
      try await store.dispatch(
        Script { context in
          readings.record("side effect", context.clock, expected: clock)
          readings.record("type-erased context", (context as any AnySideEffectContext).clock, expected: clock)
        })
      #expect(
        readings.values == [
          "interceptor set-up: the injected clock", "interceptor: the injected clock",
          "side effect: the injected clock", "type-erased context: the injected clock",
        ])
    }

    @Test func sideEffectSleepingOnContextClock_wakesWhenTheTestAdvancesIt() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      let napping = store.send(
        Script { context in
          try await context.clock.sleep(for: .seconds(5))
          try await context.dispatch(Log(entry: "woke"))
        })
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .milliseconds(4999))
      #expect(clock.sleeperCount == 1)
      await clock.advance(by: .milliseconds(1))
      try await napping.value
      #expect(store.state.log == ["woke"])
    }

    /// A recorder stamps each commit, and each side effect's start and end, with the store's clock: a test clock's
    /// time exactly, to the nanosecond.
    @Test func aRecorder_stampsCommitsAndSideEffects_withTheStoresTestClock() async throws {
      let clock = TestClock()
      let store = try await makeStore(clock: clock)
      let recorder = StoreRecorder<CounterState>()
      try recorder.attach(to: store)
      await clock.advance(by: .milliseconds(5))
      try await store.dispatch(Log(entry: "a"))
      await clock.advance(by: .seconds(2) + .nanoseconds(7))
      try await store.dispatch(Script { context in try await context.dispatch(Log(entry: "b")) })
      let recording = recorder.recording()
      let later = Duration.seconds(2) + .milliseconds(5) + .nanoseconds(7)
      #expect(recording.commits.map(\.time) == [.milliseconds(5), later])
      #expect(recording.commits.map { $0.cause != nil } == [false, true])
      #expect(recording.effects.map(\.start) == [later] && recording.effects.map(\.end) == [later])
    }

    @Test func interceptorSleepingOnContextClock_wakesWhenTheTestAdvancesIt() async throws {
      let clock = TestClock()
      let readings = ClockReadings()
      let store = TestStore(
        initialState: CounterState(), interceptors: [clockReadingInterceptor(readings, expected: clock)],
        configuration: StoreConfiguration(clock: clock))
      let sleeping = store.send(Sleeper())
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .seconds(1))
      try await sleeping.value
      #expect(clock.sleeperCount == 0)
    }
  }
}
