import Katana
import Testing

extension TestStore {
  /// Asserts that the next received item has type `I`, and asserts its state change.
  ///
  /// ```swift
  /// try await store.dispatch(Search())
  /// await store.receive(SetLoading.self) { $0.isLoading = true }
  /// await store.receive(SetResults.self) {
  ///   $0.isLoading = false
  ///   $0.results = ["katana"]
  /// }
  /// ```
  ///
  /// A received item is one dispatched by anything other than the test: a side effect, the dependency
  /// container, an interceptor. Received items are asserted in the order the store saw them (for state
  /// updaters, the order they were applied in), each with the state change it made, checked as
  /// ``dispatch(_:_:fileID:filePath:line:column:)-(U,_,_,_,_,_)`` checks it. Received side effects are
  /// items too: assert them without a mutation.
  ///
  /// If no received item matches yet, `receive` waits for the store to dispatch more, until the store has
  /// no work in flight, or until everything it has in flight is asleep on the test clock (then nothing can
  /// arrive before the test advances the clock, so it fails at once and names the sleepers). It never waits
  /// for a duration (the failsafe aside).
  ///
  /// Exhaustive mode records an issue when:
  /// - no received item matches and none can arrive (the next received item, if any, is then taken as the
  ///   one the test meant, so that it is reported once);
  /// - a matching item was received after others that the test has not asserted (wrong order): the matching
  ///   one is asserted; the earlier ones stay queued, to be asserted next, but are not reported again.
  ///
  /// In non-exhaustive mode, `receive` skips received items until one matches.
  ///
  /// - Returns: The received item, or nil if none matched.
  @discardableResult
  public nonisolated(nonsending) func receive<I: Dispatchable>(
    _ type: I.Type,
    _ mutation: ((inout S) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> I? {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    let step = await receiveStep(
      expecting: String(describing: I.self), matching: { $0 is I }, mutation: mutation, at: location)
    return step?.item as? I
  }

  /// Asserts that the next received item has type `I` and satisfies `predicate`, and asserts its state
  /// change.
  ///
  /// ```swift
  /// await store.receive(SetResults.self, where: { $0.results.count == 2 }) {
  ///   $0.results = ["katana", "katana-swift"]
  /// }
  /// ```
  ///
  /// See ``receive(_:_:fileID:filePath:line:column:)-(I.Type,_,_,_,_,_)``.
  ///
  /// - Returns: The received item, or nil if none matched.
  @discardableResult
  public nonisolated(nonsending) func receive<I: Dispatchable>(
    _ type: I.Type,
    where predicate: (I) -> Bool,
    _ mutation: ((inout S) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> I? {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    let step = await receiveStep(
      expecting: "\(I.self) matching the predicate", matching: { ($0 as? I).map(predicate) ?? false },
      mutation: mutation, at: location)
    return step?.item as? I
  }

  /// Asserts that the next received item equals `item`, and asserts its state change.
  ///
  /// ```swift
  /// await store.receive(SetResults(results: ["katana"])) { $0.results = ["katana"] }
  /// ```
  ///
  /// See ``receive(_:_:fileID:filePath:line:column:)-(I.Type,_,_,_,_,_)``.
  public nonisolated(nonsending) func receive<I: Dispatchable & Equatable>(
    _ item: I,
    _ mutation: ((inout S) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    await receiveStep(
      expecting: describe(item), matching: { ($0 as? I) == item }, mutation: mutation, at: location)
  }

  /// Asserts that the next received item satisfies `predicate`, whatever its type, and asserts its state
  /// change.
  ///
  /// ```swift
  /// await store.receive(where: { $0 is any AnyStateUpdater }) { $0.isLoading = true }
  /// ```
  ///
  /// See ``receive(_:_:fileID:filePath:line:column:)-(I.Type,_,_,_,_,_)``.
  ///
  /// - Returns: The received item, or nil if none matched.
  @discardableResult
  public nonisolated(nonsending) func receive(
    where predicate: (any Dispatchable) -> Bool,
    _ mutation: ((inout S) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> (any Dispatchable)? {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    return await receiveStep(
      expecting: "an item matching the predicate", matching: predicate, mutation: mutation, at: location)?.item
  }

  /// Drops the received items that the test has not asserted yet, so that exhaustive mode does not report
  /// them.
  ///
  /// Only what has been received so far is dropped; it does not wait for work in flight. A non-exhaustive
  /// test store that shows skipped assertions shows the dropped items.
  public func skipReceivedItems(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    skipReceivedItems(at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  func skipReceivedItems(at location: SourceLocation) {
    let skipped = recorder.takeReceived()
    guard exhaustivity.showsSkippedAssertions, !skipped.isEmpty else { return }
    showSkippedAssertion(
      "skipReceivedItems() dropped \(counted(skipped.count, "received item")): \(describeList(skipped.map(\.item))).",
      at: location)
  }

  /// Asserts that a side effect of type `E`, handed to the store with `send` by another side effect, threw
  /// an error, and returns the error.
  ///
  /// ```swift
  /// try await store.dispatch(StartSync())            // sends Upload() with context.send
  /// await store.receive(Upload.self)
  /// let error = await store.receiveError(from: Upload.self)
  /// #expect(error as? UploadError == .offline)
  /// ```
  ///
  /// An item handed to the store with `send` runs in a task the store owns, and its error goes to a handle
  /// that nobody may look at. So the test store records such errors (all but `CancellationError`), and the
  /// end of the test reports those that no `receiveError` asserted. It waits for the error as `receive`
  /// waits for an item.
  ///
  /// - Parameters:
  ///   - type: The side effect's type.
  ///   - matches: Which error to expect; any, by default.
  ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  /// - Returns: The error, or nil (after recording an issue) if none came.
  @discardableResult
  public nonisolated(nonsending) func receiveError<E: Dispatchable>(
    from type: E.Type,
    matching matches: (any Error) -> Bool = { _ in true },
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> (any Error)? {
    await receiveError(
      expecting: "an error from \(E.self)", from: { $0 is E }, matching: matches,
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Takes the first recorded error of a sent side effect that `item` accepts and `matches`, waiting for the
  /// store as `receive` does; records an issue and returns nil if none comes.
  nonisolated(nonsending) func receiveError(
    expecting expectation: String,
    from item: (any Dispatchable) -> Bool,
    matching matches: (any Error) -> Bool,
    at location: SourceLocation
  ) async -> (any Error)? {
    var failsafe: Failsafe?
    defer { failsafe?.cancel() }
    while !Task.isCancelled {
      let generation = recorder.signal.generation
      if let step = recorder.takeUnhandledError(where: { item($0.item) && $0.error.map(matches) ?? false }) {
        return step.error
      }
      let settlement = recorder.settlementForWait()
      if case .busy = settlement {
        if failsafe == nil { failsafe = recorder.startFailsafe() }
        if let failsafe, failsafe.isExpired {
          recordIssue(
            "Expected \(expectation), but none came within \(describe(failsafe.bound)) (the test store's hang "
              + "failsafe), and the store still has work in flight: \(recorder.runningDescription()).",
            at: location)
          return nil
        }
        await recorder.waitForChangeOrIdle(after: generation)
        continue
      }
      guard recorder.signal.generation == generation else { continue }
      let others = recorder.unhandledErrorSteps.map { "\(describe($0.item)) threw \($0.error.map { "\($0)" } ?? "")" }
      recordIssue(
        "Expected \(expectation), but none was thrown, and \(Self.nothingMoreCanArrive(settlement))."
          + (others.isEmpty ? "" : " Errors not asserted: \(others.joined(separator: ", "))."),
        at: location)
      return nil
    }
    return nil
  }

  /// Finds the received item the test expects, waiting for the store if needed, and asserts its state
  /// change. Records an issue and returns nil if there is none.
  @discardableResult
  nonisolated(nonsending) func receiveStep(
    expecting expectation: String,
    matching matches: (any Dispatchable) -> Bool,
    mutation: ((inout S) throws -> Void)?,
    at location: SourceLocation
  ) async -> RecordedStep<S>? {
    var failsafe: Failsafe?
    defer { failsafe?.cancel() }
    while true {
      guard
        let step = await findReceived(expecting: expectation, matching: matches, failsafe: &failsafe, at: location),
        await waitUntilApplied(step, failsafe: &failsafe, at: location)
      else { return nil }
      // The store rejected the item for its type: it was never a received item.
      if recorder.readiness(of: step).isDiscarded { continue }
      assertChange(of: step, mutation: mutation, at: location)
      return step
    }
  }

  /// Takes the first received item that `matches` out of the queue, waiting for the store to dispatch more
  /// until nothing more can arrive.
  nonisolated(nonsending) func findReceived(
    expecting expectation: String,
    matching matches: (any Dispatchable) -> Bool,
    failsafe: inout Failsafe?,
    at location: SourceLocation
  ) async -> RecordedStep<S>? {
    while !Task.isCancelled {
      let pending = recorder.pendingReceived
      // The predicate is user code: it runs on a snapshot, outside the recorder's lock.
      if let index = pending.steps.firstIndex(where: { matches($0.item) }) {
        let step = pending.steps[index]
        let earlier = Array(pending.steps[..<index])
        guard pending.exhaustivity == .on else {
          recorder.removeReceived(Set(pending.steps[...index].map(\.id)))
          let unshown = earlier.filter { !pending.reported.contains($0.id) }
          if pending.exhaustivity.showsSkippedAssertions, !unshown.isEmpty {
            showSkippedAssertion(
              "receive skipped \(counted(unshown.count, "received item")) before \(describe(step.item)): "
                + "\(describeList(unshown.map(\.item))).",
              at: location)
          }
          return step
        }
        // Each earlier item is named once: here, or never again at the end of the test.
        let unreported = earlier.filter { !pending.reported.contains($0.id) }
        if !unreported.isEmpty {
          recorder.markReported(unreported)
          recordIssue(
            "Received \(describe(step.item)) out of order: \(describeList(unreported.map(\.item))) "
              + "\(unreported.count == 1 ? "was" : "were") received before it and not asserted yet. Assert received "
              + "items in the order the store received them.",
            at: location)
        }
        recorder.removeReceived([step.id])
        return step
      }
      let settlement = recorder.settlementForWait()
      if case .busy = settlement {
        if failsafe == nil { failsafe = recorder.startFailsafe() }
        if let failsafe, failsafe.isExpired {
          recordIssue(
            "Expected to receive \(expectation), but it was not received within \(describe(failsafe.bound)) (the "
              + "test store's hang failsafe), and the store still has work in flight: "
              + "\(recorder.runningDescription()).\(Self.receivedSoFar(pending.steps, reported: pending.reported))",
            at: location)
          return nil
        }
        await recorder.waitForChangeOrIdle(after: pending.generation)
        continue
      }
      // Nothing more can arrive: the store is idle, or nothing of its work can run. Unless an item arrived
      // since the snapshot, the expected one will not come.
      guard recorder.signal.generation == pending.generation else { continue }
      if pending.exhaustivity == .on, let next = pending.steps.first {
        // Take the next item as the one the test meant, so that it is not reported again as unasserted.
        recorder.removeReceived([next.id])
        let others = pending.steps.dropFirst().filter { !pending.reported.contains($0.id) }.map(\.item)
        var message = "Expected to receive \(expectation), but received \(describe(next.item))."
        if next.item is any ScopedDispatchable {
          message +=
            " A feature's items are received through a handle of the scope they came through (`scope(_:dependencies:)` "
            + "of the test store)."
        }
        if !others.isEmpty { message += " Also received, not asserted yet: \(describeList(others))." }
        if case .parked(let sleepers) = settlement {
          message += " Nothing else can arrive until \(Parking.until(sleepers))."
        }
        recordIssue(message, at: location)
      } else {
        recordIssue(
          "Expected to receive \(expectation), but "
            + (pending.steps.isEmpty ? "nothing was received" : "no received item matches")
            + ", and \(Self.nothingMoreCanArrive(settlement)).\(Self.receivedSoFar(pending.steps, reported: pending.reported))",
          at: location)
      }
      return nil
    }
    return nil
  }

  /// Waits until the state change of `step` is known: a state updater is recorded when its interceptor
  /// chain starts, and applied by the time the chain returns. Returns false if it cannot be (everything in
  /// flight sleeps on the test clock) or the failsafe expired first.
  nonisolated(nonsending) func waitUntilApplied(
    _ step: RecordedStep<S>, failsafe: inout Failsafe?, at location: SourceLocation
  ) async -> Bool {
    while !Task.isCancelled {
      let (isReady, _, generation) = recorder.readiness(of: step)
      if isReady { return true }
      if case .parked(let sleepers) = recorder.settlementForWait() {
        // The step may have been applied after its readiness was read and before the store looked parked
        // (its chain ended, then the work that dispatched it): only a verdict with no event since counts.
        guard recorder.signal.generation == generation else { continue }
        recordIssue(
          "Received \(describe(step.item)), but it cannot be applied until the test clock moves: an interceptor "
            + "holds its turn, and \(Parking.describe(sleepers)). Advance the clock before receiving it.",
          at: location)
        return false
      }
      if failsafe == nil { failsafe = recorder.startFailsafe() }
      if let failsafe, failsafe.isExpired {
        recordIssue(
          "Received \(describe(step.item)), but it was not applied within \(describe(failsafe.bound)) (the test "
            + "store's hang failsafe): an interceptor holds its turn. Still in flight: "
            + "\(recorder.runningDescription()).",
          at: location)
        return false
      }
      await recorder.signal.wait(after: generation)
    }
    return false
  }

  static func receivedSoFar(_ steps: [RecordedStep<S>], reported: Set<UInt64>) -> String {
    let unreported = steps.filter { !reported.contains($0.id) }
    return unreported.isEmpty ? "" : " Received, not asserted: \(describeList(unreported.map(\.item)))."
  }

  /// Why nothing more can arrive, for messages: `the store has no work in flight`, or the sleepers that
  /// hold it and what to do.
  static func nothingMoreCanArrive(_ settlement: Settlement) -> String {
    switch settlement {
    case .idle, .busy: "the store has no work in flight"
    case .parked(let sleepers):
      "nothing can arrive until \(Parking.until(sleepers)); advance the clock "
        + "(`clock.advance(by:)`) before expecting what follows the sleep"
    }
  }
}
