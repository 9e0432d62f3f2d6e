#if canImport(Observation)
  import Katana
  import Testing

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  extension ObservableStore {
    /// Waits until the model shows the store's latest committed state (for a model of a scope: the scope's
    /// slice of it), so that a test reads what a view would read after a dispatch.
    ///
    /// ```swift
    /// try await store.dispatch(ClearCart())
    /// await model.waitUntilShowsLatestState()
    /// #expect(model.cart.items.isEmpty)
    /// ```
    ///
    /// The model applies committed states on the main actor, in a later turn than the commit; this waits for
    /// those turns, never for a duration. It compares the state the model shows with the store's latest one
    /// each time the model applies a state, so a commit made meanwhile is waited for too.
    ///
    /// - Parameters:
    ///   - failsafe: How long to wait before recording an issue and returning: a hang failsafe, as the test
    ///     store's (``TestStoreConfiguration/failsafe``); ``TestStoreConfiguration/defaultFailsafe`` (30 seconds) by
    ///     default.
    ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
    ///   - filePath: The caller's file path; leave the default.
    ///   - line: The caller's line; leave the default.
    ///   - column: The caller's column; leave the default.
    /// - Returns: Whether the model shows the latest state; false after recording an issue (the failsafe
    ///   expired, or the store shut down before the model caught up).
    @discardableResult
    public func waitUntilShowsLatestState(
      failsafe: Duration = TestStoreConfiguration.defaultFailsafe,
      fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async -> Bool where S: Equatable {
      await waitUntilShows(
        expecting: "the store's latest committed state", { $0 == self.latestCommittedState },
        failsafe: failsafe,
        at: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// Waits until the state the model shows satisfies `predicate`.
    ///
    /// ```swift
    /// model.send(AddItem(name: "tea"))
    /// await model.waitUntilShows { $0.cart.items.count == 1 }
    /// ```
    ///
    /// `predicate` runs on the main actor, on the state the model shows, now and after each state the model
    /// applies. See ``waitUntilShowsLatestState(failsafe:fileID:filePath:line:column:)``.
    ///
    /// - Returns: Whether the predicate holds; false after recording an issue.
    @discardableResult
    public func waitUntilShows(
      failsafe: Duration = TestStoreConfiguration.defaultFailsafe,
      fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column,
      _ predicate: (S) -> Bool
    ) async -> Bool {
      await waitUntilShows(
        expecting: "a state matching the predicate", predicate, failsafe: failsafe,
        at: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    private func waitUntilShows(
      expecting expectation: String, _ predicate: (S) -> Bool, failsafe bound: Duration, at location: SourceLocation
    ) async -> Bool {
      var failsafe: Failsafe?
      defer { failsafe?.cancel() }
      while true {
        // Read without tracking: a test that observes the model must not see its own reads.
        if predicate(untrackedState) { return true }
        if failsafe?.isExpired == true {
          recordIssue(
            "Expected the model to show \(expectation), but it did not within \(describe(bound)) (the failsafe). "
              + "It shows \(abbreviated(String(describing: untrackedState))); the store's latest committed state "
              + "is \(latestCommittedState.map { abbreviated(String(describing: $0)) } ?? "missing (the scope's slice)").",
            at: location)
          return false
        }
        if !isFollowing {
          recordIssue(
            "Expected the model to show \(expectation), but the store has shut down (or never started), and the "
              + "model keeps showing \(abbreviated(String(describing: untrackedState))).",
            at: location)
          return false
        }
        if failsafe == nil {
          failsafe = Failsafe(bound: bound, clock: ContinuousClock()) { [weak self] in
            Task { @MainActor in self?.wakeApplyWaiters() }
          }
        }
        await waitForNextApply()
      }
    }
  }
#endif
