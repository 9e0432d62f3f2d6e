extension AnySideEffectContext {
  /// Runs `body` for each element of `elements`, in order, under `id`: the usual way to turn an
  /// `AsyncSequence` into dispatches that can be cancelled.
  ///
  /// ```swift
  /// struct LocationUpdatesID: Hashable {}
  ///
  /// struct TrackLocation: SideEffect {
  ///   func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
  ///     try await context.forEach(context.dependencies.location.updates(), id: LocationUpdatesID()) {
  ///       try await context.dispatch(SetLocation($0))
  ///     }
  ///   }
  /// }
  ///
  /// store.send(TrackLocation())
  /// store.cancel(id: LocationUpdatesID())  // stops iterating; an AsyncStream's onTermination runs
  /// ```
  ///
  /// Each element waits for `body` to return before the next is requested, so dispatches keep the
  /// sequence's order. To bridge a callback API that delivers many values and then completes, build an
  /// `AsyncThrowingStream` with a bounded buffering policy and stop the API in its `onTermination` (see
  /// <doc:Effects>).
  ///
  /// - Parameters:
  ///   - elements: The sequence; it may be non-`Sendable`, since only this call uses it.
  ///   - id: Any `Hashable & Sendable` value; see ``run(id:cancelInFlight:operation:)``.
  ///   - cancelInFlight: Whether to cancel the work already running under `id` first, for example an
  ///     earlier subscription to the same source.
  ///   - body: What to do with each element, typically dispatching it.
  /// - Throws: `CancellationError` if cancelled before the sequence ends (by ``cancel(id:)``, a newer run
  ///   with `cancelInFlight`, shutdown, or the caller's cancellation), even if the sequence then ended
  ///   quietly; otherwise the error of the sequence or of `body`, which ends the iteration.
  ///   ``StoreError/storeShutDown``, ``EffectError/contextWithoutStore(_:)``.
  public nonisolated(nonsending) func forEach<Elements: AsyncSequence & SendableMetatype>(
    _ elements: sending Elements, id: some Hashable & Sendable, cancelInFlight: Bool = false,
    _ body: sending @escaping (Elements.Element) async throws -> Void
  ) async throws {
    try await effectRegistry().run(id: effectID(id), cancelInFlight: cancelInFlight) {
      for try await element in elements {
        try await body(element)
      }
    }
  }
}
