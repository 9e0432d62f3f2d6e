/// Everything a store's lock protects: the state, and the pure state machines that decide what the store does
/// (``Lifecycle`` and ``Mailbox``), plus observers, commit hooks and the interceptor chain.
///
/// ``StoreCore`` only touches it inside its lock. Nothing here calls user code, except the state mutation that
/// ``commit(_:touching:delivering:_:)`` applies (a state updater's pure `updateState`, SPEC 4.5); nothing user-supplied is
/// released here either: transitions hand back what they remove, for the core to drop after unlocking.
@usableFromInline
struct CoreState<S: FeatureState, D: SideEffectDependencyContainer> {
  /// How a task waiting on the store is resumed.
  @usableFromInline typealias Waiter = UnsafeContinuation<Void, any Error>

  /// The latest committed state, mutated in place.
  @usableFromInline var state: S
  /// The store's life. Its phase changes only through ``finishStartup()``, ``failStartup(_:)`` and
  /// ``shutdown(caller:)``, which keep ``quiet`` up to date.
  @usableFromInline var lifecycle: Lifecycle<Waiter, Task<Void, Never>>
  @usableFromInline var mailbox = Mailbox<Waiter, MailboxJob>()
  /// Set in `Store.init`, right after the container is built.
  var dependencies: D?
  /// The composed interceptor chain; ``noChain`` without interceptors, and after shutdown. Not optional:
  /// a function stored in a generic container (`Optional` included) is re-abstracted, and every call then
  /// goes through a thunk, an extra async frame.
  @usableFromInline var chain: StoreInterceptorNext = Self.noChain
  /// The same chain as an ``OpaqueChain``, which state updaters run; nil without interceptors, after shutdown, and
  /// when updaters run the plain chain (``StoreConfiguration/usesPlainInterceptorChain``).
  @usableFromInline var opaqueChain: OpaqueChain<Void>?
  /// The frame of the updater whose interceptor chain holds the turn.
  @usableFromInline private(set) var turnFrame: UpdaterFrame<S>?
  /// The frame of an awaited updater dispatch that has ended, kept for the next one (see ``takeSpareFrame(applying:)``):
  /// a dispatch through the opaque chain allocates no frame.
  @usableFromInline private(set) var spareFrame: UpdaterFrame<S>?
  /// Dispatches whose chain returned while a call of its `next` was still delivering (see
  /// ``closeChain(_:)``).
  @usableFromInline var chainCloseWaiters = Waiters<Waiter>()
  @usableFromInline private(set) var observers = Observers<S>()
  /// What every commit is handed to, besides observers: recorders and undo histories (``CommitHook``).
  @usableFromInline private(set) var commitHooks: [CommitHook<S>] = []
  /// Whether a commit hook wants inverses (the store's undo history, ``CommitHook/wantsInverse``): kept by
  /// ``refreshQuiet()``, so that a commit reads one byte instead of walking the hooks.
  @usableFromInline private(set) var hooksWantInverse = false
  /// Whether the store has commit hooks: a stored flag, so that a recorded commit checks one byte (reading the array to
  /// ask retained and released its buffer).
  @usableFromInline private(set) var hasHooks = false
  /// Whether a commit concerns nobody but the state and the observers: the store is ready, live, and has no log and
  /// no hook. The third branch of ``commitIfQuiet(touching:item:widened:released:_:)`` (a commit through a scope that
  /// no observer watches) reads it, one byte where it read four inputs (two of them arrays, retained and released to
  /// ask); kept by ``refreshQuiet()`` like ``quiet``.
  @usableFromInline private(set) var quietButForObservers = false
  /// The item types seen while the store has an undo history that wants inverses (``applyRecorded(_:inverse:_:)``),
  /// each with how its items are applied inverting: an ``InvertingApplier`` for an ``InvertibleStateUpdater``, nil for
  /// any other type.
  @usableFromInline var invertingAppliers = TypeMemo<(any InvertingApplying)?>()
  /// The logs of the recorders attached (``CommitLog``): each commit is appended to them in its own critical
  /// section. Never drops a log: ``soleLog`` is unretained.
  @usableFromInline private(set) var logs: [CommitLog<S>] = []
  /// The only log, when exactly one is attached (the usual case): ``commitIfOnlyLogged(_:released:_:)`` appends to it
  /// without walking ``logs``. Unretained (``logs``, which never drops a log, keeps it): reading it retains nothing.
  @usableFromInline private(set) var soleLog: Unmanaged<CommitLog<S>>?
  /// Their side-effect timelines, in the same order (not generic: see ``EffectLog``).
  @usableFromInline private(set) var effectLogs: [EffectLog] = []
  /// The live state while the store shows a recorded one (time travel, ``StoreRecorder/travel(_:to:)``); nil
  /// while the store is live. While it is set, ``refusal(of:)`` refuses every item.
  @usableFromInline private(set) var live: S?
  /// Whether a commit concerns nobody but the state: the store is ready and has no observer, no commit hook and
  /// nothing to refuse. The first branch of ``commit(_:touching:delivering:_:)``, kept as one stored flag so that the hot
  /// path reads one word; ``refreshQuiet()`` recomputes it wherever one of its inputs changes.
  @usableFromInline private(set) var quiet = false
  /// Whether a commit concerns the recorders' logs and the commit hooks (undo histories) and nobody else: the store
  /// is ready, live, and has logs or hooks and no observer. The second branch of
  /// ``commitIfQuiet(touching:item:widened:released:_:)``, which hands the commit to them in the fast paths' first
  /// critical section; kept by ``refreshQuiet()`` like ``quiet``.
  @usableFromInline private(set) var onlyLogged = false
  /// The number of commits the store has made: every commit, whichever path made it, takes the next number.
  @usableFromInline private(set) var commitCount: UInt64 = 0
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

