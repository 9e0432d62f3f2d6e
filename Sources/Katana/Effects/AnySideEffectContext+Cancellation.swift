extension AnySideEffectContext {
  /// Runs `operation` under `id`, so that it can be cancelled by id, and returns its value.
  ///
  /// ```swift
  /// struct SearchID: Hashable {}
  ///
  /// struct Search: SideEffect {
  ///   let query: String
  ///   func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
  ///     try await context.run(id: SearchID(), cancelInFlight: true) {
  ///       let results = try await context.dependencies.api.search(query)
  ///       try await context.dispatch(SetResults(results))
  ///     }
  ///   }
  /// }
  ///
  /// store.send(Search(query: "kat"))
  /// store.send(Search(query: "katana"))  // cancels the search for "kat"
  /// store.cancel(id: SearchID())        // cancels the search for "katana"
  /// ```
  ///
  /// Ids belong to one store: ``cancel(id:)`` and `cancelInFlight` only reach work this store runs under an
  /// equal id (compared like `AnyHashable`: by type and value; prefer a dedicated type such as `SearchID`).
  /// Several runs may share an id; cancelling the id cancels all of them.
  ///
  /// The operation runs in a task of its own (so that it can be cancelled by id), with the caller's
  /// priority and task-local values; this call waits for it, and cancelling the caller cancels it.
  ///
  /// - Parameters:
  ///   - id: Any `Hashable & Sendable` value.
  ///   - cancelInFlight: Whether to cancel the work already running under `id` in this store before
  ///     starting `operation`.
  ///   - operation: The work; it may capture non-`Sendable` values it alone uses.
  /// - Returns: What `operation` returns.
  /// - Throws: `CancellationError` if the run is cancelled before `operation` returns, whatever
  ///   `operation` then returns or throws: by ``cancel(id:)`` (here or on the store), by a newer run with
  ///   `cancelInFlight`, by the store's shutdown, or because the calling task is cancelled. Otherwise what
  ///   `operation` throws. ``StoreError/storeShutDown`` if the store has shut down;
  ///   ``EffectError/contextWithoutStore(_:)`` if no store created this context.
  ///
  /// - Important: Unlike a plain awaited side effect, which shutdown leaves running in its caller's task,
  ///   work run under an id is cancelled when the store shuts down. A run that ignores cancellation keeps
  ///   its task (and its registry entry) until it returns. Do not await this (nor the other tools that take
  ///   an id) from an interceptor while it runs for a state updater: a state updater that the operation
  ///   dispatches would wait for that interceptor, and the store cannot detect it across the run's task.
  public nonisolated(nonsending) func run<T: Sendable>(
    id: some Hashable & Sendable, cancelInFlight: Bool = false, operation: sending @escaping () async throws -> T
  ) async throws -> T {
    try await effectRegistry().run(id: effectID(id), cancelInFlight: cancelInFlight, operation: operation)
  }

  /// Cancels everything this store runs under `id`: runs, debounced and throttled calls, timers and
  /// sequences.
  ///
  /// Returns at once; the cancelled work stops cooperatively, and its callers receive `CancellationError`.
  /// Cancelling an id under which nothing runs does nothing. A throttle window under `id` closes, so the
  /// next throttled call runs at once.
  public func cancel(id: some Hashable & Sendable) {
    guard let internals = storeInternals else { return }
    EffectRegistry.cancel(effectID(id), in: internals)
  }

  /// The effect registry of the store behind this context.
  func effectRegistry() throws -> EffectRegistry {
    guard let internals = storeInternals else {
      throw EffectError.contextWithoutStore(typeName(of: self))
    }
    guard let registry = EffectRegistry.of(internals) else { throw StoreError.storeShutDown }
    return registry
  }
}
