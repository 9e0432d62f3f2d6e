import Katana
import Testing

extension TestStore {
  /// Waits until the store has no work in flight: no dispatch running, no item waiting in the mailbox, no
  /// task the store owns, no side effect the test started with `send`.
  ///
  /// ```swift
  /// store.exhaustivity = .off
  /// store.send(Refresh())
  /// await store.waitUntilIdle()
  /// #expect(store.state.items.count == 3)
  /// ```
  ///
  /// It waits for the store to report that it is idle, never for a duration. If nothing in flight can run
  /// (it is asleep on the test clock, or suspended on something the test drives: a stream it feeds, a
  /// dependency that has not answered), the store cannot become idle before the test acts: it records an
  /// issue at once, naming the sleepers. If the store does not become idle within the failsafe
  /// (``TestStoreConfiguration/failsafe``), it records an issue listing what is still running. Either way
  /// it then returns. A `Task {}` that a side effect started counts as in flight until it ends.
  public nonisolated(nonsending) func waitUntilIdle(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    await waitUntilIdle(at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  nonisolated(nonsending) func waitUntilIdle(at location: SourceLocation) async {
    if case .parked(let sleepers) = await settle(at: location, for: "waitUntilIdle()") {
      recordIssue(
        "waitUntilIdle(): the store cannot become idle until \(Parking.until(sleepers)). "
          + "Advance the clock, or cancel the work, first.",
        at: location)
    }
  }

  /// Ends the test: waits until the store has no work in flight, checks that every received item was
  /// asserted and that no error went unnoticed, and shuts the store down.
  ///
  /// ```swift
  /// try await store.dispatch(Search())
  /// await store.receive(SetResults.self) { $0.results = ["katana"] }
  /// await store.finish()
  /// ```
  ///
  /// Records an issue:
  /// - if work is still in flight: at once if all of it is asleep on the test clock (naming the sleepers;
  ///   a non-exhaustive test store cancels such work without an issue), otherwise when the failsafe
  ///   (``TestStoreConfiguration/failsafe``) expires. To stop work the test does not drive, see
  ///   ``skipInFlightEffects(strict:fileID:filePath:line:column:)``;
  /// - in exhaustive mode, if received items were not asserted;
  /// - if a side effect the test sent threw and the test never looked at its outcome, or a side effect sent
  ///   by another one threw and no ``receiveError(from:matching:fileID:filePath:line:column:)`` asserted it.
  ///
  /// Then the store shuts down, cancelling anything it still owns; later dispatches throw
  /// `StoreError.storeShutDown`.
  ///
  /// Calling it is optional but recommended: a test store that is released without it runs the exhaustive
  /// checks then, without waiting, so work that is about to finish counts as still running.
  public nonisolated(nonsending) func finish(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    await finish(at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  nonisolated(nonsending) func finish(at location: SourceLocation) async {
    let exhaustivity = self.exhaustivity
    let settlement = await settle(at: location, for: "finish()")
    if case .parked(let sleepers) = settlement {
      let message =
        "finish(): the store still has work in flight, and it cannot go on until \(Parking.until(sleepers)). "
        + "Advance the clock, or cancel the work, before the test ends."
      if exhaustivity == .on {
        recordIssue(message, at: location)
      } else if exhaustivity.showsSkippedAssertions {
        showSkippedAssertion(message + " (Cancelled.)", at: location)
      }
    }
    if let report = recorder.endOfTest() {
      Self.reportUnhandledErrors(report, at: location)
      if !report.unasserted.isEmpty {
        if report.exhaustivity == .on {
          recordIssue(Self.unassertedMessage(report.unasserted, when: "at the end of the test"), at: location)
        } else if report.exhaustivity.showsSkippedAssertions {
          showSkippedAssertion(
            "\(counted(report.unasserted.count, "received item was", "received items were")) not asserted at the "
              + "end of the test: \(describeList(report.unasserted.map(\.item))).",
            at: location)
        }
      }
      if !report.unassertedOutputs.isEmpty {
        if report.exhaustivity == .on {
          recordIssue(
            Self.unassertedOutputsMessage(report.unassertedOutputs, when: "at the end of the test"), at: location)
        } else if report.exhaustivity.showsSkippedAssertions {
          showSkippedAssertion(
            "\(counted(report.unassertedOutputs.count, "output was", "outputs were")) not asserted at the end of the "
              + "test: \(describeOutputs(report.unassertedOutputs)).",
            at: location)
        }
      }
    }
    if case .busy = settlement {
      // Something ignores cancellation; shut down without waiting for it.
      let store = self.store
      Task { await store.shutdown() }
    } else {
      await store.shutdown()
    }
  }

  /// Waits until the store and the test's own tasks have nothing in flight (`.idle`), or until everything in
  /// flight is asleep on the test clock (`.parked`). Records an issue and returns `.busy` if the failsafe
  /// expires first (or the calling task is cancelled).
  nonisolated(nonsending) func settle(at location: SourceLocation, for caller: String) async -> Settlement {
    var failsafe: Failsafe?
    defer { failsafe?.cancel() }
    while true {
      if Task.isCancelled { return .busy("cancelled") }
      let generation = recorder.signal.generation
      let settlement = recorder.settlementForWait()
      guard case .busy(let running) = settlement else { return settlement }
      if failsafe == nil { failsafe = recorder.startFailsafe() }
      if let failsafe, failsafe.isExpired {
        recordIssue(
          "\(caller): the store still has work in flight after \(describe(failsafe.bound)) (the test store's "
            + "hang failsafe): \(running). Cancel long-running work, or advance the clock it waits for, before "
            + "the test ends.",
          at: location)
        return settlement
      }
      await recorder.waitForChangeOrIdle(after: generation)
    }
  }
}
