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
  /// no work in flight; it never waits for a duration (the failsafe aside).
  ///
  /// Exhaustive mode records an issue when:
  /// - the store has nothing in flight and no received item matches (the next received item, if any, is
  ///   then taken as the one the test meant, so that it is reported once);
  /// - a matching item was received after others that the test has not asserted (wrong order): the matching
  ///   one is asserted, the earlier ones stay queued.
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
  /// Only what has been received so far is dropped; it does not wait for work in flight.
  public func skipReceivedItems() {
    _ = recorder.takeReceived()
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
    guard let step = await findReceived(expecting: expectation, matching: matches, failsafe: &failsafe, at: location),
      await waitUntilApplied(step, failsafe: &failsafe, at: location)
    else { return nil }
    assertChange(of: step, mutation: mutation, at: location)
    return step
  }

  /// Takes the first received item that `matches` out of the queue, waiting for the store to dispatch more
  /// until it has nothing in flight.
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
        guard pending.exhaustivity == .on else {
          recorder.removeReceived(Set(pending.steps[...index].map(\.id)))
          return step
        }
        if index > 0 {
          let earlier = pending.steps[..<index].map(\.item)
          recordIssue(
            "Received \(describe(step.item)) out of order: \(describeList(earlier)) "
              + "\(earlier.count == 1 ? "was" : "were") received before it and not asserted yet. Assert received "
              + "items in the order the store received them.",
            at: location)
        }
        recorder.removeReceived([step.id])
        return step
      }
      if failsafe == nil { failsafe = recorder.startFailsafe() }
      if let failsafe, failsafe.isExpired {
        recordIssue(
          "Expected to receive \(expectation), but it was not received within \(describe(failsafe.bound)) (the "
            + "test store's hang failsafe), and the store still has work in flight: "
            + "\(recorder.runningDescription()).\(Self.receivedSoFar(pending.steps))",
          at: location)
        return nil
      }
      let isIdle = await waitForChangeOrIdle(after: pending.generation, ownWorkRunning: pending.ownWorkRunning)
      guard isIdle, recorder.generation == pending.generation else { continue }
      // The store has nothing in flight and nothing arrived since the snapshot: the item will not come.
      if pending.exhaustivity == .on, let next = pending.steps.first {
        // Take the next item as the one the test meant, so that it is not reported again as unasserted.
        recorder.removeReceived([next.id])
        let others = pending.steps.dropFirst().map(\.item)
        recordIssue(
          "Expected to receive \(expectation), but received \(describe(next.item))."
            + (others.isEmpty ? "" : " Also received, not asserted yet: \(describeList(others))."),
          at: location)
      } else {
        recordIssue(
          "Expected to receive \(expectation), but "
            + (pending.steps.isEmpty ? "nothing was received" : "no received item matches")
            + ", and the store has no work in flight.\(Self.receivedSoFar(pending.steps))",
          at: location)
      }
      return nil
    }
    return nil
  }

  /// Waits until the state change of `step` is known: a state updater is recorded when its interceptor
  /// chain starts, and applied by the time the chain returns. Returns false if the failsafe expired first.
  nonisolated(nonsending) func waitUntilApplied(
    _ step: RecordedStep<S>, failsafe: inout Failsafe?, at location: SourceLocation
  ) async -> Bool {
    while !Task.isCancelled {
      let (isReady, generation) = recorder.readiness(of: step)
      if isReady { return true }
      if failsafe == nil { failsafe = recorder.startFailsafe() }
      if let failsafe, failsafe.isExpired {
        recordIssue(
          "Received \(describe(step.item)), but it was not applied within \(describe(failsafe.bound)) (the test "
            + "store's hang failsafe): an interceptor holds its turn. Still in flight: "
            + "\(recorder.runningDescription()).",
          at: location)
        return false
      }
      await recorder.waitForChange(after: generation)
    }
    return false
  }

  static func receivedSoFar(_ steps: [RecordedStep<S>]) -> String {
    steps.isEmpty ? "" : " Received, not asserted: \(describeList(steps.map(\.item)))."
  }
}
