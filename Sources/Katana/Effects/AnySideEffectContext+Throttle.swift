/// Which calls ``AnySideEffectContext/throttle(id:for:mode:operation:)`` runs.
///
/// Both modes run the first call at once and open a window of one interval; they differ in what happens
/// to the calls that arrive while the window is open.
public enum ThrottleMode: Sendable, Hashable {
  /// Calls during the window are dropped (they throw `CancellationError`). After the window, the next call
  /// runs at once and opens a new one. Use it to ignore repeated taps.
  case leading

  /// The most recent call during the window waits, and runs when the window ends (opening a new window);
  /// the calls it replaced are dropped (they throw `CancellationError`). Use it to rate-limit updates
  /// without losing the last one.
  ///
  /// The Composable Architecture's `throttle(id:for:scheduler:latest:)` with `latest: true` behaves the same
  /// way.
  case latest
}

extension AnySideEffectContext {
  /// Runs `operation` at most once per `interval` on the store's clock, for calls under `id`.
  ///
  /// ```swift
  /// struct SaveDraftID: Hashable {}
  ///
  /// struct DraftChanged: SideEffect {
  ///   func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
  ///     try await context.throttle(id: SaveDraftID(), for: .seconds(2), mode: .latest) {
  ///       try await context.dependencies.drafts.save(context.getState().draft)
  ///     }
  ///   }
  /// }
  /// ```
  ///
  /// The first call opens a window of `interval` and runs at once; what happens to the calls made while
  /// the window is open depends on `mode` (see ``ThrottleMode``). Throttling limits how often `operation`
  /// *starts*: a slow operation may still be running when the next one starts. Operations run under `id`,
  /// so ``cancel(id:)`` cancels them, and also closes the window and drops the waiting call.
  ///
  /// - Parameters:
  ///   - id: Any `Hashable & Sendable` value; see ``run(id:cancelInFlight:operation:)``.
  ///   - interval: The window, longer than zero.
  ///   - mode: ``ThrottleMode/leading`` or ``ThrottleMode/latest``.
  ///   - operation: The work.
  /// - Returns: What `operation` returns.
  /// - Throws: `CancellationError` if the call is dropped (see ``ThrottleMode``), or cancelled by
  ///   ``cancel(id:)``, shutdown or the caller's own cancellation; otherwise what `operation` throws.
  ///   ``EffectError/invalidDuration(_:)`` for an interval that is not positive;
  ///   ``StoreError/storeShutDown``, ``EffectError/contextWithoutStore(_:)``.
  public nonisolated(nonsending) func throttle<T: Sendable>(
    id: some Hashable & Sendable, for interval: Duration, mode: ThrottleMode,
    operation: sending @escaping () async throws -> T
  ) async throws -> T {
    guard interval > .zero else {
      throw EffectError.invalidDuration(
        "throttle(id:for:mode:operation:) needs an interval longer than zero, got \(interval).")
    }
    let registry = try effectRegistry()
    let id = effectID(id)
    let clock = self.clock
    let windowEnd = EffectDeadline(clock, after: interval)
    let token = registry.makeToken()
    let turn = try await registry.throttleTurn(id, latest: mode == .latest, token: token)
    if case .openedWindow(let windowToken) = turn {
      Self.startWindow(registry: registry, id: id, token: windowToken, end: windowEnd, clock: clock, interval: interval)
    }
    return try await registry.run(reserved: token, operation: operation)
  }

  /// Starts the task that ends a throttle window, releases the call held for its end (then keeps the
  /// window open for another interval), and closes the window once no call is held.
  private static func startWindow(
    registry: EffectRegistry, id: EffectID, token: UInt64, end: EffectDeadline, clock: any Clock<Duration>,
    interval: Duration
  ) {
    let task = registry.startTask {
      if let links = registry.links { links.bind(token, TaskIdentity.current) }
      defer { if let links = registry.links { links.bind(token, nil) } }
      var end = end
      while true {
        do {
          try await end.sleep()
        } catch {
          break  // cancelled by id or at shutdown, which also took the window away
        }
        // The next window starts as the held call is released.
        let next = EffectDeadline(clock, after: interval)
        guard registry.windowElapsed(id, token) == .keepOpen else { break }
        end = next
      }
      registry.finish(token)
    }
    registry.attach(token, task: task)
  }
}
