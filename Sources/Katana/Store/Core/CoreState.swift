/// Everything a store's lock protects: the state, and the pure state machines that decide what the store does
/// (``Lifecycle`` and ``Mailbox``), plus observers and the interceptor chain.
///
/// ``StoreCore`` only touches it inside its lock. Nothing here calls user code, except the state mutation that
/// ``commit(_:)`` applies (a state updater's pure `updateState`, SPEC 4.5); nothing user-supplied is released
/// here either: transitions hand back what they remove, for the core to drop after unlocking.
@usableFromInline
struct CoreState<S: FeatureState, D: SideEffectDependencyContainer> {
  /// How a task waiting on the store is resumed.
  @usableFromInline typealias Waiter = UnsafeContinuation<Void, any Error>

  /// The latest committed state, mutated in place.
  @usableFromInline var state: S
  @usableFromInline var lifecycle: Lifecycle<Waiter, Task<Void, Never>>
  @usableFromInline var mailbox = Mailbox<Waiter, MailboxJob>()
  /// Set in `Store.init`, right after the container is built.
  var dependencies: D?
  /// The composed interceptor chain; ``noChain`` without interceptors, and after shutdown. Not optional:
  /// a function stored in a generic container (`Optional` included) is re-abstracted, and every call then
  /// goes through a thunk, an extra async frame.
  @usableFromInline var chain: StoreInterceptorNext = Self.noChain
  /// The frame of the updater whose interceptor chain holds the turn.
  @usableFromInline var turnFrame: UpdaterFrame<S>?
  /// Dispatches whose chain returned while a call of its `next` was still delivering (see
  /// ``StoreCore/closeChain(_:)``).
  @usableFromInline var chainCloseWaiters = Waiters<Waiter>()
  @usableFromInline var observers = Observers<S>()
  /// The hooks of the recorders and undo histories among the interceptors: commits made through the chain are
  /// handed to them.
  @usableFromInline var commitHooks: [CommitHook<S>] = []
  var shutdownHandlers: [@Sendable () -> Void] = []
  /// Side effects handed over with `send` that have not finished, by arrival: what a cancellation by id
  /// marks (see ``SentItemOrigin``).
  var liveSentItems: [UInt64: SentItemOrigin] = [:]
  var lastID: UInt64 = 0
  #if KATANA_CONTENTION_COUNTERS
    /// See ``ContentionCounts``.
    @usableFromInline var contention = ContentionCounts()
    /// The thread that entered the last critical section.
    @usableFromInline var lastHolder: UInt = 0
  #endif

  /// The chain of a store without interceptors (never called), and of a store that has shut down.
  @usableFromInline static var noChain: StoreInterceptorNext {
    { _ in throw StoreError.storeShutDown }
  }

  init(state: S, tracksActivity: Bool) {
    self.state = state
    self.lifecycle = Lifecycle(tracksActivity: tracksActivity)
  }

  mutating func makeID() -> UInt64 {
    lastID &+= 1
    return lastID
  }

  /// Whether a dispatch arriving now may apply its updater right away: the store is ready and nothing is
  /// ahead in the mailbox.
  @inlinable
  var canTakeTurnNow: Bool {
    mailbox.canTakeTurnNow
  }

  /// Applies `mutate` to the state, if it applies (it returns false when it declines, and must then leave the
  /// state unchanged).
  ///
  /// With observers, it keeps what they need (the old state only if someone needs it, since holding it
  /// makes the mutation copy whatever it touches) and returns the commit to deliver once the lock is
  /// released; the caller must hold the turn until that delivery is done.
  ///
  /// - Returns: Whether `mutate` applied, and the commit to deliver, if any.
  @inlinable
  mutating func commitIfApplies(_ mutate: (inout S) throws -> Bool) rethrows -> (applied: Bool, commit: Commit<S>?) {
    if observers.isEmpty {
      return (try mutate(&state), nil)
    }
    let old: S? = observers.needsOldState ? state : nil
    guard try mutate(&state) else { return (false, nil) }
    return (true, Commit(old: old, new: state, listeners: observers.listeners, subscribers: observers.subscribers))
  }

  /// ``commitIfApplies(_:)`` for a store with commit hooks: also returns what the hooks get (the state before
  /// the change if one asked for it, and the state after), or nil if `mutate` declined.
  @inlinable
  mutating func recordedCommit(_ mutate: (inout S) throws -> Bool) rethrows -> RecordedChange<S>? {
    let before: S? = commitHooks.contains { $0.needsBefore.isSet } ? state : nil
    let (applied, commit) = try commitIfApplies(mutate)
    guard applied else { return nil }
    return RecordedChange(hooks: commitHooks, before: before, after: state, commit: commit)
  }

