import Katana
import Testing

extension TestClock {
  /// Returns once at least `count` tasks are sleeping on this clock (at once if they already are).
  ///
  /// ```swift
  /// let task = Task { try await clock.sleep(for: .seconds(1)) }  // not a test store's work
  /// try await clock.waitForSleepers(count: 1)                    // synchronise on the sleep, never on time
  /// await clock.advance(by: .seconds(1))
  /// ```
  ///
  /// A test store's work needs no such wait: ``advance(by:fileID:filePath:line:column:)`` lets it reach its
  /// sleeps first. Use it for sleeps the test store cannot see (a task the test started itself), or to check
  /// that something sleeps. It waits for an event, not for time; a failsafe turns a wait that would never
  /// end into a failure:
  /// - if a ``TestStore`` uses this clock, the call comes from the task of the test (the one that created
  ///   the test store), and the store has nothing in flight or everything it has in flight is already asleep
  ///   on the clock (so no other sleep can start until the test moves the clock or sends more), it fails at
  ///   once, naming the sleepers;
  /// - otherwise it gives up after `timeout` (by default the failsafe of the test store that uses the
  ///   clock, ``TestStoreConfiguration/failsafe``, or ``TestStoreConfiguration/defaultFailsafe``), naming the
  ///   sleepers and what is in flight.
  ///   A call from another task (a helper task of the test) waits: the test may still move the clock.
  ///
  /// Either way it records an issue at the caller's line and throws ``TestClockError/sleepersNotReached(_:)``.
  ///
  /// - Parameters:
  ///   - count: The number of sleepers to wait for.
  ///   - timeout: The failsafe; nil for the test store's.
  ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  /// - Throws: `CancellationError` if the calling task is cancelled first;
  ///   ``TestClockError/sleepersNotReached(_:)`` (after recording an issue) if the sleepers cannot come.
  public nonisolated(nonsending) func waitForSleepers(
    count: Int = 1, timeout: Duration? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async throws {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    var failsafe: Failsafe?
    defer { failsafe?.cancel() }
    while true {
      let generations = watchedGenerations()
      let (version, snapshot) = versionedSnapshot()
      let sleepers = snapshot.sleepers
      if sleepers.count >= count { return }
      try Task.checkCancellation()
      let recorders = attachedRecorders
      let waiting =
        "waitForSleepers(count: \(count)): \(counted(sleepers.count, "task sleeps", "tasks sleep")) on the test clock"
      let settlements = recorders.map { $0.settlement() }
      let parked = settlements.compactMap { settlement -> [SleeperRecord]? in
        if case .parked(let sleepers) = settlement { return sleepers }
        return nil
      }
      let anyBusy = settlements.contains { if case .busy = $0 { true } else { false } }
      let isTestTask = recorders.contains { $0.isTestTask() }
      let allIdle = settlements.allSatisfy { if case .idle = $0 { true } else { false } }
      // The clock's version changes under its lock as a sleeper registers, before its signal moves: a sleeper
      // that the settlements saw but the snapshot did not makes the verdict stale.
      if isTestTask, !anyBusy, !parked.isEmpty || (allIdle && sleepers.isEmpty), Self.unchanged(generations),
        self.version == version
      {
        let message =
          parked.isEmpty
          ? "\(waiting), and the test store has nothing in flight: no other sleep can start until the test sends "
            + "more. Check that the code under test sleeps on this clock (`context.clock`) as often as you expect."
          : "\(waiting), and no other sleep can start until \(Parking.until(parked.flatMap { $0 })). Advance the "
            + "clock (`advance(by:)`) to let the work go on, or wait for fewer sleepers."
        throw recordIssueStoppingTest(message, at: location, otherwise: TestClockError.sleepersNotReached(message))
      }
      if failsafe == nil {
        failsafe = startFailsafe(timeout: timeout, recorders: recorders)
      }
      if let failsafe, failsafe.isExpired {
        let inFlight = recorders.map { recorder -> String in
          switch recorder.settlement() {
          case .idle: "the test store has nothing in flight"
          case .parked(let sleepers): Parking.describe(sleepers)
          case .busy(let running): "the test store still runs \(running)"
          }
        }
        let message =
          "\(waiting) after \(describe(failsafe.bound)) (the failsafe)"
          + (sleepers.isEmpty
            ? "" : ": \(sleepers.map { "\(Sleeper(deadline: $0.deadline, item: $0.item))" }.joined(separator: ", "))")
          + (inFlight.isEmpty ? "" : "; \(inFlight.joined(separator: "; "))")
          + ". Check that the code under test sleeps on this clock (`context.clock`) as often as you expect."
        throw recordIssueStoppingTest(message, at: location, otherwise: TestClockError.sleepersNotReached(message))
      }
      let busy = zip(recorders, settlements).compactMap { recorder, settlement -> (any ClockObserving)? in
        if case .busy = settlement { return recorder }
        return nil
      }
      await Self.waitForChange(generations, orIdle: busy)
    }
  }

  /// Advances the clock from deadline to deadline until nothing sleeps on it, letting the work it wakes run
  /// (settle, with a test store) after each step.
  ///
  /// ```swift
  /// store.send(Countdown(from: 3))   // sleeps a second, dispatches Tick, three times
  /// await clock.run()
  /// await store.receive(Tick.self) { $0.remaining = 2 }
  /// await store.receive(Tick.self) { $0.remaining = 1 }
  /// await store.receive(Tick.self) { $0.remaining = 0 }
  /// ```
  ///
  /// It is the way to run a clock to its end without counting its sleeps. With a ``TestStore`` that uses the
  /// clock, before each step it waits, on events, until every test store that uses the clock has settled
  /// (nothing in flight, or nothing of it can run until the test acts), as
  /// ``advance(by:fileID:filePath:line:column:)`` does. Without one, it does what pointfreeco/swift-clocks'
  /// `TestClock.run()` does: it yields to the tasks around it, then advances to the next deadline, yielding
  /// after each step as an advance does, until nothing sleeps.
  ///
  /// A repeating timer never stops sleeping: cancel it first, or advance by hand. If sleepers are left when
  /// `timeout` runs out, or the work it woke does not settle, it records an issue that lists them and
  /// returns. The sleepers left go on sleeping (swift-clocks makes them throw `CancellationError`).
  ///
  /// - Parameters:
  ///   - timeout: How long the whole run may take, in real time (on the failsafe's clock); nil for the
  ///     failsafe of the test store that uses the clock (``TestStoreConfiguration/failsafe``) or, without one,
  ///     ``TestStoreConfiguration/defaultFailsafe``, 30 seconds (swift-clocks' default is 500 milliseconds).
  ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  public nonisolated(nonsending) func run(
    timeout: Duration? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    let recorders = attachedRecorders
    guard !recorders.isEmpty else {
      await runLettingWorkRun(timeout: timeout, at: location)
      return
    }
    var settling = Settling(caller: "run()", location: location, timeout: timeout, reportsExpiry: false)
    defer { settling.failsafe?.cancel() }
    while !Task.isCancelled {
      await settle(recorders, &settling)
      if settling.gaveUp {
        reportRunTimedOut(after: settling.bound, unsettled: settling.unsettled, at: location)
        return
      }
      guard let next = nextDeadline else { return }
      _ = wakeNext(upTo: next)
    }
  }

  /// ``run(timeout:fileID:filePath:line:column:)`` on a clock that no test store uses.
  private nonisolated(nonsending) func runLettingWorkRun(timeout: Duration?, at location: SourceLocation) async {
    let failsafe = startFailsafe(timeout: timeout, recorders: [])
    defer { failsafe.cancel() }
    await letWorkRun()
    while !Task.isCancelled, let next = nextDeadline {
      if failsafe.isExpired {
        reportRunTimedOut(after: failsafe.bound, unsettled: [], at: location)
        return
      }
      await wakeLettingWorkRun(upTo: next)
    }
  }

  /// Records the issue of a ``run(timeout:fileID:filePath:line:column:)`` whose failsafe expired.
  private func reportRunTimedOut(after bound: Duration, unsettled: [String], at location: SourceLocation) {
    let left = sleepers
    recordIssue(
      "run(): the clock still has \(counted(left.count, "sleeper")) after \(describe(bound)) (the "
        + "failsafe)\(left.isEmpty ? "" : ": \(left.map(\.description).joined(separator: ", "))")"
        + (unsettled.isEmpty ? "" : "; still running: \(unsettled.joined(separator: "; "))")
        + ". A repeating timer never stops sleeping: cancel it before `run()`, or advance the clock by hand.",
      at: location)
  }

  /// Throws if anything sleeps on the clock once the work around it has run: a check that the code under
  /// test does no more timed work, as pointfreeco/swift-clocks' `TestClock.checkSuspension()`.
  ///
  /// ```swift
  /// let clock = TestClock()
  /// let nap = Task { try await clock.sleep(for: .seconds(1)) }
  /// await #expect(throws: TestClockError.self) { try await clock.checkSuspension() }
  /// await clock.advance(by: .seconds(1))
  /// try await clock.checkSuspension()   // the nap is over
  /// ```
  ///
  /// It first lets the work reach its sleeps: with a ``TestStore`` that uses the clock, it waits until the
  /// store's work has settled (as an advance does before it moves time); without one, it yields to the tasks
  /// around it as an advance does. It records no issue: the error it throws says who sleeps, and fails the
  /// test if the test does not catch it.
  ///
  /// - Parameters:
  ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  /// - Throws: ``TestClockError/sleepersSuspended(_:)`` if anything sleeps on the clock.
  public nonisolated(nonsending) func checkSuspension(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async throws {
    let recorders = attachedRecorders
    if recorders.isEmpty {
      await letWorkRun()
    } else {
      let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
      var settling = Settling(caller: "checkSuspension()", location: location)
      defer { settling.failsafe?.cancel() }
      await settle(recorders, &settling)
    }
    let left = sleepers
    guard left.isEmpty else {
      throw TestClockError.sleepersSuspended(
        "checkSuspension(): \(counted(left.count, "task sleeps", "tasks sleep")) on the test clock: "
          + left.map(\.description).joined(separator: ", ")
          + ". Advance the clock (`advance(by:)`, `run()`) until the work is done, or cancel it.")
    }
  }

  /// One advance's (or run's) waits for the work of the test stores to settle: its failsafe, started at the
  /// first wait, and whether it gave up.
  struct Settling {
    let caller: String
    let location: SourceLocation
    let timeout: Duration?
    /// Whether an expired failsafe records an issue here (an advance), or the caller reports it (run()).
    let reportsExpiry: Bool
    var failsafe: Failsafe?
    /// Set once the failsafe has expired: later steps no longer wait.
    var gaveUp = false
    /// What was still running when it gave up.
    var unsettled: [String] = []

    init(caller: String, location: SourceLocation, timeout: Duration? = nil, reportsExpiry: Bool = true) {
      self.caller = caller
      self.location = location
      self.timeout = timeout
      self.reportsExpiry = reportsExpiry
    }

    var bound: Duration { failsafe?.bound ?? timeout ?? TestStoreConfiguration.defaultFailsafe }
  }

  /// Returns once every test store in `recorders` has settled: nothing in flight, or nothing of it can run
  /// (asleep on this clock, or suspended on something the test drives). It waits for events (the stores' and the clock's), never for time; once the
  /// failsafe has expired it records an issue (unless the caller reports it) and stops waiting for the
  /// rest of the advance.
  nonisolated(nonsending) func settle(_ recorders: [any ClockObserving], _ settling: inout Settling) async {
    while !settling.gaveUp, !Task.isCancelled {
      let generations = watchedGenerations()
      let busy = recorders.compactMap { recorder -> (recorder: any ClockObserving, running: String)? in
        if case .busy(let running) = recorder.settlement() { return (recorder, running) }
        return nil
      }
      if busy.isEmpty {
        if Self.unchanged(generations) { return }
        continue
      }
      if settling.failsafe == nil {
        settling.failsafe = startFailsafe(timeout: settling.timeout, recorders: recorders)
      }
      if let failsafe = settling.failsafe, failsafe.isExpired {
        settling.gaveUp = true
        settling.unsettled = busy.map(\.running)
        guard settling.reportsExpiry else { return }
        recordIssue(
          "\(settling.caller): the test store's work did not settle within \(describe(failsafe.bound)) (the "
            + "failsafe): still running \(settling.unsettled.joined(separator: "; ")). An advance first waits "
            + "until nothing of the work in flight can run; work that never stops running (a busy loop, a task "
            + "the test store cannot see run) keeps it waiting. The clock moved anyway.",
          at: settling.location)
        return
      }
      await Self.waitForChange(generations, orIdle: busy.map(\.recorder))
    }
  }

  /// The generations of the clock's signal and of the test stores that use it, for a wait on any of them.
  func watchedGenerations() -> [(signal: ChangeSignal, generation: UInt64)] {
    ([signal] + attachedRecorders.map(\.signal)).map { ($0, $0.generation) }
  }

  /// Returns once a signal moves past `generations`, or one of `recorders` reports that its store has
  /// nothing in flight (a store's work can end without an event of its recorder: a task the store owns).
  static func waitForChange(
    _ generations: [(signal: ChangeSignal, generation: UInt64)], orIdle recorders: [any ClockObserving]
  ) async {
    guard !recorders.isEmpty else {
      await ChangeSignal.waitForAny(generations)
      return
    }
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await ChangeSignal.waitForAny(generations) }
      for recorder in recorders {
        let generation = recorder.signal.generation
        group.addTask { await recorder.waitForChangeOrIdle(after: generation) }
      }
      await group.next()
      group.cancelAll()
    }
  }

