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
    EffectRegistry.cancel(EffectID(id), in: core)
  }

  /// The number of effects running under an id (throttle windows included), plus throttled calls waiting
  /// for their window: tests check that none are left. Zero after shutdown (which cancelled them all),
  /// even while cancelled work is still returning.
  package nonisolated var runningEffectCount: Int {
    EffectRegistry.of(core)?.entryCount ?? 0
  }

  /// Returns once ``runningEffectCount`` equals `count` (at once if it does). Tests synchronise on it, for
  /// example to know that a throttled call is waiting.
  ///
  /// - Throws: `CancellationError` if the calling task is cancelled first; ``StoreError/storeShutDown`` if
  ///   the store has shut down and `count` is not zero (the count of a store that has shut down stays zero).
  package nonisolated(nonsending) func waitForRunningEffects(count: Int) async throws {
    guard let registry = EffectRegistry.of(core) else {
      if count != 0 { throw StoreError.storeShutDown }
      return
    }
    try await registry.waitForEntryCount(count)
  }

  /// Returns once no effect runs under an id and no throttled call waits; see
  /// ``waitForRunningEffects(count:)``.
  package nonisolated(nonsending) func waitUntilNoRunningEffects() async throws {
    try await waitForRunningEffects(count: 0)
  }
}

// The store core offers what the effect registry needs from a store, as side-effect contexts do.
extension StoreCore: StoreContextInternals {
  package var isInsideUpdater: Bool { owner.isCurrentThread }

  package func sentItemsQuery() -> @Sendable (SentItemOrigin?) -> [SentItemOrigin] {
    { [weak self] origin in self?.liveSentItems(before: origin) ?? [] }
  }

  package var effectTaskStarter: (any EffectTaskStarter)? { configuration.effectTaskStarter }

  package func carrierLinks() -> CarrierLinks? {
    guard tracksActivity else { return nil }
    // Called after each change, outside the store's lock: the test store re-checks whether its work is parked.
    let didChange = configuration.onCarrierChange
    return CarrierLinks(
      handOff: { [weak self] waiter, token in
        self?.handOff(from: waiter, to: token)
        didChange?()
      },
      bind: { [weak self] token, task in
        self?.bind(token, to: task)
        didChange?()
      })
  }
}
