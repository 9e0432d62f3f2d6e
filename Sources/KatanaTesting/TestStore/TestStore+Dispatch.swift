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
  ///   failsafe, ``TestStoreError/waitsForTestClock(_:)`` if it cannot return before the test advances the
  ///   test clock (an issue is recorded too).
  public nonisolated(nonsending) func dispatch<U: StateUpdater>(
    _ updater: U,
    _ mutation: ((inout S) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async throws where U.StateType == S {
    let store = self.store
    try await dispatchOwn(
      updater, mutation: mutation,
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    ) { try await store.dispatch(updater) }
  }

  /// Dispatches a returning state updater, asserts its state change, and returns its value.
  ///
  /// ```swift
  /// let wentNegative = try await store.dispatch(Decrement()) {
  ///   $0.count = -1
  /// }
  /// #expect(wentNegative)
  /// ```
  ///
  /// The change is asserted as ``dispatch(_:_:fileID:filePath:line:column:)-(U,_,_,_,_,_)`` asserts it; the value is
  /// the store's (`Store.dispatch(_:)` of a `ReturningStateUpdater`).
  ///
  /// - Throws: What ``dispatch(_:_:fileID:filePath:line:column:)-(U,_,_,_,_,_)`` throws;
  ///   `StoreError.returnValueUnavailable` if an interceptor dropped or replaced the updater.
  public nonisolated(nonsending) func dispatch<Updater: ReturningStateUpdater>(
    _ updater: Updater,
    _ mutation: ((inout S) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async throws -> Updater.ReturnValue where Updater.StateType == S {
    let store = self.store
    return try await dispatchOwn(
      updater, mutation: mutation,
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    ) { try await store.dispatch(updater) }
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
  ///   ``TestStoreError/waitsForTestClock(_:)`` if it sleeps on the test clock, which only the test can
  ///   advance (start it with `send` instead); ``TestStoreError/failsafeExpired(_:)`` if it did not return
  ///   within the failsafe. In both cases the test store cancels it and records an issue.
  public nonisolated(nonsending) func dispatch<E: SideEffect>(
    _ effect: E,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async throws where E.StateType == S, E.Dependencies == D {
    let store = self.store
    try await dispatchOwn(effect, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)) {
      try await store.dispatch(effect)
    }
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
  ///   ``TestStoreError/waitsForTestClock(_:)`` or ``TestStoreError/failsafeExpired(_:)`` as for a side effect.
  public nonisolated(nonsending) func dispatch<R: ReturningSideEffect>(
    _ effect: R,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async throws -> R.ReturnValue {
    let store = self.store
    return try await dispatchOwn(
      effect, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    ) { try await store.dispatch(effect) }
  }

  /// Hands a state updater to the store without waiting for it, and asserts its state change once it is
  /// applied.
  ///
  /// ```swift
  /// store.send(SetQuery(query: "kat")) { $0.query = "kat" }
  /// store.send(Search(query: "kat"))   // goes to the store after SetQuery
  /// ```
  ///
  /// For synchronous code, and to queue several items in the order you write them: the test's items go to
  /// the store one after the other, each once the previous one has reached it. The change is checked as
  /// ``dispatch(_:_:fileID:filePath:line:column:)-(U,_,_,_,_,_)`` checks it, as soon as the updater is
  /// applied, and a mismatch is attributed to this line. ``finish(fileID:filePath:line:column:)`` waits for
  /// it; await the returned task to know it is applied.
  ///
  /// Unlike an awaited dispatch, `send` does not report received items not asserted yet: work the test sent
  /// just before may be producing them as it runs. The next awaited `dispatch`, `receive` or `finish` does.
  ///
  /// - Parameters:
  ///   - updater: The state updater.
  ///   - mutation: Describes the expected change, starting from the state before the updater.
  ///   - fileID: The caller's file ID; leave the default, issues are attributed to the caller's line.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  /// - Returns: A task that finishes once the updater is applied; its `value` throws what the store's
  ///   `dispatch` would have thrown (an interceptor's error, for example).
  @discardableResult
  public func send<U: StateUpdater>(
    _ updater: U,
    _ mutation: (@Sendable (inout S) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) -> TestStoreTask<Void> where U.StateType == S {
    let store = self.store
    return sendOwn(
      updater, mutation: mutation, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    ) { try await store.dispatch(updater) }
  }

  /// Starts a side effect without waiting for it, and returns a handle to cancel it or wait for it.
  ///
  /// ```swift
  /// store.send(Search(query: "kat"))        // sleeps 300 ms on the store's clock, then searches
  /// await clock.advance(by: .milliseconds(300))
  /// await store.receive(SetResults.self) { $0.results = ["katana"] }
  /// ```
  ///
  /// Use it for side effects that wait for something the test drives (a test clock, a gate), and for
  /// long-running ones (timers, streams) that the test cancels. The side effect runs as if it had been
  /// dispatched and awaited by another task. ``finish(fileID:filePath:line:column:)`` waits for it; in
  /// exhaustive mode it must have returned before the test store is released.
  ///
  /// If it throws (anything but `CancellationError`) and the test never awaits the returned task's
  /// ``TestStoreTask/value`` (or ``TestStoreTask/finish(fileID:filePath:line:column:)``), the end of the
  /// test records an issue at this line: an error that nobody looks at fails the test.
  ///
  /// - Important: The side effect starts asynchronously: when `send` returns it may not have reached its
  ///   first suspension point yet. Synchronise on what it does (a test clock's sleepers, a received item),
  ///   never on time. The test's items reach the store in the order the test sends them.
  @discardableResult
  public func send<E: SideEffect>(
    _ effect: E,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) -> TestStoreTask<Void> where E.StateType == S, E.Dependencies == D {
    let store = self.store
    return sendOwn(effect, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)) {
      try await store.dispatch(effect)
    }
  }

  /// Starts a returning side effect without waiting for it; its handle yields the value.
  ///
  /// See ``send(_:fileID:filePath:line:column:)-(E,_,_,_,_)``.
  @discardableResult
  public func send<R: ReturningSideEffect>(
    _ effect: R,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) -> TestStoreTask<R.ReturnValue> {
    let store = self.store
    return sendOwn(effect, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)) {
      try await store.dispatch(effect)
    }
  }

  // MARK: - The test's items, whatever they go through

  /// Dispatches the test's state updater `item` with `operation` (through the store, or through a scope of it),
  /// waits for it, asserts the state change recorded for it against `mutation`, written against the whole
  /// state, and returns what `operation` returned (a returning updater's value).
  nonisolated(nonsending) func dispatchOwn<Value: Sendable>(
    _ item: any Dispatchable, mutation: ((inout S) throws -> Void)?, at location: SourceLocation,
    _ operation: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    reportUnassertedReceived(before: item, at: location)
    let own = recorder.startOwnTask(item, at: location, operation)
    let value = try await value(of: own, at: location)
    guard let step = own.claim.step as? RecordedStep<S> else { return value }
    assertChange(of: step, mutation: mutation, at: location)
    return value
  }

  /// Dispatches the test's side effect `item` with `operation`, waits for it, and returns its value.
  nonisolated(nonsending) func dispatchOwn<Value: Sendable>(
    _ item: any Dispatchable, at location: SourceLocation, _ operation: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    reportUnassertedReceived(before: item, at: location)
    let own = recorder.startOwnTask(item, at: location, operation)
    return try await value(of: own, at: location)
  }

  /// Starts the test's state updater `item` with `operation`, and asserts its state change against `mutation`,
  /// written against the whole state, once it is applied.
  func sendOwn(
    _ item: any Dispatchable, mutation: (@Sendable (inout S) throws -> Void)?, at location: SourceLocation,
    _ operation: @escaping @Sendable () async throws -> Void
  ) -> TestStoreTask<Void> {
    // No check of unasserted received items here: work the test sent just before may be producing them as
    // this runs. The next awaited dispatch, `receive` or `finish` checks.
    let own = recorder.startOwnTask(item, at: location) { [weak self] in
      try await operation()
      guard let self, let step = DispatchClaim.current?.step as? RecordedStep<S> else { return }
      self.assertChange(of: step, mutation: mutation, at: location)
    }
    return TestStoreTask(own: own, recorder: recorder, location: location)
  }

  /// Starts the test's side effect `item` with `operation`; the returned task yields its value.
  func sendOwn<Value: Sendable>(
    _ item: any Dispatchable, at location: SourceLocation, _ operation: @escaping @Sendable () async throws -> Value
  ) -> TestStoreTask<Value> {
    // See the other `sendOwn`: the next awaited operation checks for unasserted received items.
    let own = recorder.startOwnTask(item, at: location, operation)
    return TestStoreTask(own: own, recorder: recorder, location: location)
  }

  /// Waits for a task of the test, with the failsafe, and returns its value or rethrows its error.
  nonisolated(nonsending) func value<Value: Sendable>(of own: OwnTask<Value>, at location: SourceLocation)
    async throws -> Value
  {
    try await recorder.outcome(of: own, waiting: describe(own.item), at: location).get()
  }
}