  /// Mirrors whether ``live`` is set, for readers that do not take the lock (``StoreCore/awayFlag``).
  let awayFlag: AtomicFlag
  /// The items refused since the store last went away from live (``StoreCore/refusedWhileAway``): counted by
  /// ``refusal(of:)``, reset by the move away.
  @usableFromInline let refusedWhileAway: AtomicCount
  /// The type of the moves in time of this store's state (``TimeTravelCommand``): a commit checks its item's type
  /// against it before the cast to ``TimeTravelMove`` (a protocol conformance lookup, which cost more than the rest of
  /// a recorded commit). A move of another state type is an updater of another state type, refused as such.
  @usableFromInline let moveType: ObjectIdentifier?

  init(state: S, tracksActivity: Bool, awayFlag: AtomicFlag, refusedWhileAway: AtomicCount) {
    self.state = state
    self.lifecycle = Lifecycle(tracksActivity: tracksActivity)
    self.awayFlag = awayFlag
    self.refusedWhileAway = refusedWhileAway
    func moveType<T: State>(_: T.Type) -> ObjectIdentifier { ObjectIdentifier(TimeTravelCommand<T>.self) }
    self.moveType = (S.self as? any State.Type).map { moveType($0) }
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

  // MARK: - The commit transition

  /// Commits `mutate`, the one transition every commit of the store goes through, whichever path made it (fast or
  /// plain, root or scope, typed or type-erased, through the interceptor chain, replayed, or a move in time).
  ///
  /// In one critical section it refuses what must be refused (``refusal(of:)``), mutates the state, decides who is
  /// concerned, takes the subscriber list, and hands the commit to the recorders' logs and the commit hooks
  /// (``record(_:before:inverse:soleLog:released:)``); the caller delivers what it returns after
  /// unlocking, while it holds the turn. So the invariant of SPEC 4.6 holds by construction: **a subscriber
  /// registered after a commit is never delivered it; one registered before gets it exactly once**, because
  /// registration takes the same lock and the list is read in the commit's own critical section.
  ///
  /// - Parameters:
  ///   - item: The item committed, as the store applies it; nil on a fast path that has none at hand. Commit hooks
  ///     record it, and refusals and moves in time are decided by it: without it, a commit that needs it is not
  ///     made (``CommitOutcome/needsItem``), and the caller takes the plain path, which has one.
  ///   - filter: The observers a commit through a scope concerns (nil: every observer).
  ///   - delivery: Set to the commit to deliver when the outcome is ``CommitOutcome/deliver``; left alone
  ///     otherwise. (An out parameter rather than an enum payload: a commit holds two copies of the state, and an
  ///     enum with a generic payload returned through the lock is copied and destroyed through value witnesses,
  ///     which made the hot path of every dispatch 3.6 times slower.)
  ///   - mutate: The mutation; it returns false if it declines (an item of another type than the dispatched one),
  ///     and must then leave the state unchanged.
  /// - Throws: The refusal (``StoreError`` once the store has shut down, ``TimeTravelError`` while it is away from
  ///   live), before anything changed; what `mutate` throws.
  @inlinable @inline(__always)
  mutating func commit(
    _ item: () -> (any Dispatchable)?, touching filter: ScopeCommitFilter?, delivering delivery: inout Commit<S>?,
    _ mutate: (inout S) throws -> Bool
  ) throws -> CommitOutcome {
    var widened: [StateSubscriber<S>] = []
    var released: [CommitLogState<S>.Dropped] = []
    if let outcome = try commitIfQuiet(touching: filter, item: item, widened: &widened, released: &released, mutate) {
      if case .deliver = outcome {
        delivery = .widened(state, to: widened)
      } else if !released.isEmpty {
        // What a full log dropped goes out with the commit, to release after unlocking.
        delivery = Commit(old: nil, new: state, listeners: [], subscribers: [], released: released)
        return .deliver
      }
      return outcome
    }
    return try commitNoticed(item, touching: filter, delivering: &delivery, mutate)
  }

  /// The first branch of ``commit(_:touching:delivering:_:)``: commits `mutate` if the commit concerns nobody but
  /// the state (the store is ``quiet``, or, for a commit through a scope, no observer of the store watches the
  /// scope's place, and there is no listener, no commit hook and nothing to refuse); nil, having changed nothing,
  /// otherwise. A commit through a scope that reached beyond its place (an element renamed through its own scope,
  /// ``ScopeCommitFilter/widened``) goes to every stream subscriber: it returns ``CommitOutcome/deliver`` and hands
  /// them out in `widened`, read in this critical section like the rest (so a subscriber registered after it is
  /// never delivered it); the state to deliver is the state after the commit, which the caller holds the turn for.
  ///
  /// The fast paths call it on its own first (``StoreCore/applyIfIdle(touching:item:_:)``), so that the hot path of
  /// every dispatch handles no ``Commit`` at all: a commit holds two copies of the state, and a function that may
  /// make one keeps them in memory, and copies, checks and destroys them through value witnesses (that made an
  /// awaited dispatch 3.6 times slower, a `send` 5.7 times, and a feature's commit with observers elsewhere 4 times).
  @inlinable @inline(__always)
  mutating func commitIfQuiet(
    touching filter: ScopeCommitFilter?, item: () -> (any Dispatchable)?, widened: inout [StateSubscriber<S>],
    released: inout [CommitLogState<S>.Dropped], _ mutate: (inout S) throws -> Bool
  ) rethrows -> CommitOutcome? {
    if quiet {
      guard try mutate(&state) else { return .declined }
      commitCount &+= 1
      return .applied
    }
    if onlyLogged, filter == nil {
      return try commitIfOnlyLogged(item, released: &released, mutate)
    }
    guard let filter, quietButForObservers, observers.concernNobody(filter) else { return nil }
    filter.widened = false
    guard try mutate(&state) else { return .declined }
    commitCount &+= 1
    guard filter.widened, !observers.subscribers.isEmpty else { return .applied }
    widened = observers.subscribers
    return .deliver
  }

  /// The branch of ``commitIfQuiet(touching:item:widened:released:_:)`` for a store whose only concern is its recorders'
  /// logs and its commit hooks: commits `mutate` and hands `item` to each log and hook
  /// (``record(_:before:inverse:soleLog:released:)``), in this critical section; what they let go comes out in
  /// `released`, to release after unlocking. Nil, having
  /// changed nothing, when the caller has no item, the item is a move in time, or a log needs the state before the
  /// commit (after a reset): the noticed path handles those.
  @inlinable @inline(__always)
  mutating func commitIfOnlyLogged(
    _ item: () -> (any Dispatchable)?, released: inout [CommitLogState<S>.Dropped], _ mutate: (inout S) throws -> Bool
  ) rethrows -> CommitOutcome? {
    // One recorder, the usual case, is reached without walking the array (its buffer and each log retained and
    // released).
    let sole = soleLog
    if let sole {
      if sole._withUnsafeGuaranteedRef({ $0.needsBase.isSet }) { return nil }
    } else {
      for log in logs where log.needsBase.isSet { return nil }
    }
    guard let item = item(), typeIdentity(of: item) != moveType else { return nil }
    return try commitLogged(item, soleLog: sole, released: &released, mutate)
  }

  /// ``commitIfOnlyLogged(_:released:_:)`` once it has the item, made in the caller's frame (inlined there, the
  /// closure builds the existential in place; returned through the closure, it was moved out of the optional it came
  /// in, a 40-byte copy that waited for the closure's stores: 10% of a recorded `send`) and passed here by reference.
  @inlinable
  mutating func commitLogged(
    _ item: any Dispatchable, soleLog sole: Unmanaged<CommitLog<S>>?, released: inout [CommitLogState<S>.Dropped],
    _ mutate: (inout S) throws -> Bool
  ) rethrows -> CommitOutcome {
    // Without hooks (recorders alone, the usual case), no inverse: the hot path handles no `InvertedCommit`.
    guard !hasHooks else { return try commitHooked(item, released: &released, mutate) }
    guard try mutate(&state) else { return .declined }
    commitCount &+= 1
    record(item, before: nil, inverse: nil, soleLog: sole, released: &released)
    return .applied
  }

  /// ``commitIfOnlyLogged(_:released:_:)`` for a store with commit hooks (undo histories): out of line, so that a
  /// recorder's path handles no inverse.
  @inlinable @inline(never)
  mutating func commitHooked(
    _ item: any Dispatchable, released: inout [CommitLogState<S>.Dropped], _ mutate: (inout S) throws -> Bool
  ) rethrows -> CommitOutcome {
    var inverse: InvertedCommit?
    guard try applyRecorded(item, inverse: &inverse, mutate) else { return .declined }
    commitCount &+= 1
    record(item, before: nil, inverse: inverse, soleLog: soleLog, released: &released)
    return .applied
  }

  /// Applies `item`, a commit the logs and hooks get: through its inverting form when a hook wants inverses (the
  /// store's undo history) and it is an ``InvertibleStateUpdater`` of this state (the same change; its inverse comes
  /// out in `inverse`), through `mutate` otherwise. Returns false if `mutate` declines.
  @inlinable @inline(__always)
  mutating func applyRecorded(
    _ item: any Dispatchable, inverse: inout InvertedCommit?, _ mutate: (inout S) throws -> Bool
  ) rethrows -> Bool {
    if hooksWantInverse {
      // Each type is looked at once: whether it is invertible, and if so an applier that applies its items inverting
      // without a cast (a cast, failed or not, is a conformance lookup: it cost more than the rest of the commit). The
      // type is read from the opened existential (``typeIdentity(of:)``): for a class, the class the item was erased
      // from, so an invertible subclass erased as a class that is not may be taken for it, and its commit then gives
      // no inverse (the history replays to undo it, as it does for any updater without one).
      let applier = invertingAppliers.value(for: typeIdentity(of: item), orMaking: { invertingApplier(for: item) })
      if let applier, let inverted = applier.applyInverting(item, to: &state) {
        inverse = inverted
        return true
      }
    }
    return try mutate(&state)
  }

  /// Hands the commit of `item` (made: the state is the state after it) to the recorders' logs and the commit hooks,
  /// in the commit's critical section: the one place they get a commit. What they let go is added to `released`.
  /// `sole` is ``soleLog``, read by the caller. A move in time (`isMove`, from
  /// ``travel(to:item:delivering:)``) goes to no log and to no hook but a test's tap (``CommitHook/seesMoves``).
  @inlinable @inline(__always)
  mutating func record(
    _ item: any Dispatchable, before old: S?, inverse: InvertedCommit?, soleLog sole: Unmanaged<CommitLog<S>>?,
    isMove: Bool = false, released: inout [CommitLogState<S>.Dropped]
  ) {
    if !isMove {
      if let sole {
        sole._withUnsafeGuaranteedRef { $0.record(item, before: old, after: &state, released: &released) }
      } else {
        for log in logs { log.record(item, before: old, after: &state, released: &released) }
      }
    }
    guard hasHooks else { return }
    // The inverse goes only to the hooks that asked for it (the store's undo history): another history that got it
    // would take the commit for a step of the whole state, whatever its scope.
    // Walked by index, each hook read unretained (``commitHooks`` keeps them): iterating retained and released the
    // hook and its function's context around every call.
    var index = 0
    while index < commitHooks.count {
      let letGo = Unmanaged.passUnretained(commitHooks[index])._withUnsafeGuaranteedRef { hook -> UndoLetGo in
        guard !isMove || hook.seesMoves else { return UndoLetGo() }
        // The inverse is passed as it is, or nil: wrapping it again (`wantsInverse ? inverse : nil`) copied it.
        return hook.wantsInverse ? hook.record(item, &state, inverse) : hook.record(item, &state, nil)
      }
      if !letGo.isEmpty { released.append(CommitLogState.Dropped(letGo: letGo)) }
      index += 1
    }
  }

  /// ``commit(_:touching:delivering:_:)`` when someone is concerned: observers, hooks, a refusal, or a store that is not ready.
  @inlinable @inline(never)
  mutating func commitNoticed(
    _ item: () -> (any Dispatchable)?, touching filter: ScopeCommitFilter?, delivering delivery: inout Commit<S>?,
    _ mutate: (inout S) throws -> Bool
  ) throws -> CommitOutcome {
    if let error = lifecycle.phase.dispatchError { throw error }
    var recorded: (any Dispatchable)?
    if !commitHooks.isEmpty || !logs.isEmpty || live != nil {
      guard let item = item() else { return .needsItem }
      if typeIdentity(of: item) == moveType, let move = item as? any TimeTravelMove {
        return try move(&self, delivering: &delivery)
      }
      if let refusal = refusal(of: item) { throw refusal }
      recorded = item
    }
    // Who is concerned is decided before the mutation, so that the old state is kept only if someone needs it
    // (keeping it makes the mutation copy what it touches).
    let concerned: [StateSubscriber<S>]
    var needsOld = !observers.listeners.isEmpty || logs.contains { $0.needsBase.isSet }
    if let filter {
      filter.widened = false
      let subscribers = observers.subscribers(concerning: filter)
      concerned = subscribers.subscribers
      needsOld = needsOld || subscribers.needsOldState
    } else {
      concerned = observers.subscribers
      needsOld = needsOld || observers.needsOldState
    }
    let old: S? = needsOld ? state : nil
    // The store's undo history wants an invertible updater's inverse: the item is applied through its inverting
    // form (the same change), here, whichever path brought it. Otherwise, or if it is another state's, `mutate`.
    var inverse: InvertedCommit?
    if let recorded {
      guard try applyRecorded(recorded, inverse: &inverse, mutate) else { return .declined }
    } else {
      guard try mutate(&state) else { return .declined }
    }
    commitCount &+= 1
    // A change that reached beyond its scope's place (an element renamed through its own scope) goes to every
    // subscriber: read here, in the commit's own critical section, like the rest.
    let subscribers = filter?.widened == true ? observers.subscribers : concerned
    // Hooks and logs are only ever here with the item (see above). What a full log drops, and what a hook lets go,
    // is released by the caller, after unlocking, as part of the commit it delivers.
    var released: [CommitLogState<S>.Dropped] = []
    if let recorded { record(recorded, before: old, inverse: inverse, soleLog: soleLog, released: &released) }
    guard !subscribers.isEmpty || !observers.listeners.isEmpty || !released.isEmpty else {
      return .applied
    }
    delivery = Commit(
      old: old, new: state, listeners: observers.listeners, subscribers: subscribers,
      released: released.isEmpty ? nil : released)
    return .deliver
  }

  /// Moves the state to `target` (a recorded state; nil: back to the live one), the commit of a move in time, `item`:
  /// what makes the store away from live, or live again, ordered in the mailbox like every item. Observers see it as
  /// a commit; commit hooks do not (time travel is no part of the session), but for a test's tap
  /// (``CommitHook/seesMoves``). Going back while live commits nothing.
  @usableFromInline
  mutating func travel(to target: S?, item: any Dispatchable, delivering delivery: inout Commit<S>?) -> CommitOutcome {
    let old = state
    if let target {
      if live == nil {
        live = state
        refusedWhileAway.reset()
      }
      state = target
    } else {
      guard let saved = live else { return .nothingToCommit }
      live = nil
      state = saved
    }
    awayFlag.set(live != nil)
    refreshQuiet()
    commitCount &+= 1
    var released: [CommitLogState<S>.Dropped] = []
    record(item, before: nil, inverse: nil, soleLog: nil, isMove: true, released: &released)
    guard !observers.isEmpty || !released.isEmpty else { return .applied }
    delivery = Commit(
      old: old, new: state, listeners: observers.listeners, subscribers: observers.subscribers,
      released: released.isEmpty ? nil : released)
    return .deliver
  }

  /// Why `item` is refused now, if it is: the one place that decides what the store takes (commits, through
  /// ``commit(_:touching:delivering:_:)``, and side effects, as they start). Nil when it may go on. Every caller
  /// throws what it returns, so a refusal while away from live is counted here (``refusedWhileAway``).
  @inlinable
  func refusal(of item: any Dispatchable) -> (any Error)? {
    if let error = lifecycle.phase.dispatchError { return error }
    if live != nil {
      refusedWhileAway.increment()
      return TimeTravelError.awayFromLive(typeName(of: (item as? any ScopedDispatchable)?.base ?? item))
    }
    return nil
  }

  /// Recomputes ``quiet`` after one of its inputs changed.
  @usableFromInline
  mutating func refreshQuiet() {
    let unobserved = lifecycle.phase.isReady && observers.isEmpty && live == nil
    quiet = unobserved && logs.isEmpty && commitHooks.isEmpty
    onlyLogged = unobserved && (!logs.isEmpty || !commitHooks.isEmpty)
    quietButForObservers = lifecycle.phase.isReady && live == nil && logs.isEmpty && commitHooks.isEmpty
    hooksWantInverse = commitHooks.contains { $0.wantsInverse }
    hasHooks = !commitHooks.isEmpty
  }

  // MARK: - Observers and hooks

  /// Adds a listener; returns the observers unsubscribed meanwhile from inside an updater, to release.
  mutating func add(_ listener: ListenerEntry<S>) -> Observers<S>.Dropped {
    defer { refreshQuiet() }
    return observers.add(listener)
  }

  /// Adds a subscriber; returns the observers unsubscribed meanwhile from inside an updater, to release.
  mutating func add(_ subscriber: StateSubscriber<S>) -> Observers<S>.Dropped {
    defer { refreshQuiet() }
    return observers.add(subscriber)
  }

  /// Removes a listener; returns what was removed, to release.
  mutating func removeListener(_ id: UInt64) -> Observers<S>.Dropped {
    defer { refreshQuiet() }
    return observers.removeListener(id)
  }

  /// Removes a subscriber; returns what was removed, to release.
  mutating func removeSubscriber(_ id: UInt64) -> Observers<S>.Dropped {
    defer { refreshQuiet() }
    return observers.removeSubscriber(id)
  }

  /// Hands every later commit to `hook`, after the hooks attached before it.
  mutating func attach(_ hook: CommitHook<S>) {
    commitHooks.append(hook)
    // Away from live (time travel), the state shown is a recorded one: the next commit follows the live state.
    if lifecycle.phase.isReady { hook.start?(live ?? state) }
    refreshQuiet()
  }

  /// Appends every later commit to `log`, reading the time on `clock` (on every commit if `plainTimer`) and the cause
  /// when `causes` (the store's) says a binding is alive (nil: the task-local is read on every commit); the state now
  /// (once the store is ready) is the state before the first commit logged.
  mutating func attach(
    _ log: CommitLog<S>, store: ObjectIdentifier, causes: RecorderCauses?, clock: any Clock<Duration>,
    plainTimer: Bool, liveState: @escaping @Sendable (_ body: (S?) -> Void) -> Void
  ) {
    guard !logs.contains(where: { $0 === log }) else { return }
    // Away from live (time travel), the state shown is a recorded one: the next commit follows the live state.
    log.attach(
      store: store, causes: causes, clock: clock, plainTimer: plainTimer, state: liveStateUnlessStarting,
      liveState: liveState)
    logs.append(log)
    soleLog = logs.count == 1 ? Unmanaged.passUnretained(log) : nil
    effectLogs.append(log.effects)
    refreshQuiet()
  }

  /// The state the store's next commit follows, once it has started: the live one (away from live, the state shown is
  /// a recorded one); after shutdown, the state it ended with (`S()` if its start-up failed); nil while it is starting.
  var liveStateUnlessStarting: S? {
    if case .starting = lifecycle.phase { return nil }
    return live ?? state
  }

  // MARK: - Lifecycle

  /// The store is ready; see ``Lifecycle/finishStartup()``.
  mutating func finishStartup() -> Lifecycle<Waiter, Task<Void, Never>>.Actions? {
    defer { refreshQuiet() }
    let actions = lifecycle.finishStartup()
    // A recorder attached while the store was starting starts from the state the store starts from.
    if lifecycle.phase.isReady {
      for log in logs { log.adoptStartState(state) }
      for hook in commitHooks { hook.start?(state) }
    }
    return actions
  }

  /// Start-up failed; see ``Lifecycle/failStartup(_:)``.
  mutating func failStartup(_ error: any Error) -> Lifecycle<Waiter, Task<Void, Never>>.Actions? {
    defer { refreshQuiet() }
    return lifecycle.failStartup(error)
  }

  /// The store shuts down: see ``Lifecycle/shutdown(caller:)``. Also takes out the observers and hooks, to finish
  /// and release after unlocking.
  mutating func shutdown(caller: TaskIdentity?) -> (
    lifecycle: Lifecycle<Waiter, Task<Void, Never>>.Shutdown, observers: Observers<S>.Dropped, hooks: [CommitHook<S>]
  )? {
    guard let shutdown = lifecycle.shutdown(caller: caller) else { return nil }
    defer {
      commitHooks = []
      refreshQuiet()
    }
    return (shutdown, observers.removeAll(), commitHooks)
  }

  // MARK: - The chain's end

  /// Installs `frame` as the frame of the chain that now runs for the updater holding the turn (run by `holder`),
  /// and returns the chain to run.
  ///
  /// - Throws: The phase's error once the store has failed or shut down.
  @inlinable
  mutating func installChain(_ frame: UpdaterFrame<S>, holder: TaskIdentity?) throws -> InstalledChain {
    if let error = lifecycle.phase.dispatchError { throw error }
    frame.chainEnd = .running
    turnFrame = frame
    mailbox.turnHolder = holder
    if let opaqueChain {
      if let dispatchChain = opaqueChain.dispatchChain { return .dispatch(dispatchChain) }
      return .opaque(opaqueChain)
    }
    return .plain(chain)
  }

  /// The spare frame (``spareFrame``), to install for a dispatch whose frame applies `apply`, if nothing but the
  /// store holds it; nil otherwise, and the dispatch makes a frame of its own.
  ///
  /// Held by nothing else, it can be found by no `next` call: a task that carries it (one an interceptor of its
  /// earlier dispatch started, still running) holds it through its task-local, and a ``DispatchInterceptorNext`` kept
  /// from that dispatch holds it itself. So a `next` kept from the earlier dispatch can never be taken for one of the
  /// frame's later dispatch, which a frame's identity decides.
  @inlinable
  mutating func takeSpareFrame(applying apply: @escaping UpdaterFrame<S>.TypedApply) -> UpdaterFrame<S>? {
    guard isKnownUniquelyReferenced(&spareFrame), let frame = spareFrame else { return nil }
    spareFrame = nil
    // Releases ``UpdaterFrame/applyingNothing`` (see ``recycle(_:)``): nothing of the user's.
    frame.applyIfDispatchedType = apply
    return frame
  }

  /// Keeps `frame`, whose dispatch has ended and released the turn, as the spare frame; returns what that displaces
  /// (the previous spare, the frame's function, which may hold a user's values), for the caller to release after
  /// unlocking.
  @inlinable
  mutating func recycle(_ frame: UpdaterFrame<S>) -> (UpdaterFrame<S>?, UpdaterFrame<S>.TypedApply) {
    let apply = frame.applyIfDispatchedType
    frame.applyIfDispatchedType = UpdaterFrame<S>.applyingNothing
    frame.redirects = []
    let displaced = spareFrame
    spareFrame = frame
    return (displaced, apply)
  }

  /// A call of `next` begins for `frame`'s dispatch: it may go on only while that dispatch holds the turn, its
  /// chain has not returned, and no other call of its `next` is being handled. Every call that passes ends with
  /// ``exitNext(_:)``.
  @inlinable
  mutating func enterNext(_ item: any Dispatchable, frame: UpdaterFrame<S>) throws {
    guard turnFrame === frame else { throw StoreError.nextCalledOutOfScope(typeName(of: item)) }
    switch frame.chainEnd {
    case .running: frame.chainEnd = .inNext
    case .inNext: throw StoreError.nextCalledConcurrently(typeName(of: item))
    case .closing, .closed: throw StoreError.nextCalledOutOfScope(typeName(of: item))
    }
  }

  /// Ends the call of `frame`'s `next` in progress, once its commit is delivered (or it failed); returns the
  /// resumption of its dispatch if that dispatch is waiting in ``closeChain(_:)``.
  @inlinable
  mutating func exitNext(_ frame: UpdaterFrame<S>) -> Resumption<Waiter>? {
    switch frame.chainEnd {
    case .inNext:
      frame.chainEnd = .running
      return nil
    case .closing(let waiter):
      frame.chainEnd = .closed
      if turnFrame === frame { turnFrame = nil }
      return chainCloseWaiters.resolve(waiter, with: .success(()))
    case .running, .closed:
      // Internal invariant: only a call that entered exits.
      return nil
    }
  }

  /// Closes the chain of `frame`'s dispatch, which holds the turn: a `next` called from now on fails. Returns a
  /// waiter for the dispatch to suspend on if a call of `next` is still in progress (an interceptor handed it to
  /// a task it did not await, and returned): ``exitNext(_:)`` resumes it. So a dispatch returns, and releases the
  /// turn, only after the delivery in flight: this switch is where that is decided.
  @inlinable
  mutating func closeChain(_ frame: UpdaterFrame<S>) -> UInt64? {
    switch frame.chainEnd {
    case .running:
      frame.chainEnd = .closed
      if turnFrame === frame { turnFrame = nil }
      return nil
    case .inNext:
      let waiter = chainCloseWaiters.add()
      frame.chainEnd = .closing(waiter: waiter)
      return waiter
    case .closing(let waiter):
      return waiter
    case .closed:
      return nil
    }
  }

  /// Whether `frame`'s dispatch has a `next` call in progress (entered, not exited): what a substitute handled
  /// outside the first critical section checks before it commits.
  @inlinable
  func isInNext(_ frame: UpdaterFrame<S>) -> Bool {
    guard turnFrame === frame else { return false }
    switch frame.chainEnd {
    case .inNext, .closing: return true
    case .running, .closed: return false
    }
  }

  /// Releases the turn and starts whatever comes next, if the store is running.
  @inlinable
  mutating func releaseTurn(byPump: Bool) -> Mailbox<Waiter, MailboxJob>.Actions {
    turnFrame = nil
    return mailbox.releaseTurn(byPump: byPump)
  }

  /// Releases the turn if nothing waits behind it; see ``Mailbox/releaseTurnIfNothingWaits()``.
  @inlinable
  mutating func releaseTurnIfNothingWaits() -> Bool {
    guard mailbox.releaseTurnIfNothingWaits() else { return false }
    turnFrame = nil
    return true
  }
}

/// The interceptor chain a state updater's dispatch runs, as ``CoreState/installChain(_:holder:)`` hands it out.
@usableFromInline
enum InstalledChain {
  /// A chain of ``DispatchInterceptor``s alone, called directly (``OpaqueChain/dispatchChain``).
  case dispatch(DispatchInterceptorChain)
  /// The chain at its handlers' own representation (every store, by default).
  case opaque(OpaqueChain<Void>)
  /// The plain twin: the chain at its substituted type (``StoreConfiguration/usesPlainInterceptorChain``).
  case plain(StoreInterceptorNext)
}

/// What a commit (``CoreState/commit(_:touching:delivering:_:)``) tells its caller, to act on after unlocking.
@usableFromInline
enum CommitOutcome {
  /// Committed; nobody to tell.
  case applied
  /// Committed; deliver the commit handed out (the `delivering` parameter) while holding the turn.
  case deliver
  /// The mutation declined (an item of another type than the dispatched one): nothing changed.
  case declined
  /// Handled without a commit (a return to live while the store is live): nothing changed, nobody to tell.
  case nothingToCommit
  /// Not made: the commit needs its item (for the commit hooks, or to decide a refusal), and the caller, a fast
  /// path, has none. Nothing changed; the caller takes the plain path.
  case needsItem
}

/// An item that moves the store in time (``TimeTravelCommand``): the commit transition applies it itself.
@usableFromInline
protocol TimeTravelMove {
  /// Moves `core` to the recorded state, or back to live; see ``CoreState/travel(to:item:delivering:)``.
  ///
  /// - Throws: ``StoreError/wrongStateType(expected:actual:)`` if the recorded state is not of `core`'s type.
  func callAsFunction<S: FeatureState, D: SideEffectDependencyContainer>(
    _ core: inout CoreState<S, D>, delivering delivery: inout Commit<S>?
  ) throws -> CommitOutcome
}

/// The identity of the type of the value in `item`'s existential, read from the opened existential (`type(of:)` on an
/// existential called into the runtime on every commit). For a class instance, that is the class the existential was
/// made from, not necessarily its dynamic class: compare it only with a value type's identity.
@inlinable
func typeIdentity<T: Dispatchable>(of item: T) -> ObjectIdentifier {
  ObjectIdentifier(T.self)
}

/// The value in `item`'s existential if its type is `U` itself; nil otherwise. It compares the two types' identities
/// and reads the value as `U` (the same type): `item as? U` called the runtime's dynamic cast, which cost a dispatch
/// through one interceptor about 15 ns. Unlike the cast, it answers nil for an instance of a subclass of a class `U`:
/// callers take their type-erased path for it, which handles any item.
@inlinable @inline(__always)
func exactly<U>(_ item: any Dispatchable, _: U.Type) -> U? {
  func open<T: Dispatchable>(_ value: T) -> U? {
    guard T.self == U.self else { return nil }
    // `T` is `U` (same identity): this reinterprets a value as its own type.
    return unsafeBitCast(value, to: U.self)
  }
  return open(item)
}
