extension Store {
  /// Cancels everything this store runs under `id`: work started with
  /// ``AnySideEffectContext/run(id:cancelInFlight:operation:)``, debounced and throttled calls, timers and
  /// sequences.
  ///
  /// ```swift
  /// store.send(StartTimer())     // runs context.timer(id: TimerID(), every: .seconds(1)) { ... }
  /// store.cancel(id: TimerID())  // the timer stops; StartTimer's handle fails with CancellationError
  /// ```
  ///
  /// Returns at once; the cancelled work stops cooperatively, and its callers receive `CancellationError`.
  /// Only this store's work is cancelled, never another store's under an equal id. Does nothing if nothing
  /// runs under `id`, or after shutdown (which has cancelled everything already).
  public nonisolated func cancel(id: some Hashable & Sendable) {
    EffectRegistry.of(core)?.cancel(EffectID(id))
  }

  /// The number of effects running under an id, plus throttled calls waiting for their window (tests
  /// check that none are left). Zero once the store has shut down and its effects have returned.
  package nonisolated var runningEffectCount: Int {
    core.attachment(EffectRegistry.self, make: EffectRegistry.init)?.entryCount ?? 0
  }

  /// Returns once no effect runs under an id and no throttled call waits (at once if none does, or if the
  /// store has shut down).
  ///
  /// - Throws: `CancellationError` if the calling task is cancelled first.
  package nonisolated(nonsending) func waitUntilNoRunningEffects() async throws {
    try await core.attachment(EffectRegistry.self, make: EffectRegistry.init)?.waitUntilEmpty()
  }
}

// The store core offers what the effect registry needs from a store, as side-effect contexts do.
extension StoreCore: StoreContextInternals {}
