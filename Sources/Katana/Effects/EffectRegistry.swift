/// One store's effects running under an id: what ``AnySideEffectContext/cancel(id:)`` and
/// `cancelInFlight` reach, and what shutdown cancels.
///
/// Each store has its own registry (a store attachment, created on first use and dropped at shutdown), so
/// equal ids in two stores never meet. Entries live exactly as long as their work: a run is removed when
/// its task returns, a throttle window when it closes. The bookkeeping is ``EffectRegistryState``; this
/// class performs what its transitions return, outside the lock.
final class EffectRegistry: Sendable {
  private let state = Locked(EffectRegistryState())

  /// The registry of the store behind `internals`, installing its shutdown handler on first use; nil once
  /// the store has shut down.
  static func of(_ internals: any StoreContextInternals) -> EffectRegistry? {
    guard let registry = internals.attachment(EffectRegistry.self, make: EffectRegistry.init) else { return nil }
    if registry.state.withLock({ $0.claimShutdownHandler() }) {
      // Runs at once if the store shut down after handing out the registry: the registry then cancels
      // whatever was registered meanwhile and refuses new work.
      internals.addShutdownHandler { registry.shutDown() }
    }
    return registry
  }

  /// Runs plus throttled calls waiting for their window.
  var entryCount: Int {
    state.withLock { $0.entryCount }
  }

  // MARK: - Runs

  /// Runs `operation` in a task of its own registered under `id`, and returns its outcome.
  ///
  /// - Throws: `CancellationError` if the run was cancelled before `operation` finished (by id, by a
  ///   newer run with `cancelInFlight`, by shutdown, or because the calling task was cancelled), whatever
  ///   `operation` returned or threw; otherwise what `operation` throws. ``StoreError/storeShutDown`` if
  ///   the store has shut down.
  nonisolated(nonsending) func run<T: Sendable>(
    id: EffectID, cancelInFlight: Bool, operation: sending @escaping () async throws -> T
  ) async throws -> T {
    // A caller cancelled already neither starts the operation nor cancels the runs in flight.
    try Task.checkCancellation()
    let token = try reserve(id, cancelInFlight: cancelInFlight)
    return try await run(reserved: token, operation: operation)
  }

  /// Runs `operation` as the run `token`, already registered; see ``run(id:cancelInFlight:operation:)``.
  nonisolated(nonsending) func run<T: Sendable>(
    reserved token: UInt64, operation: sending @escaping () async throws -> T
  ) async throws -> T {
    // A task of its own, so that the run can be cancelled by id; the caller's cancellation is forwarded
    // below. `Task` (not detached) keeps the caller's priority and task-local values.
    let task = Task { () -> Result<T, any Error> in
      let result: Result<T, any Error>
      do {
        result = .success(try await operation())
      } catch {
        result = .failure(error)
      }
      // Cancelled before the operation returned: by the caller (the task's flag) or through the registry
      // (the entry's flag, read as the entry is removed).
      let taskCancelled = Task.isCancelled
      let entryCancelled = finish(token)
      return taskCancelled || entryCancelled ? .failure(CancellationError()) : result
    }
    if !state.withLock({ $0.attach(token, cancel: { task.cancel() }) }) {
      task.cancel()
    }
    return try await withTaskCancellationHandler {
      try await task.value.get()
    } onCancel: {
      task.cancel()
    }
  }

  /// Registers a run under `id` and cancels what `cancelInFlight` replaces.
  func reserve(_ id: EffectID, cancelInFlight: Bool) throws -> UInt64 {
    var actions = EffectRegistryState.Actions()
    let token = state.withLock { $0.reserve(id, cancelInFlight: cancelInFlight, actions: &actions) }
    perform(actions)
    guard let token else { throw StoreError.storeShutDown }
    return token
  }

  /// Attaches the task of a reserved run; cancels it at once if the run was cancelled meanwhile.
  func attach(_ token: UInt64, task: Task<Void, Never>) {
    if !state.withLock({ $0.attach(token, cancel: { task.cancel() }) }) {
      task.cancel()
    }
  }

  /// Removes a finished run; returns whether it had been cancelled.
  @discardableResult
  func finish(_ token: UInt64) -> Bool {
    var actions = EffectRegistryState.Actions()
    let wasCancelled = state.withLock { $0.finish(token, actions: &actions) }
    perform(actions)
    return wasCancelled
  }

  /// Cancels everything running under `id`.
  func cancel(_ id: EffectID) {
    var actions = EffectRegistryState.Actions()
    state.withLock { $0.cancelAll(id, actions: &actions) }
    perform(actions)
  }

  /// Cancels everything and refuses new work; the store calls it when it shuts down.
  func shutDown() {
    var actions = EffectRegistryState.Actions()
    state.withLock { $0.shutDown(actions: &actions) }
    perform(actions)
  }

  // MARK: - Throttle

  /// Decides, under the lock, what a throttled call does (nil if the calling task is cancelled); see
  /// ``EffectRegistryState/throttle(_:latest:token:continuation:actions:)``. A `hold` decision keeps
  /// `continuation`; the others leave it to the caller.
  func throttle(
    _ id: EffectID, latest: Bool, token: UInt64,
    continuation: UnsafeContinuation<EffectRegistryState.ThrottleTurn, any Error>
  ) -> EffectRegistryState.ThrottleDecision? {
    var actions = EffectRegistryState.Actions()
    let decision = state.withLock { state -> EffectRegistryState.ThrottleDecision? in
      // Checked under the lock: a cancellation handler that runs later finds the held call to withdraw.
      if Task.isCancelled { return nil }
      return state.throttle(id, latest: latest, token: token, continuation: continuation, actions: &actions)
    }
    perform(actions)
    return decision
  }

  /// Takes back a held throttled call whose caller was cancelled.
  func withdrawHeld(_ id: EffectID, _ token: UInt64) -> EffectRegistryState.Held? {
    var actions = EffectRegistryState.Actions()
    let held = state.withLock { $0.withdrawHeld(id, token, actions: &actions) }
    perform(actions)
    return held
  }

  /// The window whose closing task has run token `token` has reached its end.
  func windowElapsed(_ id: EffectID, _ token: UInt64) -> EffectRegistryState.WindowStep {
    var actions = EffectRegistryState.Actions()
    let step = state.withLock { $0.windowElapsed(id, token, actions: &actions) }
    perform(actions)
    return step
  }

  func makeToken() -> UInt64 {
    state.withLock { $0.makeToken() }
  }

  // MARK: - Waiting for a count

  /// Returns once ``entryCount`` equals `count` (at once if it does): tests synchronise on it, for
  /// example to know that a throttled call is waiting, or that everything has finished.
  ///
  /// - Throws: `CancellationError` if the calling task is cancelled first.
  nonisolated(nonsending) func waitForEntryCount(_ count: Int) async throws {
    let id = makeToken()
    try await withTaskCancellationHandler {
      await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
        let waiting = state.withLock { state in
          Task.isCancelled ? false : state.addCountWaiter(id, count: count, continuation)
        }
        if !waiting {
          continuation.resume()
        }
      }
      try Task.checkCancellation()
    } onCancel: {
      state.withLock { $0.removeCountWaiter(id) }?.resume()
    }
  }

  // MARK: - Performing

  private func perform(_ actions: EffectRegistryState.Actions) {
    guard !actions.isEmpty else { return }
    for cancel in actions.cancels {
      cancel()
    }
    for continuation in actions.dropped {
      continuation.resume(throwing: CancellationError())
    }
    for continuation in actions.countWaiters {
      continuation.resume()
    }
  }
}
