import Foundation
import Katana
import KatanaTestSupport
import KatanaTesting
import Testing

/// The test clock as a TCA user expects it (issue 22): advancing settles the store's work, only the test's
/// own task gets the at-once verdict, one mistake is one issue, a test store never waits for real time
/// behind the test's back. The failsafe clock is never advanced, so a wait that does not end by itself
/// hangs until the suite's time limit.
@Suite("TestClock: settling, verdicts, one issue per mistake", .timeLimit(.failsafeMinutes(3)))
struct TestClockSettlingTests {
  let clock = TestClock()
  let failsafeClock = TestClock()

  /// Before: a test that advanced without `waitForSleepers` first raced the side effect to its sleep, and
  /// when it lost, the sleep measured from the new time.
  @Test func advance_whileASideEffectIsOnItsWayToItsSleep_waitsForTheSleep_thenWakesIt() async throws {
    for _ in 0..<100 {
      let clock = TestClock()
      let store = makeStore(failsafeClock: failsafeClock, clock: clock)
      store.send(Nap(duration: .milliseconds(300), tag: "woke"))
      await clock.advance(by: .milliseconds(300))
      await store.receive(Log(tag: "woke")) { $0.log = ["woke"] }
      await store.finish()
    }
  }

  /// The advance moves deadline by deadline and settles between them: a side effect that sleeps a second,
  /// twice, finishes in one advance of two seconds. Before, time jumped to the target in one step, and the
  /// second sleep measured from there.
  @Test func advance_wakesASleeperThatSleepsAgainWithinTheTarget() async throws {
    let store = makeStore(failsafeClock: failsafeClock, clock: clock)
    store.send(
      Script(name: "two naps") { context in
        try await context.clock.sleep(for: .seconds(1))
        try await context.dispatch(Log(tag: "one"))
        try await context.clock.sleep(for: .seconds(1))
        try await context.dispatch(Log(tag: "two"))
      })
    await clock.advance(by: .seconds(2))
    await store.receive(Log(tag: "one")) { $0.log = ["one"] }
    await store.receive(Log(tag: "two")) { $0.log = ["one", "two"] }
    await store.finish()
    #expect(clock.now == .zero.advanced(by: .seconds(2)))
  }

  /// Before: the wait went on until the failsafe (here: forever).
  @Test func waitForSleepers_whenNothingIsInFlightAndNothingSleeps_failsAtOnce() async throws {
    let store = makeStore(failsafeClock: failsafeClock, clock: clock)
    try await store.dispatch(Log(tag: "done")) { $0.log = ["done"] }
    await expectOneIssue(containing: [
      "waitForSleepers(count: 1): 0 tasks sleep on the test clock, and the test store has nothing in flight"
    ]) {
      try await clock.waitForSleepers(count: 1)
    }
    await store.finish()
  }

  /// The scenario from TCA's throttle tests: a helper task awaits a throttled call that waits for its window,
  /// while the test goes on to advance the clock. Before: the helper's wait failed at once with "cannot
  /// return until the test clock moves", though the test was about to move it.
  @Test func aHelperTasksWait_forWorkAsleepOnTheClock_waitsForTheTestToMoveIt() async throws {
    let store = makeStore(failsafeClock: failsafeClock, clock: clock)
    let nap = store.send(Nap(duration: .seconds(1), tag: "woke"))
    await clock.advance(by: .zero)  // the nap is asleep: the helper's wait sees it parked
    let helper = Task { try await nap.value }
    await clock.advance(by: .seconds(1))
    await store.receive(Log(tag: "woke")) { $0.log = ["woke"] }
    try await helper.value
    await store.finish()
  }

  /// Awaiting a side effect that sleeps on the test clock, with the test store made in a helper that does not
  /// forward the caller's location. Before: three issues (the wait's, the "caught error" of the error it
  /// threw, and "released while work was still in flight" at the helper's line); now one, at the test's line.
  @Test func awaitingASideEffectThatSleeps_recordsOneIssue_atTheTestsLine() async throws {
    let log = IssueLog()
    let line = #line + 6
    await withExpectedIssueOutputCaptured {
      try await withKnownIssue(
        "one mistake",
        {
          let store = Self.makeStoreWithoutForwarding(clock: clock)
          try await store.dispatch(Nap())
        }, matching: log.matcher())
    }
    #expect(log.all.count == 1, "expected one issue, got: \(log.all)")
    #expect(log.lines == [line])
    #expect(log.all.first?.contains("cannot return until the test clock moves") == true)
  }

  /// A user's helper that does not forward `fileID`, `filePath`, `line` and `column`.
  static func makeStoreWithoutForwarding(clock: TestClock) -> CounterTestStore {
    var configuration = TestStoreConfiguration()
    configuration.clock = clock
    return CounterTestStore(initialState: CounterState(), configuration: configuration)
  }

  /// Before: the nap waited 0.3 s of real time on a `ContinuousClock`, and the test passed.
  @Test func aTestStoreWithoutAClock_reportsTheFirstSleep_namingTheSleeper() async throws {
    var configuration = TestStoreConfiguration(exhaustivity: .off)
    configuration.failsafeClock = failsafeClock
    let line = #line + 1
    let store = CounterTestStore(initialState: CounterState(), configuration: configuration)
    await expectOneIssue(
      containing: [
        #"`Nap(duration: 0.3 seconds, tag: "woke")` slept 0.3 seconds on the store's clock"#,
        "`configuration.clock = TestClock()`",
      ], atLine: line
    ) {
      store.send(Nap())
      await store.finish()  // once the nap sleeps; non-exhaustive, so it cancels the nap without an issue
    }
  }

