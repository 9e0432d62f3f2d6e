extension AnySideEffectContext {
  /// Calls `tick` every `interval` on the store's clock, until cancelled by id or by shutdown.
  ///
  /// ```swift
  /// struct TimerID: Hashable {}
  ///
  /// struct StartTimer: SideEffect {
  ///   func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
  ///     try await context.timer(id: TimerID(), every: .seconds(1)) {
  ///       try await context.dispatch(Tick())
  ///     }
  ///   }
  /// }
  ///
  /// store.send(StartTimer())     // ticks at 1 s, 2 s, 3 s, ...
  /// store.cancel(id: TimerID())  // stops it
  /// ```
  ///
  /// The ticks keep to the schedule `start + interval`, `start + 2 * interval`, and so on, measured from
  /// this call, without drift. Each tick waits for the previous `tick` to return. Tick times that have
  /// already passed when the timer wakes up (the previous tick ran long, or the process was suspended) are
  /// merged into one tick, as with Foundation's `Timer`: a timer never bursts to catch up. `KatanaTesting`'s
  /// `TestClock` advanced by three intervals at once ticks three times: it wakes the timer at each tick time
  /// in turn.
  ///
  /// The call never returns normally: it runs until it is cancelled, then throws `CancellationError`.
  /// Start it with `send`, whose task the store owns, or from a task you keep.
  ///
  /// - Parameters:
  ///   - id: Any `Hashable & Sendable` value; see ``run(id:cancelInFlight:operation:)``.
  ///   - interval: The time between ticks, longer than zero.
  ///   - cancelInFlight: Whether to cancel the work already running under `id` first, for example to
  ///     restart a timer.
  ///   - tick: The work of each tick. If it throws, the timer stops and this call throws that error.
  /// - Throws: `CancellationError` once cancelled (by ``cancel(id:)``, a newer run with `cancelInFlight`,
  ///   shutdown, or the caller's cancellation); the error of `tick`; ``EffectError/invalidDuration(_:)``
  ///   for an interval that is not positive; ``StoreError/storeShutDown``,
  ///   ``EffectError/contextWithoutStore(_:)``.
  public nonisolated(nonsending) func timer(
    id: some Hashable & Sendable, every interval: Duration, cancelInFlight: Bool = false,
    tick: sending @escaping () async throws -> Void
  ) async throws -> Never {
    guard interval > .zero else {
      throw EffectError.invalidDuration(
        "timer(id:every:cancelInFlight:tick:) needs an interval longer than zero, got \(interval).")
    }
    let registry = try effectRegistry()
    let timer = EffectTimer(clock, every: interval)
    try await registry.run(id: effectID(id), cancelInFlight: cancelInFlight) { () async throws -> Void in
      try await timer.run(tick)
    }
    // Not reached: a timer only ends by throwing. (A run returning `Never` directly makes the compiler warn
    // about the unreachable resumption of the call.)
    throw CancellationError()
  }
}
