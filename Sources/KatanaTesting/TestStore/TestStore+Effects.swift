import Katana
import Testing

extension TestStore {
  /// Cancels everything the store runs under `id`, as `Store.cancel(id:)` does: runs, debounced and
  /// throttled calls, timers and sequences.
  ///
  /// ```swift
  /// let timer = store.send(StartTimer())   // ticks every second under TimerID()
  /// await clock.advance(by: .seconds(1))
  /// await store.receive(Tick.self) { $0.ticks = 1 }
  /// store.cancel(id: TimerID())
  /// await #expect(throws: CancellationError.self) { try await timer.value }
  /// ```
  ///
  /// It reaches what runs under `id` now: a side effect the test has just sent may not have started its
  /// run yet (``send(_:fileID:filePath:line:column:)-(E,_,_,_,_)`` starts it asynchronously). Synchronise on
  /// what it does first (a received item, a sleeper), or send a side effect that cancels.
  public func cancel(id: some Hashable & Sendable) {
    store.cancel(id: id)
  }

  /// Cancels the side effects the test started that are still running, and waits until they have
  /// returned: for a test that checks some of a feature's work and does not want to drive the rest.
  ///
  /// ```swift
  /// store.send(StartPolling())
  /// await store.receive(SetItems.self) { $0.items = ["a"] }
  /// await store.skipInFlightEffects()   // stops polling; finish() then has nothing to wait for
  /// await store.finish()
  /// ```
  ///
  /// Cancellation reaches everything those side effects await, including work they run under an id. Work
  /// that a side effect handed to the store with `context.send` runs in a task the store owns and keeps
  /// running (cancel it by id; ``finish(fileID:filePath:line:column:)`` cancels it at shutdown). What the
  /// cancelled side effects dispatched before they returned stays queued as received items. A non-exhaustive
  /// test store that shows skipped assertions shows what was cancelled.
  ///
  /// - Parameters:
  ///   - strict: Whether to record an issue when nothing is in flight: a call that cancels nothing is a
  ///     mistake in an exhaustive test.
  ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  public nonisolated(nonsending) func skipInFlightEffects(
    strict: Bool = true,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    await skipInFlightEffects(
      strict: strict, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  nonisolated(nonsending) func skipInFlightEffects(strict: Bool, at location: SourceLocation) async {
    let inFlight = recorder.state.withLock { Array($0.ownWork.values) }
    guard !inFlight.isEmpty else {
      if strict {
        recordIssue(
          "skipInFlightEffects(): no side effect that the test started is in flight. Remove the call, or pass "
            + "`strict: false`.",
          at: location)
      }
      return
    }
    if exhaustivity.showsSkippedAssertions {
      showSkippedAssertion(
        "skipInFlightEffects() cancelled \(counted(inFlight.count, "item")) still in flight: "
          + "\(describeList(inFlight.map(\.item))).",
        at: location)
    }
    for work in inFlight {
      work.cancel()
    }
    var failsafe: Failsafe?
    defer { failsafe?.cancel() }
    while !Task.isCancelled {
      let generation = recorder.signal.generation
      let ids = Set(inFlight.map { ObjectIdentifier($0) })
      let left = recorder.state.withLock { state in state.ownWork.values.filter { ids.contains(ObjectIdentifier($0)) } }
      if left.isEmpty { return }
      if failsafe == nil { failsafe = recorder.startFailsafe() }
      if let failsafe, failsafe.isExpired {
        recordIssue(
          "skipInFlightEffects(): \(describeList(left.map(\.item))) did not return within "
            + "\(describe(failsafe.bound)) of being cancelled (the test store's hang failsafe): it ignores "
            + "cancellation.",
          at: location)
        return
      }
      await recorder.signal.wait(after: generation)
    }
  }
}
