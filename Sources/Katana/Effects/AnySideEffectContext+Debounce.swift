extension AnySideEffectContext {
  /// Runs `operation` once `duration` has passed on the store's clock with no newer call under `id`.
  ///
  /// ```swift
  /// struct SearchID: Hashable {}
  ///
  /// struct QueryChanged: SideEffect {
  ///   let query: String
  ///   func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
  ///     try await context.dispatch(SetQuery(query))  // at once
  ///     try await context.debounce(id: SearchID(), for: .milliseconds(300)) {
  ///       let results = try await context.dependencies.api.search(query)
  ///       try await context.dispatch(SetResults(results))
  ///     }
  ///   }
  /// }
  ///
  /// store.send(QueryChanged(query: "k"))
  /// store.send(QueryChanged(query: "ka"))  // within 300 ms: only the search for "ka" runs
  /// ```
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
