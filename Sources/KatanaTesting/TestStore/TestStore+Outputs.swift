import Katana
import Testing

extension TestStore {
  /// Asserts that the next feature output nothing handled equals `output`.
  ///
  /// A feature under test has no app around it: every output its side effects emit (see `FeatureOutput`)
  /// is recorded, in the order emitted, until the test asserts it, and `emit` returns at once (or with what
  /// ``handleOutputs(_:_:)`` answers).
  ///
  /// ```swift
  /// try await store.dispatch(AddProductToCart(productID: whisk.id))
  /// await store.receive(StartAdding(productID: whisk.id)) { $0.adding = [whisk.id: 1] }
  /// await store.receiveOutput(CatalogOutput.addToCart(whisk))
  /// ```
  ///
  /// If none has been emitted yet, it waits for the store as ``receive(_:_:fileID:filePath:line:column:)-(I.Type,_,_,_,_,_)``
  /// does: until the store has no work in flight, or everything in flight sleeps on the test clock (then it
  /// fails at once), or the failsafe expires.
  ///
  /// Exhaustive mode records an issue when the next output is another one (it is then taken as the one the
  /// test meant, so that it is reported once), and, at the end of the test, for every output not asserted.
  /// In non-exhaustive mode, `receiveOutput` skips outputs until one matches.
  public nonisolated(nonsending) func receiveOutput<Output: FeatureOutput & Equatable>(
    _ output: Output,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    await receiveOutput(
      expecting: describe(output), matching: { ($0 as? Output) == output },
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Asserts that the next feature output nothing handled has type `Output`, and returns it; see
  /// ``receiveOutput(_:fileID:filePath:line:column:)-(Output,_,_,_,_)``.
  ///
  /// - Returns: The output, or nil (after recording an issue) if none came.
  @discardableResult
  public nonisolated(nonsending) func receiveOutput<Output: FeatureOutput>(
    _ type: Output.Type,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> Output? {
    await receiveOutput(
      expecting: "an output of type \(Output.self)", matching: { $0 is Output },
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)) as? Output
  }

  /// Answers the outputs of type `Output` as the code that mounts the feature would: `handler` runs in the
  /// emitting side effect's task, which waits for it, and its error is what `emit` throws.
  ///
  /// ```swift
  /// store.handleOutputs(CatalogOutput.self) { _ in throw CartRefusal(reason: "out of stock") }
  /// ```
  ///
  /// The outputs are still recorded for ``receiveOutput(_:fileID:filePath:line:column:)-(Output,_,_,_,_)``.
  /// Handlers added later are tried after earlier ones; the first that takes the output's type answers.
  public func handleOutputs<Output: FeatureOutput>(
    _ type: Output.Type, _ handler: @escaping @Sendable (Output) async throws -> Void
  ) {
    recorder.addOutputHandler { output in
      guard let output = output as? Output else { return false }
      try await handler(output)
      return true
    }
  }

  /// Takes the first recorded output that `matches`, waiting for the store as `receive` does; records an
  /// issue and returns nil if none comes.
  @discardableResult
  nonisolated(nonsending) func receiveOutput(
    expecting expectation: String,
    matching matches: (any FeatureOutput) -> Bool,
    at location: SourceLocation
  ) async -> (any FeatureOutput)? {
    var failsafe: Failsafe?
    defer { failsafe?.cancel() }
    while !Task.isCancelled {
      let pending = recorder.pendingOutputs
      if pending.exhaustivity == .on, let next = pending.outputs.first {
        recorder.removeOutputs(through: 0)
        if !matches(next) {
          recordIssue("Expected the output \(expectation), but the feature emitted \(describe(next)).", at: location)
          return nil
        }
        return next
      }
      // The predicate is user code: it runs on a snapshot, outside the recorder's lock.
      if pending.exhaustivity != .on, let index = pending.outputs.firstIndex(where: matches) {
        recorder.removeOutputs(through: index)
        return pending.outputs[index]
      }
      let settlement = recorder.settlementForWait()
      if case .busy = settlement {
        if failsafe == nil { failsafe = recorder.startFailsafe() }
        if let failsafe, failsafe.isExpired {
          recordIssue(
            "Expected the output \(expectation), but none came within \(describe(failsafe.bound)) (the test store's "
              + "hang failsafe), and the store still has work in flight: \(recorder.runningDescription()).",
            at: location)
          return nil
        }
        await recorder.waitForChangeOrIdle(after: pending.generation)
        continue
      }
      guard recorder.signal.generation == pending.generation else { continue }
      recordIssue(
        "Expected the output \(expectation), but "
          + (pending.outputs.isEmpty
            ? "the feature emitted none" : "none matches (\(describeOutputs(pending.outputs)))")
          + ", and \(Self.nothingMoreCanArrive(settlement)).",
        at: location)
      return nil
    }
    return nil
  }

  static func unassertedOutputsMessage(_ outputs: [any FeatureOutput], when: String) -> String {
    "\(counted(outputs.count, "output was", "outputs were")) emitted and not asserted \(when): "
      + "\(describeOutputs(outputs)). Assert them with `receiveOutput`, or set `exhaustivity = .off`."
  }
}

/// How the test store names an output in messages: its value, shortened.
func describe(_ output: any FeatureOutput) -> String {
  abbreviated(String(describing: output))
}

/// Lists outputs for a message.
func describeOutputs(_ outputs: [any FeatureOutput]) -> String {
  outputs.map(describe).joined(separator: ", ")
}
