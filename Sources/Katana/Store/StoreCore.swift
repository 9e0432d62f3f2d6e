#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The engine behind ``Store``: the state, the mailbox, observers and store-owned tasks, behind one lock.
///
/// ``Store`` (the actor) and ``SideEffectContext`` are thin façades over it. Dispatch never hops onto an
/// actor: the order of state updaters comes from the mailbox, which is decided under the lock when a
/// dispatch arrives, so task priorities cannot reorder it, and an updater with no interceptor costs one
/// lock acquisition.
///
/// Rules kept throughout:
/// - the lock is never held while user code runs, except a state updater's pure `updateState` (SPEC 4.5);
///   re-entry from it is detected through ``ThreadOwner`` and answered without deadlocking;
/// - listeners, stream deliveries, interceptors and side effects run outside the lock;
/// - an updater's commit and its delivery to observers happen while it holds the turn, so observers see
///   changes one at a time, in commit order.
///
/// The hot paths are `@inlinable`, so that they are specialised for the client's state type: run
/// unspecialised, generic code spends most of its time looking up type metadata (measured by
/// `katana-benchmarks`: an awaited updater dispatch went from about 735 ns to a few tens of ns).
///
/// The members are split by concern: `StoreCore+Dispatch` (typed and type-erased dispatch), `StoreCore+Turn`
/// (an updater's turn and the chain's final `next`), `StoreCore+Send` (`send` and the pump),
/// `StoreCore+Lifecycle` (start-up, shutdown, store-owned tasks) and `StoreCore+Observation` (listeners,
/// streams, activity tracking, attachments).
@usableFromInline
final class StoreCore<S: State, D: SideEffectDependencyContainer>: @unchecked Sendable {
  // Sendable: mutable state lives in `storage`, only touched under its lock; the rest is immutable or atomic.

  @usableFromInline let storage: LockedBuffer<CoreState<S, D>>
  @usableFromInline let owner = ThreadOwner()
  /// Set once the store is ready (and cleared at shutdown): lets side effects start without the lock.
  @usableFromInline let readyFlag = AtomicFlag()
  private let warnings = Locked(Set<String>())
  /// Whether a caller may go on, must wait in the mailbox (with this entry identifier), or fails.
  @usableFromInline
  enum Admission<Proceed> {
    case proceed(Proceed)
    case wait(UInt64)
    case fail(any Error)
  }

  /// What the final `next` of an updater chain found under the lock.
  @usableFromInline
  enum ChainAttempt {
    case done(Commit<S>?)
    case notDispatchedType(UpdaterFrame<S>)
  }

  /// What `send` does with a new job.
  @usableFromInline
  enum EnqueueDecision {
    case queued(waitingCount: Int)
    case startPump
    case startSideEffect
    case fail(any Error)
  }

  /// Whether the store has interceptors; fixed at initialisation.
  @usableFromInline let hasInterceptors: Bool
  @usableFromInline let configuration: StoreConfiguration
  /// ``StoreConfiguration/tracksActivity``, fixed at initialisation.
  @usableFromInline let tracksActivity: Bool
  /// `StoreConfiguration.sideEffectRunner`, fixed at initialisation.
  @usableFromInline let sideEffectRunner: (any SideEffectRunner)?

  @usableFromInline
  init(initialState: S, hasInterceptors: Bool, configuration: StoreConfiguration) {
    storage = LockedBuffer.make(CoreState(state: initialState))
    self.hasInterceptors = hasInterceptors
    self.configuration = configuration
    self.tracksActivity = configuration.tracksActivity
    self.sideEffectRunner = configuration.sideEffectRunner
  }

  /// Runs a side-effect body, through the configured runner if there is one.
  @inlinable @inline(__always)
  nonisolated(nonsending) func runBody<T: Sendable>(_ body: sending nonisolated(nonsending) () async throws -> T)
    async throws -> T
  {
    guard let sideEffectRunner else { return try await body() }
    return try await sideEffectRunner.run(body)
  }

  @inlinable
  var id: ObjectIdentifier { ObjectIdentifier(self) }

  @inlinable @inline(__always)
  func withLock<Result>(_ body: (inout CoreState<S, D>) throws -> Result) rethrows -> Result {
    try storage.withLock(body)
  }

  /// Runs `body` under the lock with the calling thread marked as running a state updater, so that a
  /// re-entrant call from the updater is detected instead of deadlocking.
  @inlinable @inline(__always)
  func withLockRunningUpdater<Result>(_ body: (inout CoreState<S, D>) throws -> Result) rethrows
    -> Result
  {
    try storage.withLock { core in
      owner.markCurrentThread()
      defer { owner.clear() }
      return try body(&core)
    }
  }

  // MARK: - Reading state

  /// The latest committed state.
  @inlinable
  var state: S {
    guard !owner.isCurrentThread else { return reentrantStateRead() }
    return withLock { $0.state }
  }

  @usableFromInline
  func reentrantStateRead() -> S {
    runtimeWarning(
      "store.state was read from inside a StateUpdater of \(String(reflecting: S.self)); this returns "
        + "\(String(reflecting: S.self))(). Updaters must only use their inout parameter.")
    return S()
  }

  @inlinable
  var isReady: Bool {
    withLock { $0.phase.isReady }
  }

  // MARK: - Diagnostics

  /// Prints `message` to standard error, once per store and message.
  func runtimeWarning(_ message: String) {
    let isNew = warnings.withLock { $0.insert(message).inserted }
    guard isNew else { return }
    var line = "[Katana] warning: \(message)\n"
    line.withUTF8 { bytes in
      _ = write(2, bytes.baseAddress, bytes.count)
    }
  }
}

extension CoreState {
  /// Like ``commit(_:)``, for a mutation that may decline (returns false): nothing is committed then.
  @inlinable
  mutating func commitIfApplies(_ mutate: (inout S) -> Bool) -> Commit<S>? {
    if observers.isEmpty {
      _ = mutate(&state)
      return nil
    }
    let old: S? = observers.needsOldState ? state : nil
    guard mutate(&state) else { return nil }
    return Commit(old: old, new: state, listeners: observers.listeners, subscribers: observers.subscribers)
  }
}

extension StoreCore: JobStore {}

/// Marks the work a tracked dispatch runs in its task, so that the nested calls it makes (the fast path
/// calling the slow path, redirects, nested dispatches) are not counted twice.
@usableFromInline
enum ActivityScope {
  @TaskLocal @usableFromInline static var isTracking = false

  @usableFromInline
  nonisolated(nonsending) static func tracking<T>(_ body: () async throws -> T) async rethrows -> T {
    try await $isTracking.withValue(true) { try await body() }
  }
}
