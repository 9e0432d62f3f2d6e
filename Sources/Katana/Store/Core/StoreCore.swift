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
/// How it is built, so that its synchronisation can be checked:
/// - **façade → one route → one transition → deliver.** ``Store``, ``ScopedStore`` and ``SideEffectContext`` are
///   façades. Every state updater, typed or type-erased, at the root or through a scope (whose routes lift it to the
///   root's state), takes one of three routes: applied at once on an idle store (``applyIfIdle(touching:item:_:)``),
///   awaited in the mailbox (``dispatchUpdaterWaitingForTurn(_:frame:apply:depth:)``), or sent as a job
///   (``enqueueUpdater(_:apply:frame:)``; a type-erased send's handle reads the same job's storage). Whatever the
///   route, and whoever makes the commit (the interceptor chain's final `next`, a replay, a move in time, an undo), it
///   goes through the one commit transition, ``CoreState/commit(_:touching:delivering:_:)``, which refuses what the store
///   refuses, mutates, and takes the observers' and the commit hooks' share in one critical section; the caller
///   delivers what it returns after unlocking, while holding the turn.
/// - what the store does is decided by pure state machines kept in ``CoreState`` (``Lifecycle``,
///   ``Mailbox``, the waiter tables of ``Waiters``, the chain's end ``ChainEnd``); each transition returns what to
///   do, and the core does it after unlocking;
/// - every task that waits on the store waits through the one primitive, ``WaiterLock/suspend(install:cancel:)``;
/// - the lock is never held while user code runs or is released, except a state updater's pure
///   `updateState` (SPEC 4.5). The entry points an updater can reach from its thread (`state`, `isReady`,
///   `send`, listeners, streams, `cancel(id:)`, a handle's `cancel()`) answer without taking the lock
///   there: they check ``ThreadOwner`` first;
/// - an updater's commit and its delivery to observers happen while it holds the turn, so observers see
///   changes one at a time, in commit order.
///
/// The hot paths measured by `katana-benchmarks` are `@inlinable`, so that they are specialised for the
/// client's state type (run unspecialised, an awaited updater dispatch took about 735 ns instead of a few
/// tens); the rest (start-up, shutdown, waiting, observation set-up) is not.
///
/// The members are split by concern: `StoreCore+Dispatch` (typed and type-erased dispatch), `StoreCore+Turn`
/// (the routes that commit, the turn, and the chain's final `next`), `StoreCore+Send` (`send` and the pump),
/// `StoreCore+Lifecycle` (start-up, shutdown, store-owned tasks) and `StoreCore+Observation` (listeners,
/// streams, activity tracking, attachments); ``CoreState`` holds the transitions.
@usableFromInline
final class StoreCore<S: FeatureState, D: SideEffectDependencyContainer>: @unchecked Sendable {
  // Sendable: mutable state lives in `storage` and `attachments`, only touched under their locks; the rest is
  // immutable or atomic.

  @usableFromInline let storage: LockedBuffer<CoreState<S, D>>
  @usableFromInline let owner = ThreadOwner()
  /// Set once the store is ready (and cleared when it fails or shuts down): lets side effects start, and
  /// `isReady` answer, without the lock.
  @usableFromInline let readyFlag = AtomicFlag()
  /// Set while the store is away from live (time travel), by the commits that move it (``CoreState/travel(to:)``):
  /// lets side effects start directly only while it is clear, and ``StoreRecorder/isAwayFromLive`` answer,
  /// without the lock.
  @usableFromInline let awayFlag: AtomicFlag
  /// The items the store refused since it last went away from live (``StoreRecorder/refusedWhileAway``); written
  /// under the lock, read without it.
  @usableFromInline let refusedWhileAway: AtomicCount
  /// Set once a ``StoreRecorder`` is attached: side effects then start through the path that records them
  /// (``recordingSideEffect(_:_:)``). Read without the lock.
  @usableFromInline let recordsEffects = AtomicFlag()
  /// Whether a binding of this store's recorded side effects as the cause of what their tasks commit is alive
  /// (``RecorderCause/Bound``): while none is, a commit reads no task-local to find its cause.
  @usableFromInline let recorderCauses = RecorderCauses()
  /// Per-store objects attached by store features, keyed by their type. A lock of their own, so that store
  /// features reach them from anywhere, including from inside a state updater.
  let attachments = Locked<[ObjectIdentifier: any Sendable]?>([:])
  private let warnings = Locked(Set<String>())

