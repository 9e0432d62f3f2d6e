/// A store-owned task: started by the store, cancelled at shutdown.
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
struct CoreState<S: State, D: SideEffectDependencyContainer> {
  /// The latest committed state, mutated in place.
  var state: S
  var phase = StorePhase.starting
  /// Set in `Store.init`, right after the container is built.
  var dependencies: D?
  /// The composed interceptor chain; nil without interceptors, and after shutdown.
  var chain: StoreInterceptorNext?
  var mailbox = Mailbox()
  /// The frame of the updater whose interceptor chain holds the turn.
  var turnFrame: UpdaterFrame<S>?
  /// The task running the state initializer, for deadlock detection.
  var startupTask: TaskIdentity?
  var readinessWaiters: [UInt64: UnsafeContinuation<Void, any Error>] = [:]
  var observers = Observers<S>()
  var ownedTasks: [UInt64: OwnedTask] = [:]
  var shutdownHandlers: [@Sendable () -> Void] = []
  private var lastID: UInt64 = 0

  init(state: S) {
    self.state = state
  }

  mutating func makeID() -> UInt64 {
    lastID &+= 1
    return lastID
  }

  /// Whether a dispatch arriving now may apply its updater right away.
  var canTakeTurnNow: Bool {
    phase.isReady && mailbox.isIdle
  }

  /// Applies `mutate` to the state.
  ///
  /// With observers, it keeps what they need (the old state only if someone needs it, since holding it
  /// makes the mutation copy whatever it touches) and returns the commit to deliver once the lock is
  /// released; the caller must hold the turn until that delivery is done.
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
  mutating func releaseTurn(byPump: Bool) -> MailboxActions {
    turnFrame = nil
    let actions = mailbox.releaseTurn(byPump: byPump)
    // Internal invariant: after start-up failure or shutdown the mailbox is emptied, so nothing starts.
    assert(phase.isReady || actions.isEmpty, "Katana internal error: mailbox advanced while not running")
    return actions
  }
}