  /// Whether no signal has moved since `generations` were read.
  static func unchanged(_ generations: [(signal: ChangeSignal, generation: UInt64)]) -> Bool {
    generations.allSatisfy { $0.signal.generation == $0.generation }
  }

  /// A failsafe for a wait of the clock: `timeout`, or the failsafe of the first test store that uses the
  /// clock (measured on its failsafe clock), or ``TestStoreConfiguration/defaultFailsafe`` (measured on the clock's
  /// own).
  func startFailsafe(timeout: Duration?, recorders: [any ClockObserving]) -> Failsafe {
    let bound = timeout ?? recorders.first?.failsafeBound ?? TestStoreConfiguration.defaultFailsafe
    let clock = recorders.first?.failsafeClock ?? failsafeClock
    return Failsafe(bound: bound, clock: clock) { [signal] in signal.bump() }
  }
}

/// Errors a ``TestClock`` throws.
///
/// - Important: In a Swift Testing test, ``TestClock/waitForSleepers(count:timeout:fileID:filePath:line:column:)``
///   records the issue with a failed `#require` and throws the `ExpectationFailedError` that `#require` throws,
///   in place of ``sleepersNotReached(_:)``, so that the failure is reported once.
///   ``TestClock/checkSuspension(fileID:filePath:line:column:)`` records nothing and throws
///   ``sleepersSuspended(_:)`` as it is, so that a test can catch it.
public enum TestClockError: Error, Sendable, Equatable, CustomStringConvertible {
  /// ``TestClock/waitForSleepers(count:timeout:fileID:filePath:line:column:)`` gave up: the sleepers it
  /// waited for could not come (the test store's work was all asleep on the clock already), or did not
  /// come within the failsafe. The associated value is the message of the issue it recorded; the error
  /// only stops the test, which could not go on without the sleepers.
  case sleepersNotReached(String)

  /// ``TestClock/checkSuspension(fileID:filePath:line:column:)`` found tasks sleeping on the clock once the
  /// work around it had run (swift-clocks' `SuspensionError`). The associated value names them.
  case sleepersSuspended(String)

  /// What happened and what to do about it.
  public var description: String {
    switch self {
    case .sleepersNotReached(let message), .sleepersSuspended(let message): message
    }
  }
}