  /// Whether the store has interceptors; fixed at initialisation.
  @usableFromInline let hasInterceptors: Bool
  let configuration: StoreConfiguration
  /// ``StoreConfiguration/tracksActivity``, fixed at initialisation.
  @usableFromInline let tracksActivity: Bool
  /// `StoreConfiguration.sideEffectRunner`, fixed at initialisation.
  @usableFromInline let sideEffectRunner: (any SideEffectRunner)?
  /// ``StoreConfiguration/dispatchObservers``, fixed at initialisation; nil when there are none.
  @usableFromInline let dispatchObservers: DispatchObservers?
  /// Whether updaters run the plain interceptor chain (``StoreConfiguration/usesPlainInterceptorChain``, or
  /// ``StoreConfiguration/forcesPlainPath``), fixed at initialisation.
  @usableFromInline let usesPlainInterceptorChain: Bool
  /// `StoreConfiguration.afterCommit`, fixed at initialisation (a test hook; nil in every other store).
  @usableFromInline let afterCommit: (@Sendable () -> Void)?

  @usableFromInline init(initialState: S, hasInterceptors: Bool, configuration: StoreConfiguration) {
    let awayFlag = AtomicFlag()
    let refusedWhileAway = AtomicCount()
    self.awayFlag = awayFlag
    self.refusedWhileAway = refusedWhileAway
    storage = LockedBuffer.make(
      CoreState(
        state: initialState, tracksActivity: configuration.tracksActivity, awayFlag: awayFlag,
        refusedWhileAway: refusedWhileAway))
    self.hasInterceptors = hasInterceptors
    self.configuration = configuration
    self.tracksActivity = configuration.tracksActivity
    self.sideEffectRunner = configuration.sideEffectRunner
    self.dispatchObservers = DispatchObservers.make(configuration.dispatchObservers, owner: owner)
    self.afterCommit = configuration.afterCommit
    self.usesPlainInterceptorChain = configuration.usesPlainInterceptorChain || configuration.forcesPlainPath
  }

  /// Delivers a commit, which the calling dispatch made and holds the turn for: the one place commits are delivered.
  @inlinable @inline(__always)
  func deliver(_ commit: Commit<S>) {
    if let afterCommit { afterCommit() }
    commit.deliver()
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
    #if KATANA_CONTENTION_COUNTERS
      try storage.withLockNotingContention { core, contended in
        core.noteAcquisition(contended: contended)
        return try body(&core)
      }
    #else
      try storage.withLock(body)
    #endif
  }

  /// Runs `body` under the lock with the calling thread marked as running a state updater, so that a
  /// re-entrant call from the updater is detected instead of deadlocking.
  @inlinable @inline(__always)
  func withLockRunningUpdater<Result>(_ body: (inout CoreState<S, D>) throws -> Result) rethrows
    -> Result
  {
    #if KATANA_CONTENTION_COUNTERS
      try storage.withLockNotingContention { core, contended in
        core.noteAcquisition(contended: contended)
        owner.markCurrentThread()
        defer { owner.clear() }
        return try body(&core)
      }
    #else
      try storage.withLock { core in
        owner.markCurrentThread()
        defer { owner.clear() }
        return try body(&core)
      }
    #endif
  }

  // MARK: - Reading state

  /// The latest committed state.
  @inlinable
  var state: S {
    guard !owner.isCurrentThread else { return reentrantStateRead() }
    return withLock { $0.state }
  }

  @usableFromInline func reentrantStateRead() -> S {
    runtimeWarning(
      "store.state was read from inside a StateUpdater of \(String(reflecting: S.self)); this returns "
        + "\(String(reflecting: S.self))(). Updaters must only use their inout parameter.")
    // A store's state is a `State` (`Store<S: State, D>`): the core only relaxes its bound to `FeatureState` so
    // that a side effect's context of any feature can name it.
    guard let empty = (S.self as? any State.Type)?.init() as? S else {
      preconditionFailure("a store's state type \(String(reflecting: S.self)) is not a State")
    }
    return empty
  }

  /// Whether the store is ready; read without the lock.
  var isReady: Bool {
    readyFlag.isSet
  }

  #if KATANA_CONTENTION_COUNTERS
    /// What the lock went through so far (see ``ContentionCounts``).
    package var contentionCounts: ContentionCounts {
      storage.withLock { $0.contention }
    }
  #endif

  // MARK: - Diagnostics

  /// Prints `message` to standard error, once per store and message.
  package func runtimeWarning(_ message: String) {
    let isNew = warnings.withLock { $0.insert(message).inserted }
    guard isNew else { return }
    var line = "[Katana] warning: \(message)\n"
    line.withUTF8 { bytes in
      _ = write(2, bytes.baseAddress, bytes.count)
    }
  }
}

extension StoreCore: WaiterLock {
  @usableFromInline typealias Protected = CoreState<S, D>
}

extension StoreCore: JobStore {}
