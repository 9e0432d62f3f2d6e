extension AnySideEffectContext {
  /// Runs `operation` once `duration` has passed on the store's clock with no newer call under `id`.
  ///
  /// ```swift
  /// struct SearchID: Hashable {}
  ///
  /// struct SearchAfterTyping: SideEffect {
  ///   func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
  ///     try await context.debounce(id: SearchID(), for: .milliseconds(300)) {
  ///       let results = try await context.dependencies.api.search(context.getState().query)
  ///       try await context.dispatch(SetResults(results))
  ///     }
  ///   }
  /// }
  ///
  /// // On every keystroke: the text as a state updater, then the debounced search.
  /// store.send(SetQuery("k"))
  /// store.send(SearchAfterTyping())
  /// store.send(SetQuery("ka"))
  /// store.send(SearchAfterTyping())  // within 300 ms: one search runs, for "ka"
  /// ```
  ///
  /// The search reads the query from the state when it starts, rather than capturing it: items sent one
  /// after the other reach the store in order, and state updaters apply in that order, but the bodies of
  /// side effects run concurrently, so two debounced calls made from two sent side effects may register in
  /// either order. Whichever call wins, it searches for the latest text.
  ///
  /// A call cancels everything running under `id` in this store (like ``run(id:cancelInFlight:operation:)``
  /// with `cancelInFlight: true`), then waits `duration` and runs `operation`. So a new call restarts the
  /// quiet period, and also cancels an operation that is already running (a stale search). The wait is
  /// measured from this call, on ``AnySideEffectContext/clock``: tests advance a manual clock instead of
  /// waiting.
  ///
  /// - Parameters:
  ///   - id: Any `Hashable & Sendable` value; see ``run(id:cancelInFlight:operation:)``.
  ///   - duration: The quiet period, zero or more.
  ///   - operation: The work.
  /// - Returns: What `operation` returns.
  /// - Throws: `CancellationError` if a newer call under `id`, ``cancel(id:)``, shutdown or the caller's
  ///   own cancellation came first (the call that was superseded gets this, so that its caller can tell);
  ///   otherwise what `operation` throws. ``EffectError/invalidDuration(_:)`` for a negative duration;
  ///   ``StoreError/storeShutDown``, ``EffectError/contextWithoutStore(_:)``.
  public nonisolated(nonsending) func debounce<T: Sendable>(
    id: some Hashable & Sendable, for duration: Duration, operation: sending @escaping () async throws -> T
  ) async throws -> T {
    guard duration >= .zero else {
      throw EffectError.invalidDuration(
        "debounce(id:for:operation:) needs a duration of zero or more, got \(duration).")
    }
    let registry = try effectRegistry()
    let deadline = EffectDeadline(clock, after: duration)
    return try await registry.run(id: effectID(id), cancelInFlight: true) {
      try await deadline.sleep()
      return try await operation()
    }
  }
}