  /// A sleep in a task the store owns (an item a side effect sent), which Swift Testing does not know as the
  /// test's: the issue is recorded at the test store's next wait.
  @Test func aTestStoreWithoutAClock_reportsASleepInATaskTheStoreOwns() async throws {
    var configuration = TestStoreConfiguration(exhaustivity: .off)
    configuration.failsafeClock = failsafeClock
    let line = #line + 1
    let store = CounterTestStore(initialState: CounterState(), configuration: configuration)
    await expectOneIssue(
      containing: [#"`Nap(duration: 0.3 seconds, tag: "woke")` slept 0.3 seconds on the store's clock"#],
      atLine: line
    ) {
      store.send(Script(name: "sender") { context in _ = context.send(Nap()) })
      await store.finish()
    }
  }

  /// A clock the test chose is used as given, a `ContinuousClock` included.
  @Test func aTestStoreWithAnExplicitContinuousClock_waitsForRealTime() async throws {
    var configuration = TestStoreConfiguration()
    configuration.clock = ContinuousClock()
    let store = CounterTestStore(initialState: CounterState(), configuration: configuration)
    // A real sleep, long enough that the store's work is suspended when the test store looks: it counts as
    // running (it goes on by itself), so the dispatch waits for it rather than fail at once.
    try await store.dispatch(Nap(duration: .milliseconds(20), tag: "real"))
    await store.receive(Log(tag: "real")) { $0.log = ["real"] }
    await store.finish()
  }
}

@Suite("Dependencies in tests: unimplemented, generators")
struct TestDependenciesTests {
  @Test func unimplemented_recordsAnIssueNamingTheCall_andThrows() async throws {
    let line = #line + 1
    let forecast: @Sendable (String, Int) async throws -> String = unimplemented("Weather.forecast")
    await expectOneIssue(
      containing: [#"Unimplemented: Weather.forecast was called with ("home", 3)."#], atLine: line
    ) {
      await #expect(throws: UnimplementedDependencyError(name: "Weather.forecast")) {
        try await forecast("home", 3)
      }
    }
  }

  @Test func unimplemented_withAPlaceholder_recordsAnIssue_andReturnsIt() async throws {
    let uuid: @Sendable () -> UUID = unimplemented("App.uuid", placeholder: UUID(7))
    await expectOneIssue(containing: ["Unimplemented: App.uuid was called."]) {
      #expect(uuid() == UUID(7))
    }
  }

  @Test func incrementingUUIDs_countFromZero() {
    let uuid = IncrementingUUIDGenerator()
    #expect(uuid().uuidString == "00000000-0000-0000-0000-000000000000")
    #expect(uuid().uuidString == "00000000-0000-0000-0000-000000000001")
    #expect(uuid() == UUID(2))
    #expect(UUID(0x1_0000_0001).uuidString == "00000000-0000-0000-0000-000100000001")
  }

  @Test func dates_constantOrStepping() {
    let start = Date(timeIntervalSince1970: 1_000)
    let constant = DateGenerator.constant(start)
    #expect([constant(), constant()] == [start, start])
    let stepping = DateGenerator.stepping(from: start, by: .seconds(1.5))
    #expect([stepping(), stepping(), stepping()] == [start, start + 1.5, start + 3])
  }
}

// The Testing article's "Dependencies in tests" example: an id made by a dependency reaches an updater.

struct IdentifiedTodo: Equatable, Sendable {
  let id: UUID
  var title: String
}

struct IdentifiedTodosState: State, Equatable {
  var todos: [IdentifiedTodo] = []
}

final class IdentifiedTodosDependencies: SideEffectDependencyContainer {
  let uuid: @Sendable () -> UUID

  init(uuid: @escaping @Sendable () -> UUID) {
    self.uuid = uuid
  }

  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    uuid = unimplemented("IdentifiedTodosDependencies.uuid", placeholder: UUID(0))
  }
}

struct AddIdentifiedTodo: StateUpdater, Equatable {
  let id: UUID
  let title: String
  func updateState(_ state: inout IdentifiedTodosState) { state.todos.append(IdentifiedTodo(id: id, title: title)) }
}

struct AddIdentifiedTodoTapped: SideEffect {
  let title: String
  func sideEffect(_ context: SideEffectContext<IdentifiedTodosState, IdentifiedTodosDependencies>) async throws {
    try await context.dispatch(AddIdentifiedTodo(id: context.dependencies.uuid(), title: title))
  }
}

@Test func addingATodo_usesTheNextID() async throws {
  let uuid = IncrementingUUIDGenerator()
  let store = TestStore(
    initialState: IdentifiedTodosState(), dependencies: IdentifiedTodosDependencies(uuid: { uuid() }))
  try await store.dispatch(AddIdentifiedTodoTapped(title: "milk"))
  await store.receive(AddIdentifiedTodo(id: UUID(0), title: "milk")) {
    $0.todos = [IdentifiedTodo(id: UUID(0), title: "milk")]
  }
  try await store.dispatch(AddIdentifiedTodoTapped(title: "eggs"))
  await store.receive(AddIdentifiedTodo(id: UUID(1), title: "eggs")) {
    $0.todos.append(IdentifiedTodo(id: UUID(1), title: "eggs"))
  }
  await store.finish()
}
