import Testing

@testable import Katana

@Suite("How a recorder reads the time")
struct RecorderTimerTests {
  /// A clock's duration becomes whole nanoseconds, and one too long for 64 bits is clamped: no trap.
  @Test func aDuration_becomesWholeNanoseconds_clampedToSixtyFourBits() {
    #expect(RecorderTimer.nanoseconds(.zero) == 0)
    #expect(RecorderTimer.nanoseconds(.seconds(2) + .nanoseconds(7)) == 2_000_000_007)
    #expect(RecorderTimer.nanoseconds(.nanoseconds(-3)) == -3)
    #expect(RecorderTimer.nanoseconds(Duration(secondsComponent: 0, attosecondsComponent: 999_999_999)) == 0)
    #expect(RecorderTimer.nanoseconds(.seconds(Int64.max)) == .max)
    #expect(RecorderTimer.nanoseconds(.seconds(Int64.min)) == .min)
    #expect(RecorderTimer.nanoseconds(.seconds(9_223_372_036)) == 9_223_372_036_000_000_000)
    #expect(RecorderTimer.nanoseconds(.seconds(9_223_372_037)) == .max)
  }

  /// On `ContinuousClock` (read in C), the time of each commit lies between the recorder's attachment and the
  /// moment it is read, and grows with each commit, as `ContinuousClock` measures them.
  @Test func onTheContinuousClock_commitTimes_liveWithinWhatTheClockMeasures() async throws {
    let store = Store<RecTimerState, EmptySideEffectDependencyContainer>(initialState: RecTimerState())
    try await store.waitUntilReady()
    let before = ContinuousClock.now
    let recorder = StoreRecorder<RecTimerState>()
    try recorder.attach(to: store)
    for _ in 0..<100 { try await store.dispatch(RecTimerTick()) }
    let elapsed = before.duration(to: .now)
    let times = recorder.recording().commits.map(\.time)
    #expect(times.count == 100)
    #expect(times.allSatisfy { $0 >= .zero && $0 <= elapsed })
    #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
  }
}

struct RecTimerState: State {
  var ticks = 0
}

struct RecTimerTick: StateUpdater {
  func updateState(_ state: inout RecTimerState) { state.ticks += 1 }
}
