/// A store-owned task: started by the store, cancelled at shutdown.
@usableFromInline
enum OwnedTask {
  /// The identifier is taken; the task is being created.
  case reserved
  /// The task runs.
  case running(Task<Void, Never>)
}

/// Everything a store's lock protects.
///
/// ``StoreCore`` only touches it inside its lock; the transitions here never call user code, except the
/// state mutation closures the core passes to ``commit(_:)``.
@usableFromInline
struct CoreState<S: State, D: SideEffectDependencyContainer> {
  /// The latest committed state, mutated in place.
  @usableFromInline var state: S
  @usableFromInline var phase = StorePhase.starting
  /// Set in `Store.init`, right after the container is built.
  @usableFromInline var dependencies: D?
  /// The composed interceptor chain; ``noChain`` without interceptors, and after shutdown. Not optional:
  /// a function stored in a generic container (`Optional` included) is re-abstracted, and every call then
  /// goes through a thunk, an extra async frame.
  @usableFromInline var chain: StoreInterceptorNext = Self.noChain
  @usableFromInline var mailbox = Mailbox()
  /// The frame of the updater whose interceptor chain holds the turn.
  @usableFromInline var turnFrame: UpdaterFrame<S>?
  /// The task running the state initializer, for deadlock detection.
  @usableFromInline var startupTask: TaskIdentity?
  @usableFromInline var readinessWaiters: [UInt64: UnsafeContinuation<Void, any Error>] = [:]
  @usableFromInline var observers = Observers<S>()
  @usableFromInline var ownedTasks: [UInt64: OwnedTask] = [:]
  /// The identity of each running store-owned task, so that shutdown does not wait for the task calling it.
  @usableFromInline var ownedTaskIdentities: [UInt64: TaskIdentity] = [:]
  @usableFromInline var shutdownHandlers: [@Sendable () -> Void] = []
  /// Per-store objects attached by store features, keyed by their type; dropped at shutdown.
  @usableFromInline var attachments: [ObjectIdentifier: any Sendable] = [:]
  /// With activity tracking on: awaited dispatches in progress, sent items not yet finished, and
  /// store-owned tasks still running.
  @usableFromInline var activeWork = 0
  @usableFromInline var idleWaiters: [UInt64: UnsafeContinuation<Void, any Error>] = [:]
  @usableFromInline var lastID: UInt64 = 0

  /// The chain of a store without interceptors (never called), and of a store that has shut down.
  @usableFromInline
  static var noChain: StoreInterceptorNext {
    { _ in throw StoreError.storeShutDown }
  }

  @inlinable
  init(state: S) {
    self.state = state
  }

  @inlinable
  mutating func makeID() -> UInt64 {
    lastID &+= 1
    return lastID
  }

  /// Whether a dispatch arriving now may apply its updater right away.
  @inlinable
  var canTakeTurnNow: Bool {
    phase.isReady && mailbox.isIdle
  }

  /// Applies `mutate` to the state.
  ///
  /// With observers, it keeps what they need (the old state only if someone needs it, since holding it
  /// makes the mutation copy whatever it touches) and returns the commit to deliver once the lock is
  /// released; the caller must hold the turn until that delivery is done.
  @inlinable
  mutating func commit(_ mutate: (inout S) throws -> Void) rethrows -> Commit<S>? {
    if observers.isEmpty {
      try mutate(&state)
      return nil
    }
    let old: S? = observers.needsOldState ? state : nil
    try mutate(&state)
    return Commit(old: old, new: state, listeners: observers.listeners, subscribers: observers.subscribers)
  }

  /// Releases the turn and starts whatever comes next, if the store is running.
  @inlinable
  mutating func releaseTurn(byPump: Bool) -> MailboxActions {
    turnFrame = nil
    let actions = mailbox.releaseTurn(byPump: byPump)
    // Internal invariant: after start-up failure or shutdown the mailbox is emptied, so nothing starts.
    assert(phase.isReady || actions.isEmpty, "Katana internal error: mailbox advanced while not running")
    return actions
  }
}
