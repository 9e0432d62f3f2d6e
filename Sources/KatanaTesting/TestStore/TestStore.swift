import Katana
import Testing

/// A store for tests that asserts every state change and every item that side effects dispatch.
///
/// ```swift
/// @Test func search_showsResults() async throws {
///   let store = TestStore(initialState: SearchState(), dependencies: SearchDependencies(api: .stub(["katana"])))
///   try await store.dispatch(SetQuery("kat")) { $0.query = "kat" }
///   try await store.dispatch(Search())
///   await store.receive(SetLoading.self) { $0.isLoading = true }
///   await store.receive(SetResults.self) {
///     $0.isLoading = false
///     $0.results = ["katana"]
///   }
///   await store.finish()
/// }
/// ```
///
/// The test store runs a real `Store`: the same mailbox, the same interceptors (yours, after one of its
/// own that records what happens), the same ordering. It adds three things:
/// - **Assertions on state.** ``dispatch(_:_:fileID:filePath:line:column:)-(U,_,_,_,_,_)`` applies your
///   mutation to the state before the updater and checks the result against the state the store committed.
///   A mismatch records an issue with a field-level diff.
/// - **Received items.** Everything dispatched by anything other than the test (side effects, the
///   dependency container, interceptors) is queued, with its state change, until you assert it with
///   ``receive(_:_:fileID:filePath:line:column:)-(I.Type,_,_,_,_,_)``, in order.
/// - **Waiting without sleeping.** The test store runs the store's work on a serial executor of its own and
///   knows when the store has nothing in flight (it turns the store's activity tracking on), so `receive`
///   and ``finish(fileID:filePath:line:column:)`` wait for events, never for time. When nothing of the work
///   can run until the test advances the ``TestClock`` it uses, or drives what the work waits for (a stream
///   it feeds), a wait fails at once and says what holds the work. Side effects sent one after the other
///   start in the order they were sent. A failsafe (``TestStoreConfiguration/failsafe``) turns any other
///   wait that would never end (work that never stops running) into a failed test.
///
/// By default the test store is exhaustive (``Exhaustivity/on``): every state change must be described
/// exactly, every received item asserted, and no work left running. Set ``exhaustivity`` to
/// ``Exhaustivity/off`` to check only what the test names.
///
/// Every test store is independent: it keeps no global state, so tests using test stores run in parallel,
/// and one store never sees another's items or cancellations.
///
/// - Important: Failures are recorded with Swift Testing's `Issue.record`, and attributed to the line of
///   the call that found them. Outside a Swift Testing test (for example in an `XCTestCase`) Swift Testing
///   ignores them, so the test store also prints them to standard error, but it cannot fail an XCTest case.
public final class TestStore<S: State & Equatable, D: SideEffectDependencyContainer>: Sendable {
  /// The store under test.
  ///
  /// Read from it, observe it, shut it down. Dispatch through the test store instead: what you dispatch
  /// directly on the store counts as received.
  public let store: Store<S, D>

  let recorder: TestStoreRecorder<S>
  let initialState: S
  /// Where the test store was created: end-of-test issues found on release are attributed there.
  let creationLocation: SourceLocation

  /// Creates a test store with dependencies built by `dependencies`.
  ///
  /// ```swift
  /// let store = TestStore(initialState: SearchState()) { dispatch, getState in
  ///   SearchDependencies(api: FailingSearchAPI(), dispatch: dispatch)
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - initialState: The state the store starts from.
  ///   - interceptors: The store's interceptors, as in production. The test store puts one of its own in
  ///     front of them.
  ///   - dependencies: Builds the dependency container, as a store's `dependenciesInitializer` does: put
  ///     the test doubles of this test in it.
  ///   - configuration: Exhaustivity, the store's clock and configuration, the failsafe.
  ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  public init(
    initialState: S,
    interceptors: [StoreInterceptor] = [],
    dependencies: sending Store<S, D>.DependenciesInitializer,
    configuration: TestStoreConfiguration = TestStoreConfiguration(),
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    let creationLocation = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    var configuration = configuration
    if !configuration.isClockSet {
      // Nothing the test did not set may use the real world silently.
      configuration.store.clock = TestClock(reportingFirstSleep: UnsetClockReport(location: creationLocation))
    }
    let recorder = TestStoreRecorder<S>(configuration: configuration)
    var storeConfiguration = configuration.store
    storeConfiguration.tracksActivity = true
    storeConfiguration.unhandledOutputReceiver = { [recorder] output in try await recorder.record(output: output) }
    storeConfiguration.onCarrierChange = { [signal = recorder.signal] in signal.bump() }
    storeConfiguration.ownedTaskStarter = recorder.taskStarter(wrapping: storeConfiguration.ownedTaskStarter)
    if let sideEffectTaskStarter = storeConfiguration.sideEffectTaskStarter {
      storeConfiguration.sideEffectTaskStarter = recorder.taskStarter(wrapping: sideEffectTaskStarter)
    }
    if let execution = recorder.execution {
      storeConfiguration.effectTaskStarter = execution.effectTaskStarter
      // A sleep on a real clock goes on by itself: the store's work counts as running meanwhile.
      storeConfiguration.clock = recorder.realTimeSleeps.counting(storeConfiguration.clock)
    }
    self.recorder = recorder
    self.initialState = initialState
    self.creationLocation = creationLocation
    // Ready when this returns: the store holds the initial state, so nothing waits for its start-up.
    let store = Store(
      initialState: initialState,
      interceptors: [recorder.interceptor] + interceptors,
      dependenciesInitializer: dependencies,
      configuration: storeConfiguration)
    self.store = store
    recorder.connect(
      StoreAccess(
        activeWork: { [weak store] in store?.activeWork ?? 0 },
        activityCarriers: { [weak store] tasks in store?.activityCarriers(inside: tasks) },
        waitUntilIdle: { [weak store] in try await store?.waitUntilIdle() }))
  }