  /// Applies `mutate` to the state; see ``commitIfApplies(_:)``.
  @inlinable
  mutating func commit(_ mutate: (inout S) throws -> Void) rethrows -> Commit<S>? {
    // Written out rather than through `commitIfApplies`: the hot path of every dispatch, and the tuple and
    // the extra closure cost the observed cases a few percent.
    if observers.isEmpty {
      try mutate(&state)
      return nil
    }
    let old: S? = observers.needsOldState ? state : nil
    try mutate(&state)
    return Commit(old: old, new: state, listeners: observers.listeners, subscribers: observers.subscribers)
  }

  /// Applies `mutate`, a change made through a scope, to the state; see ``commit(_:)``. Only the stream
  /// subscribers that `filter` says the change concerns get it (and all listeners, which observe the whole
  /// state): with none, this is the commit of a store without observers. A change that reached beyond the
  /// scope's location (``ScopeCommitFilter/widened``) goes to every subscriber.
  @inlinable
  mutating func commit(_ mutate: (inout S) throws -> Void, touching filter: ScopeCommitFilter) rethrows -> Commit<S>? {
    filter.widened = false
    if observers.isEmpty {
      try mutate(&state)
      return nil
    }
    if observers.concernNobody(filter) {
      try mutate(&state)
      return widenedCommit(filter)
    }
    return try commitConcerned(mutate, touching: filter)
  }

  @usableFromInline
  mutating func commitConcerned(_ mutate: (inout S) throws -> Void, touching filter: ScopeCommitFilter) rethrows
    -> Commit<S>
  {
    let concerned = observers.subscribers(concerning: filter)
    // Every subscriber that needs the old state observes the whole state (a scope's observers do not), so
    // it is concerned by every commit: `old` is kept whenever one exists, widened or not.
    let old: S? = !observers.listeners.isEmpty || concerned.needsOldState ? state : nil
    try mutate(&state)
    let subscribers = filter.widened ? observers.subscribers : concerned.subscribers
    return Commit(old: old, new: state, listeners: observers.listeners, subscribers: subscribers)
  }

  /// The commit of a change made through `filter`'s scope that concerned no observer of its location, if it
  /// reached beyond it (``ScopeCommitFilter/widened``): every subscriber gets it. Call after the mutation, with
  /// no listener registered (``Observers/concernNobody(_:)``).
  @inlinable
  func widenedCommit(_ filter: ScopeCommitFilter) -> Commit<S>? {
    guard filter.widened, !observers.subscribers.isEmpty else { return nil }
    return commitToEverySubscriber()
  }

  /// The current state as a commit for every stream subscriber (and no listener): the delivery of a change that
  /// reached beyond its scope's place, once applied.
  @inlinable
  func commitToEverySubscriber() -> Commit<S> {
    Commit(old: nil, new: state, listeners: [], subscribers: observers.subscribers)
  }

  /// Closes the chain of `frame`'s dispatch, which holds the turn: a `next` called from now on fails. Returns a
  /// waiter for the dispatch to suspend on if a call of `next` is still in progress (an interceptor handed it to
  /// a task it did not await, and returned): ``exitNext(_:)`` resumes it. See ``StoreCore/closeChain(_:)``.
  @inlinable
  mutating func closeChain(_ frame: UpdaterFrame<S>) -> UInt64? {
    frame.isClosed = true
    guard frame.inNext else {
      if turnFrame === frame { turnFrame = nil }
      return nil
    }
    let waiter = chainCloseWaiters.add()
    frame.closeWaiter = waiter
    return waiter
  }

  /// Ends the call of `frame`'s `next` in progress; returns the resumption of its dispatch if that dispatch is
  /// waiting in ``closeChain(_:)``.
  @inlinable
  mutating func exitNext(_ frame: UpdaterFrame<S>) -> Resumption<Waiter>? {
    frame.inNext = false
    guard frame.isClosed, let waiter = frame.closeWaiter else { return nil }
    frame.closeWaiter = nil
    if turnFrame === frame { turnFrame = nil }
    return chainCloseWaiters.resolve(waiter, with: .success(()))
  }

  /// Releases the turn and starts whatever comes next, if the store is running.
  @inlinable
  mutating func releaseTurn(byPump: Bool) -> Mailbox<Waiter, MailboxJob>.Actions {
    turnFrame = nil
    return mailbox.releaseTurn(byPump: byPump)
  }
}

/// A commit made through the chain of a store with a recorder: what its hook gets, and the commit to deliver.
@usableFromInline
struct RecordedChange<S: FeatureState> {
  @usableFromInline let hooks: [CommitHook<S>]
  @usableFromInline let before: S?
  @usableFromInline let after: S
  @usableFromInline let commit: Commit<S>?

  @inlinable
  init(hooks: [CommitHook<S>], before: S?, after: S, commit: Commit<S>?) {
    self.hooks = hooks
    self.before = before
    self.after = after
    self.commit = commit
  }

  /// Hands the commit of `item` to every hook, in the order they were attached.
  @inlinable
  func record(_ item: any Dispatchable) {
    for hook in hooks { hook.record(item, before, after) }
  }
}
