import KatanaTestSupport
import KatanaTesting
import Testing

/// The state most tests use.
struct CounterState: State, Equatable {
  var count = 0
  var log: [String] = []
  var flag = false
}

struct Increment: StateUpdater, Equatable {
  var by = 1
  func updateState(_ state: inout CounterState) { state.count += by }
}

struct SetCount: StateUpdater, Equatable {
  let value: Int
  func updateState(_ state: inout CounterState) { state.count = value }
}

/// Appends `tag` to the log.
struct Log: StateUpdater, Equatable {
  let tag: String
  func updateState(_ state: inout CounterState) { state.log.append(tag) }
}

struct SetFlag: StateUpdater {
  let value: Bool
  func updateState(_ state: inout CounterState) { state.flag = value }
}

struct TestError: Error, Equatable {
  let code: Int
}

/// Dependencies with a value that tests override.
final class CounterDependencies: SideEffectDependencyContainer {
  let step: Int
  let dispatch: AnyDispatch?

  init(step: Int) {
    self.step = step
    self.dispatch = nil
  }

  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    self.step = 1
    self.dispatch = dispatch
  }
}

typealias CounterTestStore = TestStore<CounterState, CounterDependencies>

/// A side effect that runs a closure, so that tests can script it.
struct Script: SideEffect {
  var name = "Script"
  let body: @Sendable (SideEffectContext<CounterState, CounterDependencies>) async throws -> Void
  func sideEffect(_ context: SideEffectContext<CounterState, CounterDependencies>) async throws {
    try await body(context)
  }
}

/// A returning side effect that runs a closure.
struct ReturningScript<Value: Sendable>: ReturningSideEffect {
  let body: @Sendable (SideEffectContext<CounterState, CounterDependencies>) async throws -> Value
  func sideEffect(_ context: any AnySideEffectContext) async throws -> Value {
    try await body(try context.typed(CounterState.self, CounterDependencies.self))
  }
}

/// Dispatches `Log(tag)` for each tag, in order, awaiting each.
struct LogAll: SideEffect {
  let tags: [String]
  func sideEffect(_ context: SideEffectContext<CounterState, CounterDependencies>) async throws {
    for tag in tags {
      try await context.dispatch(Log(tag: tag))
    }
  }
}

/// Increments by the dependency container's `step`.
struct IncrementByStep: SideEffect {
  func sideEffect(_ context: SideEffectContext<CounterState, CounterDependencies>) async throws {
    try await context.dispatch(Increment(by: context.dependencies.step))
  }
}

/// Throws `TestError(code:)`.
struct Fail: SideEffect {
  let code: Int
  func sideEffect(_ context: SideEffectContext<CounterState, CounterDependencies>) async throws {
    throw TestError(code: code)
  }
}

/// Waits for a gate, ignoring cancellation, after reporting that it started; then dispatches `Log(tag)`.
struct WaitForGate: SideEffect {
  let gate: Gate
  let started: Gate
  var tag = "after gate"
  func sideEffect(_ context: SideEffectContext<CounterState, CounterDependencies>) async throws {
    started.open()
    await gate.waitIgnoringCancellation()
    try await context.dispatch(Log(tag: tag))
  }
}

/// Collects the messages of the issues a `withKnownIssue` block records.
final class IssueLog: Sendable {
  private let messages = LockedValue<[(message: String, line: Int?)]>([])

  func matcher() -> KnownIssueMatcher {
    { [messages] issue in
      let message = issue.comments.map(\.rawValue).joined(separator: "\n")
      messages.withLock {
        $0.append((message.isEmpty ? String(describing: issue) : message, issue.sourceLocation?.line))
      }
      return true
    }
  }

  var all: [String] { messages.current.map(\.message) }
  var lines: [Int?] { messages.current.map(\.line) }
}

/// Runs `body` (which records issues the test expects) with Swift Testing's report of those known issues
/// kept out of the output; if the capture itself fails, runs it uncaptured.
func withExpectedIssueOutputCaptured(
  sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
  var ran = false
  do {
    try await withKnownIssueOutputCaptured {
      ran = true
      try await body()
    }
  } catch {
    if ran {
      Issue.record(error, sourceLocation: sourceLocation)
    } else {
      do { try await body() } catch { Issue.record(error, sourceLocation: sourceLocation) }
    }
  }
}

/// Runs `body`, expecting it to record exactly one issue whose message contains every fragment.
func expectOneIssue(
  containing fragments: [String], atLine expectedLine: Int? = nil,
  sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () async throws -> Void
) async {
  let log = IssueLog()
  // Swift Testing prints each known issue, message and diff included: keep that out of a passing run's output.
  await withExpectedIssueOutputCaptured(sourceLocation: sourceLocation) {
    await withKnownIssue(
      sourceLocation: sourceLocation,
      {
        // A thrown error counts as one more issue, unless it is the one a test store throws after recording
        // its issue (as a failed `#require` does: Swift Testing does not report it again).
        do {
          try await body()
        } catch is ExpectationFailedError {
        } catch {
          Issue.record(error, sourceLocation: sourceLocation)
        }
      }, matching: log.matcher())
  }
  #expect(log.all.count == 1, "expected exactly one issue, got: \(log.all)", sourceLocation: sourceLocation)
  guard let message = log.all.first else { return }
  for fragment in fragments {
    #expect(
      message.contains(fragment), "issue message lacks \"\(fragment)\": \(message)", sourceLocation: sourceLocation)
  }
  if let expectedLine {
    #expect(log.lines.first == expectedLine, "issue attributed to the wrong line", sourceLocation: sourceLocation)
  }
}

/// Sleeps `duration` on the store's clock, then dispatches `Log(tag)`.
struct Nap: SideEffect, Equatable {
  var duration = Duration.milliseconds(300)
  var tag = "woke"
  func sideEffect(_ context: SideEffectContext<CounterState, CounterDependencies>) async throws {
    try await context.clock.sleep(for: duration)
    try await context.dispatch(Log(tag: tag))
  }
}

/// A state of another type, for updaters that do not fit `CounterState`.
struct OtherState: State, Equatable {
  var value = 0
}

struct SetOther: StateUpdater {
  func updateState(_ state: inout OtherState) { state.value = 1 }
}

/// Collects what a non-exhaustive test store that shows skipped assertions shows.
final class SkippedAssertions: Sendable {
  private let messages = LockedValue<[String]>([])
  var handler: @Sendable (String) -> Void { { [messages] message in messages.withLock { $0.append(message) } } }
  var all: [String] { messages.current }
}

/// A test store over `CounterState` with a manual failsafe clock, so that failsafe tests expire it by hand.
func makeStore(
  _ initial: CounterState = CounterState(),
  interceptors: [StoreInterceptor] = [],
  exhaustivity: Exhaustivity = .on,
  recordsDispatches: Bool = false,
  failsafeClock: TestClock? = nil,
  clock: TestClock? = nil,
  skipped: SkippedAssertions? = nil,
  fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
) -> CounterTestStore {
  var configuration = TestStoreConfiguration(exhaustivity: exhaustivity, recordsDispatches: recordsDispatches)
  if let failsafeClock {
    configuration.failsafeClock = failsafeClock
    // The failsafe tests move that clock by 30 seconds, whatever `KATANA_FAILSAFE_SCALE` makes the default.
    configuration.failsafe = .seconds(30)
  }
  if let clock {
    configuration.clock = clock
  }
  if let skipped {
    configuration.skippedAssertionHandler = skipped.handler
  }
  return CounterTestStore(
    initialState: initial, interceptors: interceptors, configuration: configuration,
    fileID: fileID, filePath: filePath, line: line, column: column)
}