  /// Creates a test store with the given dependency container.
  ///
  /// ```swift
  /// let store = TestStore(initialState: SearchState(), dependencies: SearchDependencies(api: .failing))
  /// ```
  ///
  /// - Parameters:
  ///   - initialState: The state the store starts from.
  ///   - interceptors: The store's interceptors, as in production.
  ///   - dependencies: The dependency container, with the test doubles of this test.
  ///   - configuration: Exhaustivity, the store's clock and configuration, the failsafe.
  ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  public convenience init(
    initialState: S,
    interceptors: [StoreInterceptor] = [],
    dependencies: D,
    configuration: TestStoreConfiguration = TestStoreConfiguration(),
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    self.init(
      initialState: initialState, interceptors: interceptors, dependencies: { _, _ in dependencies },
      configuration: configuration, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Creates a test store whose dependency container is built with its required initializer,
  /// `D(dispatch:getState:)`.
  ///
  /// - Parameters:
  ///   - initialState: The state the store starts from.
  ///   - interceptors: The store's interceptors, as in production.
  ///   - configuration: Exhaustivity, the store's clock and configuration, the failsafe.
  ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  public convenience init(
    initialState: S,
    interceptors: [StoreInterceptor] = [],
    configuration: TestStoreConfiguration = TestStoreConfiguration(),
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    self.init(
      initialState: initialState, interceptors: interceptors,
      dependencies: { dispatch, getState in D(dispatch: dispatch, getState: { getState() }) },
      configuration: configuration, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Runs the end-of-test checks that ``finish(fileID:filePath:line:column:)`` did not run: errors nobody
  /// looked at record issues, and, in exhaustive mode, so do received items nobody asserted and work still in
  /// flight (at the line that created the test store). Then the store shuts down, cancelling what it owns.
  deinit {
    guard let report = recorder.endOfTest() else { return }
    if !report.running.isEmpty {
      // A task of the test that is still running keeps the store alive: shut it down now, so that what it
      // owns is cancelled with the test rather than when that task ends.
      let store = self.store
      Task { await store.shutdown() }
    }
    Self.reportUnhandledErrors(report, at: creationLocation)
    guard report.exhaustivity == .on else { return }
    if !report.running.isEmpty {
      recordIssue(
        "The test store was released while work was still in flight: \(report.running.joined(separator: ", ")). "
          + "End the test with `await store.finish()`, which waits for it, or cancel long-running work.",
        at: creationLocation)
    }
    if !report.unasserted.isEmpty {
      recordIssue(
        Self.unassertedMessage(report.unasserted, when: "when the test store was released"), at: creationLocation)
    }
    if !report.unassertedOutputs.isEmpty {
      recordIssue(
        Self.unassertedOutputsMessage(report.unassertedOutputs, when: "when the test store was released"),
        at: creationLocation)
    }
  }

  /// Records one issue per error that nobody looked at: at the `send` that started a test's item, at
  /// `location` for a side effect that a side effect sent.
  static func reportUnhandledErrors(_ report: EndOfTestReport<S>, at location: SourceLocation) {
    for (item, error, sendLocation) in report.unhandledErrors {
      if let sendLocation {
        recordIssue(
          "\(describe(item)) threw \(error), and the test never looked at its outcome. Await the task that `send` "
            + "returned (`try await task.value`, with `#expect(throws:)` to assert the error), or handle the error "
            + "in the side effect.",
          at: sendLocation)
      } else {
        recordIssue(
          "\(describe(item)) threw \(error) in a task the store owns (a side effect handed it to the store with "
            + "`send`), and nothing asserted the error. Assert it with `receiveError(from: \(typeName(of: item)).self)`, "
            + "or handle it in the side effect.",
          at: location)
      }
    }
  }

  // MARK: - State

  /// The store's latest committed state.
  ///
  /// The test store's store holds the initial state from the start: it is ready when the test store's
  /// initializer returns.
  public var state: S {
    recorder.state.withLock { $0.hasStarted } ? store.state : initialState
  }

  /// The store's dependency container.
  public var dependencies: D {
    store.dependencies
  }

  /// How strictly the test store checks; see ``Exhaustivity``. Change it at any point of a test: it applies
  /// to the assertions that follow.
  public var exhaustivity: Exhaustivity {
    get { recorder.state.withLock { $0.exhaustivity } }
    set { recorder.state.withLock { $0.exhaustivity = newValue } }
  }

  /// Every item dispatched to the store so far, the test's own and the received ones, in the order the
  /// test store saw them; empty unless ``TestStoreConfiguration/recordsDispatches`` is on.
  public var dispatchLog: [DispatchRecord] {
    recorder.state.withLock { $0.log }
  }

  // MARK: - Shared checks

  /// In exhaustive mode, reports (once) the received items the test has not asserted before it dispatches
  /// `item`, and drops them. In non-exhaustive mode that shows skipped assertions, shows them (once).
  func reportUnassertedReceived(before item: any Dispatchable, at location: SourceLocation) {
    let exhaustivity = self.exhaustivity
    if exhaustivity == .on {
      let pending = recorder.takeReceived()
      guard !pending.isEmpty else { return }
      recordIssue(Self.unassertedMessage(pending, when: "before dispatching \(describe(item))"), at: location)
    } else if exhaustivity.showsSkippedAssertions {
      let received = recorder.pendingReceived
      let pending = received.steps.filter { !received.reported.contains($0.id) }
      guard !pending.isEmpty else { return }
      recorder.markReported(pending)
      showSkippedAssertion(
        "\(counted(pending.count, "received item was", "received items were")) not asserted before dispatching "
          + "\(describe(item)): \(describeList(pending.map(\.item))).",
        at: location)
    }
  }

  static func unassertedMessage(_ steps: [RecordedStep<S>], when: String) -> String {
    "\(counted(steps.count, "received item was", "received items were")) not asserted \(when): "
      + "\(describeList(steps.map(\.item))). Assert them with `receive`, drop them with `skipReceivedItems()`, "
      + "or set `exhaustivity = .off`."
  }

  /// Checks the state change recorded for `step` against `mutation`, and records an issue with a diff if it
  /// does not match.
  func assertChange(of step: RecordedStep<S>, mutation: ((inout S) throws -> Void)?, at location: SourceLocation) {
    let (before, after) = recorder.states(of: step)
    guard let before else { return }
    let actual = step.isUpdater ? after ?? before : before
    let exhaustivity = self.exhaustivity
    var expected = exhaustivity == .on ? before : actual
    // What an exhaustive assertion would have expected, to show what a non-exhaustive one skipped.
    var exhaustive = before
    let subject = (step.origin == .received ? "received item " : "") + describe(step.item)
    if let mutation {
      do {
        try mutation(&expected)
        if exhaustivity.showsSkippedAssertions { try mutation(&exhaustive) }
      } catch {
        recordIssue("The mutation closure for \(subject) threw an error: \(error)", at: location)
        return
      }
    }
    guard expected != actual else {
      if exhaustivity.showsSkippedAssertions, step.isUpdater, exhaustive != actual {
        showSkippedAssertion(
          "State change of \(subject): the mutation did not assert every change. Not asserted:\n"
            + Self.indented(StateDiff.lines(expected: exhaustive, actual: actual)),
          at: location)
      }
      return
    }
    let explanation: String
    if !step.isUpdater {
      explanation =
        "The \(subject) is a side effect: it does not change the state itself, so its mutation closure must "
        + "leave the state as it is. Assert the state updaters it dispatches with `receive`."
    } else if actual == before {
      explanation =
        "Expected the state to change, but \(subject) left it unchanged: the mutation describes a change that did "
        + "not happen."
    } else if exhaustivity == .on {
      explanation =
        "State change of \(subject) does not match the expectation (expected: the state before it, changed by "
        + "your mutation)."
    } else {
      explanation =
        "State change of \(subject) does not match the expectation (non-exhaustive: your mutation, applied to "
        + "the actual state, must not change it)."
    }
    var lines = StateDiff.lines(expected: expected, actual: actual)
    if lines.isEmpty {
      lines = [
        "the states are not equal (==), but reflection shows no difference:",
        "expected \(StateDiff.format(expected))", "actual   \(StateDiff.format(actual))",
      ]
    }
    recordIssue(explanation + " Differences:\n" + Self.indented(lines), at: location)
  }

  /// Shows an assertion that a non-exhaustive test store skipped: through the configuration's package
  /// hook when set (the tests of the test store read them there), as a known issue otherwise.
  func showSkippedAssertion(_ message: String, at location: SourceLocation) {
    if let handler = recorder.skippedAssertionHandler {
      handler(message)
    } else {
      recordSkippedAssertion(message, at: location)
    }
  }

  static func indented(_ lines: [String]) -> String {
    lines.map { "  \($0)" }.joined(separator: "\n")
  }
}
