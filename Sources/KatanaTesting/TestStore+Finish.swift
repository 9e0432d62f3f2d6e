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
  /// It waits for the store to report that it is idle, never for a duration. If that does not happen
  /// within the failsafe (``TestStoreConfiguration/failsafe``), it records an issue listing what is still
  /// running, and returns.
  ///
  /// - Important: Work a side effect starts in an unstructured `Task` is invisible to the store until it
  ///   dispatches; keep asynchronous work in the side effect's body, or hand it to the store with
  ///   `context.send`.
  public nonisolated(nonsending) func waitUntilIdle(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    _ = await settle(at: location, for: "waitUntilIdle()")
  }

  /// Ends the test: waits until the store has no work in flight, checks that every received item was
  /// asserted, and shuts the store down.
  ///
  /// ```swift
  /// try await store.dispatch(Search())
  /// await store.receive(SetResults.self) { $0.results = ["katana"] }
  /// await store.finish()
  /// ```
  ///
  /// Records an issue if work is still running when the failsafe (``TestStoreConfiguration/failsafe``)
  /// expires, and, in exhaustive mode, if received items were not asserted. Then the store shuts down,
  /// cancelling anything it still owns; later dispatches throw `StoreError.storeShutDown`.
  ///
  /// Calling it is optional but recommended: a test store that is released without it runs the exhaustive
  /// checks then, without waiting, so work that is about to finish counts as still running.
  public nonisolated(nonsending) func finish(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    let settled = await settle(at: location, for: "finish()")
    if let report = recorder.endOfTest(), report.exhaustivity == .on, !report.unasserted.isEmpty {
      recordIssue(Self.unassertedMessage(report.unasserted, when: "at the end of the test"), at: location)
    }
    if settled {
      await store.shutdown()
    } else {
      // Something ignores cancellation; shut down without waiting for it.
      let store = self.store
      Task { await store.shutdown() }
    }
  }

  /// Waits until the store and the test's own tasks have nothing in flight; records an issue and returns
  /// false if the failsafe expires first.
  nonisolated(nonsending) func settle(at location: SourceLocation, for caller: String) async -> Bool {
    var failsafe: Failsafe?
    defer { failsafe?.cancel() }
    while true {
      if Task.isCancelled { return false }
      let generation = recorder.generation
      let ownWorkRunning = recorder.hasOwnWorkRunning
      if !ownWorkRunning, store.activeWork == 0 { return true }
      if failsafe == nil { failsafe = recorder.startFailsafe() }
      if let failsafe, failsafe.isExpired {
        recordIssue(
          "\(caller): the store still has work in flight after \(describe(failsafe.bound)) (the test store's "
            + "hang failsafe): \(recorder.runningDescription()). Cancel long-running work, or advance the clock "
            + "it waits for, before the test ends.",
          at: location)
        return false
      }
      if await waitForChangeOrIdle(after: generation, ownWorkRunning: ownWorkRunning) { return true }
    }
  }

  /// Returns true once the store reports that it has nothing in flight, false once the recorder saw an event
  /// after `generation` (or the calling task is cancelled), whichever comes first.
  ///
  /// While a task of the test is registered, only events count: the store may look idle before that task
  /// has reached it.
  nonisolated(nonsending) func waitForChangeOrIdle(after generation: UInt64, ownWorkRunning: Bool) async -> Bool {
    let recorder = self.recorder
    guard !ownWorkRunning else {
      await recorder.waitForChange(after: generation)
      return false
    }
    let store = self.store
    return await withTaskGroup(of: Bool.self) { group in
      group.addTask {
        await recorder.waitForChange(after: generation)
        return false
      }
      group.addTask {
        do {
          try await store.waitUntilIdle()
          return true
        } catch {
          return false
        }
      }
      let first = await group.next() ?? false
      group.cancelAll()
      return first
    }
  }
}
