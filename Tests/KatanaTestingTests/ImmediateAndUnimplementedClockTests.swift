import Katana
import KatanaTestSupport
import KatanaTesting
import Testing

@Suite("ImmediateClock and UnimplementedClock", .timeLimit(.failsafeMinutes(3)))
struct ImmediateAndUnimplementedClockTests {
  @Test func immediateClock_sleepsReturnAtOnce_andMoveItsTimeForward() async throws {
    let clock = ImmediateClock()
    #expect(clock.now == .zero)
    try await clock.sleep(for: .seconds(3))
    #expect(clock.now == .zero.advanced(by: .seconds(3)))
    // An earlier deadline leaves the time where it is; sleeping for zero moves nothing.
    try await clock.sleep(until: .zero.advanced(by: .seconds(1)))
    try await clock.sleep(for: .zero)
    #expect(clock.now == .zero.advanced(by: .seconds(3)))
    let started = ImmediateClock(now: .zero.advanced(by: .seconds(10)))
    try await started.sleep(for: .milliseconds(500))
    #expect(started.now == .zero.advanced(by: .milliseconds(10_500)))
  }

  @Test func immediateClock_aCancelledTasksSleep_throws_andMovesNoTime() async throws {
    let clock = ImmediateClock()
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await clock.sleep(for: .seconds(5))
    }
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(clock.now == .zero)
  }

  /// A side effect that waits on the store's clock runs to its end at once: what it dispatches after the sleep is
  /// received without advancing anything.
  @Test func immediateClock_onATestStore_letsSleepingWorkRunThrough() async throws {
    var configuration = TestStoreConfiguration()
    let clock = ImmediateClock()
    configuration.clock = clock
    let store = CounterTestStore(initialState: CounterState(), configuration: configuration)
    try await store.dispatch(
      Script { context in
        try await context.clock.sleep(for: .seconds(3))
        try await context.dispatch(Increment())
      })
    await store.receive(Increment()) { $0.count = 1 }
    await store.finish()
    #expect(clock.now == .zero.advanced(by: .seconds(3)))
  }

  @Test func unimplementedClock_recordsOneIssueOnItsFirstUse_namingIt() async throws {
    // `sleep(for:)` reads `now` first: that is the first use reported.
    await expectOneIssue(containing: ["Unimplemented: the search debounce was used", "read its time"]) {
      let clock = UnimplementedClock(name: "the search debounce")
      #expect(clock.minimumResolution == .zero)
      try await clock.sleep(for: .seconds(1))
      _ = clock.now
      try await clock.sleep(for: .seconds(1))
      #expect(clock.now == .zero.advanced(by: .seconds(2)))
    }
  }

  @Test func unimplementedClock_unused_recordsNothing() async throws {
    var configuration = TestStoreConfiguration()
    configuration.clock = UnimplementedClock()
    let store = CounterTestStore(initialState: CounterState(), configuration: configuration)
    try await store.dispatch(Increment()) { $0.count = 1 }
    await store.finish()
  }
}
