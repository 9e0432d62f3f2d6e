import Katana
import Testing

extension TestStore {
  /// Dispatches a state updater and asserts its state change.
  ///
  /// ```swift
  /// try await store.dispatch(AddTodo(title: "milk")) {
  ///   $0.todos = ["milk"]
  /// }
  /// ```
  ///
  /// The updater goes through the store as in production (the mailbox, the interceptors). Once it is
  /// committed, the test store applies `mutation` to a copy of the state *before* the updater and compares
  /// the result with the state the store committed; a mismatch records an issue with a field-level diff.
  /// Without a mutation, the updater must not change the state. In non-exhaustive mode the mutation is
  /// applied to the state after the updater instead, and must not change it (see ``Exhaustivity/off``).
  ///
  /// In exhaustive mode, received items that the test has not asserted yet record an issue first.
  ///
  /// - Parameters:
  ///   - updater: The state updater.
  ///   - mutation: Describes the expected change, starting from the state before the updater.
  ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  /// - Throws: What the store's `dispatch` throws (for example an interceptor's error); the change is then
  ///   not asserted. ``TestStoreError/failsafeExpired(_:)`` if the dispatch did not return within the
  ///   failsafe (an issue is recorded too).
  public nonisolated(nonsending) func dispatch<U: StateUpdater>(
    _ updater: U,
    _ mutation: ((inout S) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async throws where U.StateType == S {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    reportUnassertedReceived(before: updater, at: location)
    let store = self.store
    let own = recorder.startOwnTask(updater) { try await store.dispatch(updater) }
    try await value(of: own, at: location)
    guard let step = own.claim.step as? RecordedStep<S> else { return }
    assertChange(of: step, mutation: mutation, at: location)
  }

  /// Dispatches a side effect and returns when its body returns, as the store's `dispatch` does.
  ///
  /// ```swift
  /// try await store.dispatch(LoadTodos())
  /// await store.receive(SetTodos.self) { $0.todos = ["milk"] }
  /// ```
  ///
  /// A side effect does not change the state itself: assert what it dispatched with `receive`. Use
  /// ``send(_:fileID:filePath:line:column:)-(E,_,_,_,_)`` instead for a side effect that waits for something the
  /// test has to drive (a test clock, a gate): `dispatch` would wait for it to return first.
  ///
  /// - Throws: The side effect's error, unchanged; what the store's `dispatch` throws;
  ///   ``TestStoreError/failsafeExpired(_:)`` if the side effect did not return within the failsafe (the
  ///   test store then cancels it and records an issue).
  public nonisolated(nonsending) func dispatch<E: SideEffect>(
    _ effect: E,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async throws where E.StateType == S, E.Dependencies == D {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    reportUnassertedReceived(before: effect, at: location)
    let store = self.store
    let own = recorder.startOwnTask(effect) { try await store.dispatch(effect) }
    try await value(of: own, at: location)
  }

  /// Dispatches a returning side effect and returns its value.
  ///
  /// ```swift
  /// let count = try await store.dispatch(CountResults())
  /// #expect(count == 3)
  /// ```
  ///
  /// Behaves like ``dispatch(_:fileID:filePath:line:column:)-(E,_,_,_,_)``.
  ///
  /// - Throws: The side effect's error, unchanged; what the store's `dispatch` throws;
  ///   ``TestStoreError/failsafeExpired(_:)`` if it did not return within the failsafe.
  public nonisolated(nonsending) func dispatch<R: ReturningSideEffect>(
    _ effect: R,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async throws -> R.ReturnValue {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    reportUnassertedReceived(before: effect, at: location)
    let store = self.store
    let own = recorder.startOwnTask(effect) { try await store.dispatch(effect) }
    return try await value(of: own, at: location)
  }

  /// Starts a side effect without waiting for it, and returns a handle to cancel it or wait for it.
  ///
  /// ```swift
  /// store.send(Search(query: "kat"))        // sleeps 300 ms on the store's clock, then searches
  /// try await clock.waitForSleepers(count: 1)  // once it sleeps on a TestClock
  /// clock.advance(by: .milliseconds(300))
  /// await store.receive(SetResults.self) { $0.results = ["katana"] }
  /// ```
  ///
  /// Use it for side effects that wait for something the test drives (a test clock, a gate), and for
  /// long-running ones (timers, streams) that the test cancels. The side effect runs as if it had been
  /// dispatched and awaited by another task. ``finish(fileID:filePath:line:column:)`` waits for it; in
  /// exhaustive mode it must have returned before the test store is released.
  ///
  /// - Important: The side effect starts asynchronously: when `send` returns it may not have reached its
  ///   first suspension point yet. Synchronise on what it does (a test clock's sleepers, a received item),
  ///   never on time.
  @discardableResult
  public func send<E: SideEffect>(
    _ effect: E,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) -> TestStoreTask<Void> where E.StateType == S, E.Dependencies == D {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    reportUnassertedReceived(before: effect, at: location)
    let store = self.store
    let own = recorder.startOwnTask(effect) { try await store.dispatch(effect) }
    return TestStoreTask(own: own, recorder: recorder, location: location)
  }

  /// Starts a returning side effect without waiting for it; its handle yields the value.
  ///
  /// See ``send(_:fileID:filePath:line:column:)-(E,_,_,_,_)``.
  @discardableResult
  public func send<R: ReturningSideEffect>(
    _ effect: R,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) -> TestStoreTask<R.ReturnValue> {
    let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    reportUnassertedReceived(before: effect, at: location)
    let store = self.store
    let own = recorder.startOwnTask(effect) { try await store.dispatch(effect) }
    return TestStoreTask(own: own, recorder: recorder, location: location)
  }

  /// Waits for a task of the test, with the failsafe, and returns its value or rethrows its error.
  nonisolated(nonsending) func value<Value: Sendable>(of own: OwnTask<Value>, at location: SourceLocation)
    async throws -> Value
  {
    let waiting = describe(own.item)
    guard let result = await recorder.outcome(of: own, waiting: waiting, at: location) else {
      throw TestStoreError.failsafeExpired(waiting)
    }
    return try result.get()
  }
}
