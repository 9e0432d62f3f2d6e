extension StoreCore {
  // MARK: - The turn

  /// Applies `mutate` right away if the store is ready and nothing is ahead in the mailbox, delivers the
  /// change to observers, and returns true: the hot path, one lock acquisition without observers. Returns
  /// false if the caller must wait.
  @inlinable @inline(__always)
  func applyIfIdle(_ mutate: (inout S) throws -> Void) rethrows -> Bool {
    // The common case, a store without observers, makes no ``Commit`` at all: a commit holds two copies of the
    // state, which the optimizer keeps in memory once the mutation can throw (copying them was 42% of an awaited
    // dispatch's profile). A store with observers takes the lock a second time, in ``applyObservedIfIdle(_:)``.
    let unobserved = try withLockRunningUpdater { core -> Bool? in
      guard core.canTakeTurnNow else { return nil }
      guard core.observers.isEmpty else { return false }
      try mutate(&core.state)
      return true
    }
    switch unobserved {
    case nil: return false
    case true?: return true
    case false?: return try applyObservedIfIdle(mutate)
    }
  }

  /// ``applyIfIdle(_:)`` for a commit that observers see.
  @inlinable @inline(never)
  func applyObservedIfIdle(_ mutate: (inout S) throws -> Void) rethrows -> Bool {
    // The commit comes out through a captured variable rather than an enum payload: an enum with a generic
    // payload is destroyed through its value witness, which cost the listener case about 5%.
    var commit: Commit<S>?
    let applied = try withLockRunningUpdater { core -> Bool in
      guard core.canTakeTurnNow else { return false }
      commit = try core.commit(mutate)
      // With a delivery to make, hold the turn until it is done, so that deliveries never overlap.
      if commit != nil { core.mailbox.takeTurn(holder: nil) }
      return true
    }
    if let commit {
      commit.deliver()
      releaseTurn()
    }
    return applied
  }

  /// ``applyIfIdle(_:)`` for a change made through a scope: the commit goes to the observers that `filter`
  /// says it concerns.
  ///
  /// The common case, a commit that concerns no observer, makes no ``Commit`` at all (a commit holds two
  /// copies of the state, which the optimizer does not keep out of memory once the mutation can throw). A
  /// commit with observers takes the lock a second time, in ``applyObservedIfIdle(touching:_:)``.
  @inlinable @inline(__always)
  func applyIfIdle(touching filter: ScopeCommitFilter, _ mutate: (inout S) throws -> Void) throws -> Bool {
    let attempt = try withLockRunningUpdater { core -> IdleAttempt in
      guard core.canTakeTurnNow else { return .wait }
      guard core.observers.isEmpty || core.observers.concernNobody(filter) else { return .observe }
      filter.widened = false
      try mutate(&core.state)
      guard filter.widened, !core.observers.subscribers.isEmpty else { return .applied }
      // The change reached beyond the scope's place (an element renamed through its own scope): rare, so
      // delivered to everyone from a second critical section, holding the turn until it is done.
      core.mailbox.takeTurn(holder: nil)
      return .appliedWidely
    }
    switch attempt {
    case .wait: return false
    case .applied: return true
    case .observe: return try applyObservedIfIdle(touching: filter, mutate)
    case .appliedWidely:
      deliverToEverySubscriberHoldingTurn()
      return true
    }
  }

  /// What ``applyIfIdle(touching:_:)``'s first critical section did.
  @usableFromInline
  enum IdleAttempt {
    /// The store is busy: the caller waits for its turn.
    case wait
    /// Applied; nobody to tell.
    case applied
    /// Nothing done: observers may be concerned, so the commit is made in a second critical section.
    case observe
    /// Applied, and the turn taken: the change must reach every subscriber.
    case appliedWidely
  }

  /// Delivers the current state to every stream subscriber, then releases the turn, which the caller holds:
  /// no commit can happen in between, so the state read is the caller's commit.
  @usableFromInline func deliverToEverySubscriberHoldingTurn() {
    let commit = withLock { $0.commitToEverySubscriber() }
    commit.deliver()
    releaseTurn()
  }

  /// ``applyIfIdle(touching:_:)`` for a commit that observers may see.
  @inlinable @inline(never)
  func applyObservedIfIdle(touching filter: ScopeCommitFilter, _ mutate: (inout S) throws -> Void) throws -> Bool {
    var commit: Commit<S>?
    let applied = try withLockRunningUpdater { core -> Bool in
      guard core.canTakeTurnNow else { return false }
      commit = try core.commit(mutate, touching: filter)
      if commit != nil { core.mailbox.takeTurn(holder: nil) }
      return true
    }
    if let commit {
      commit.deliver()
      releaseTurn()
    }
    return applied
  }

  /// The slow path of an updater dispatch: takes the turn (waiting for it if needed), applies the updater
  /// (through the interceptor chain if there is one), releases the turn, then dispatches any substituted
  /// items. Only waiting and the chain itself are asynchronous.
  @inlinable
  nonisolated(nonsending) func dispatchUpdaterWaitingForTurn(
    _ item: any Dispatchable, frame: UpdaterFrame<S>, apply: (inout S) throws -> Void, depth: Int
  ) async throws {
    let holder = TaskIdentity.current
    // With interceptors, taking the turn at once also installs the frame and reads the chain (one critical
    // section instead of two).
    var chain = CoreState<S, D>.noChain
    let frameInstalled = try await acquireTurn(
      holder: holder, installing: hasInterceptors ? frame : nil, chain: &chain)
    guard hasInterceptors else {
      do {
        try commitHoldingTurn(apply)
      } catch {
        releaseTurn()
        throw error
      }
      releaseTurn()
      return
    }
    do {
      if frameInstalled {
        try await DispatchFrame.withFrame(frame) { try await chain(item) }
      } else {
        try await runChainHoldingTurn(item, frame: frame, holder: holder)
      }
    } catch {
      await closeChain(frame)
      releaseTurn()
      throw error
    }
    // Closing the chain makes a `next` called later fail instead of being lost; in the same critical section,
    // the redirects are read and the turn released, unless a `next` is still in progress: then once it is done.
    var waiter: UInt64?
    var (redirects, actions) = withLock {
      core -> ([any Dispatchable], Mailbox<CoreState<S, D>.Waiter, MailboxJob>.Actions) in
      waiter = core.closeChain(frame)
      if waiter != nil { return ([], Mailbox<CoreState<S, D>.Waiter, MailboxJob>.Actions()) }
      return (frame.redirects, core.releaseTurn(byPump: false))
    }
    if let waiter {
      await waitForChainClose(waiter)
      (redirects, actions) = withLock {
        core -> ([any Dispatchable], Mailbox<CoreState<S, D>.Waiter, MailboxJob>.Actions) in
        (frame.redirects, core.releaseTurn(byPump: false))
      }
    }
    if !actions.isEmpty {
      perform(actions)
    }
    if !redirects.isEmpty {
      try await dispatchRedirects(redirects, depth: depth)
    }
  }

  /// Runs the interceptor chain for an updater while holding the turn, with `frame` as the dispatch's frame
  /// (bound to the task-local the chain's final `next` reads, and installed as the store's turn frame).
  /// Does not release the turn.
  @inlinable
  nonisolated(nonsending) func runChainHoldingTurn(
    _ item: any Dispatchable, frame: UpdaterFrame<S>, holder: TaskIdentity?
  ) async throws {
    let chain = try withLock { core -> StoreInterceptorNext in
      if let error = core.lifecycle.phase.dispatchError { throw error }
      core.turnFrame = frame
      core.mailbox.turnHolder = holder
      return core.chain
    }
    try await DispatchFrame.withFrame(frame) { try await chain(item) }
  }

  /// Commits `mutate` when the calling task's turn comes, without the interceptor chain (a replayed commit, see
  /// `replay(into:throughInterceptors:)`), and delivers the change to observers.
  /// Commit hooks (recorders, undo histories) get it as a commit of `item`.
  nonisolated(nonsending) func commitOutsideChain(_ item: any Dispatchable, _ mutate: (inout S) throws -> Void)
    async throws
  {
    var chain = CoreState<S, D>.noChain
    _ = try await acquireTurn(holder: TaskIdentity.current, installing: nil, chain: &chain)
    do {
      var recorded: RecordedChange<S>?
      let commit = try withLockRunningUpdater { core -> Commit<S>? in
        if let error = core.lifecycle.phase.dispatchError { throw error }
        guard core.commitHooks.isEmpty else {
          recorded = try core.recordedCommit { state in
            try mutate(&state)
            return true
          }
          return recorded?.commit
        }
        return try core.commit(mutate)
      }
      recorded?.record(item)
      commit?.deliver()
    } catch {
      releaseTurn()
      throw error
    }
    releaseTurn()
  }

  /// Runs `body` with the latest committed state while the calling task holds the turn, without committing: every
  /// commit before it has been delivered and handed to the commit hooks, and none can come until `body` returns.
  nonisolated(nonsending) func withTurn<T>(_ body: (S) -> T) async throws -> T {
    var chain = CoreState<S, D>.noChain
    _ = try await acquireTurn(holder: TaskIdentity.current, installing: nil, chain: &chain)
    defer { releaseTurn() }
    let state = withLock { $0.state }
    return body(state)
  }

  /// Commits `mutate` while holding the turn, and delivers the change to observers.
  @usableFromInline func commitHoldingTurn(_ mutate: (inout S) throws -> Void) throws {
    let commit = try withLockRunningUpdater { core in
      if let error = core.lifecycle.phase.dispatchError { throw error }
      return try core.commit(mutate)
    }
    commit?.deliver()
  }

  /// Waits until the calling task holds the turn.
  ///
  /// - Parameters:
  ///   - frame: A chain frame to install if the turn is granted at once, in the same critical section.
  ///   - chain: Set to the interceptor chain when `frame` is installed.
  /// - Returns: Whether `frame` was installed (the chain may then run at once).
  /// - Throws: `CancellationError` if the caller is cancelled before its turn comes (the updater is then
  ///   withdrawn), ``StoreError/deadlock(_:)`` if the caller is the one holding the turn or running the
  ///   state initializer, the phase's error once the store has failed or shut down.
  @inlinable @inline(__always)
  nonisolated(nonsending) func acquireTurn(
    holder: TaskIdentity?, installing frame: UpdaterFrame<S>?, chain: inout StoreInterceptorNext
  ) async throws -> Bool {
    var installed = false
    let (arrival, waitingCount) = try withLock {
      core throws -> (Mailbox<CoreState<S, D>.Waiter, MailboxJob>.Arrival, Int) in
      try Self.checkCancellationAtArrival()
      let runsStartup = holder != nil && holder == core.lifecycle.startupTask
      let arrival = core.mailbox.arriveUpdater(holder: holder, runsStartup: runsStartup)
      if case .proceed = arrival, let frame, core.lifecycle.phase.dispatchError == nil {
        core.turnFrame = frame
        chain = core.chain
        installed = true
      }
      return (arrival, core.mailbox.waitingCount)
    }
    switch arrival {
    case .proceed:
      return installed
    case .wait(let waiter, let position):
      try await waitInMailbox(waiter, at: position, waitingCount: waitingCount)
      return false
    case .fail(let error):
      throw error
    case .deadlock(let reason):
      throw Self.deadlockError(reason)
    }
  }

  /// Suspends as mailbox waiter `waiter`, queued at `position`, until the mailbox resumes it.
  @usableFromInline nonisolated(nonsending) func waitInMailbox(_ waiter: UInt64, at position: UInt64, waitingCount: Int)
    async throws
  {
    configuration.onMailboxEnqueue?(waitingCount)
    try await suspend(
      install: { core, continuation in core.mailbox.suspend(waiter, on: continuation) },
      cancel: { core in core.mailbox.cancelWaiter(waiter, at: position)?.afterUnlock })
  }

  /// The error thrown instead of waiting in the mailbox when waiting could never end.
  @usableFromInline static func deadlockError(_ reason: Mailbox<CoreState<S, D>.Waiter, MailboxJob>.Deadlock)
    -> StoreError
  {
    switch reason {
    case .holdsTurn:
      .deadlock(
        "this task holds the updater turn (it is running an interceptor for a state updater) and waited for "
          + "another state updater of the same store, which can only run after the turn is released.")
    case .runsStartup:
      .deadlock(
        "the store's state initializer dispatched to its own store and waited; dispatches wait until the "
          + "initializer has returned.")
    }
  }

  /// Releases the turn held by an awaited dispatch.
  @inlinable
  func releaseTurn() {
    let released = withLock { core -> Bool in
      guard core.mailbox.releaseTurnIfNothingWaits() else { return false }
      core.turnFrame = nil
      return true
    }
    if !released {
      releaseTurnStartingWhatWaits()
    }
  }

  /// ``releaseTurn()`` when something waits in the mailbox: starts it.
  @usableFromInline func releaseTurnStartingWhatWaits() {
    let actions = withLock { $0.releaseTurn(byPump: false) }
    if !actions.isEmpty {
      perform(actions)
    }
  }

  /// Performs what a mailbox transition returned.
  @usableFromInline func perform(_ actions: Mailbox<CoreState<S, D>.Waiter, MailboxJob>.Actions) {
    // In mailbox order: what came before the updater that took the turn starts first.
    for wakeup in actions.wakeups {
      switch wakeup {
      case .resume(let resumption): resumption.perform()
      case .startSideEffect(let job): startSideEffectJob(job)
      }
    }
    if let job = actions.startPump {
      startPump(with: job)
    }
    if let failure = actions.failure {
      for job in actions.failedJobs {
        job.fail(failure)
      }
    }
  }

  /// Waits, if the store is still starting, until side effects may start; returns the interceptor chain.
  nonisolated(nonsending) func chainOnceSideEffectsMayStart() async throws -> StoreInterceptorNext? {
    let holder = TaskIdentity.current
    let (arrival, chain, waitingCount) = withLock { core in
      let runsStartup = holder != nil && holder == core.lifecycle.startupTask
      let arrival = core.mailbox.arriveSideEffect(runsStartup: runsStartup)
      return (arrival, hasInterceptors ? core.chain : nil, core.mailbox.waitingCount)
    }
    switch arrival {
    case .proceed:
      return chain
    case .wait(let waiter, let position):
      try await waitInMailbox(waiter, at: position, waitingCount: waitingCount)
      return hasInterceptors ? withLock { $0.chain } : nil
    case .fail(let error):
      throw error
    case .deadlock(let reason):
      throw Self.deadlockError(reason)
    }
  }

  // MARK: - The chain's final `next`

  /// The interceptor chain's final `next`, made by ``Store``'s inlinable initializer so that it is
  /// specialised for the client's state type. It keeps the core alive until shutdown releases the chain.
  @inlinable
  func makeChainEnd() -> StoreInterceptorNext {
    { [self] item in try await handleFromChain(item) }
  }

  /// The end of the interceptor chain: handles what interceptors hand to `next`, for the dispatch whose
  /// frame the calling task carries.
  @inlinable @inline(__always)
  nonisolated(nonsending) func handleFromChain(_ item: any Dispatchable) async throws {
    guard let frame = DispatchFrame.current, frame.storeID == id else {
      throw StoreError.nextCalledOutOfScope(typeName(of: item))
    }
    if frame.isUpdater {
      // The frame was created by this store, whose state type is `S`.
      try handleInUpdaterChain(item, frame: unsafeDowncast(frame, to: UpdaterFrame<S>.self))
    } else {
      try await handleInSideEffectChain(item, frame: unsafeDowncast(frame, to: SideEffectFrame.self))
    }
  }

  @usableFromInline nonisolated(nonsending) func handleInSideEffectChain(
    _ item: any Dispatchable, frame: SideEffectFrame
  )
    async throws
  {
    try frame.checkOpen(for: item)
    if let value = try await frame.runIfDispatchedType(item) {
      frame.setValue(value)
      return
    }
    switch try Self.classify(item) {
    case .updater:
      frame.addRedirect(item)
    case .sideEffect(let effect):
      let context = try makeContext()
      let value = try await DispatchFrame.withoutFrame {
        try await runBody { try await effect.anySideEffect(context) }
      }
      frame.setValue(value)
    }
  }

  /// What the chain's final `next` found under the lock, for a state updater.
  @usableFromInline
  enum ChainAttempt {
    /// Applied; deliver the commit (if any), then end the call.
    case done(Commit<S>?)
    /// The item is not of the dispatched type: classify it outside the lock.
    case notDispatchedType
    /// Applied without a delivery, while the dispatch's chain has returned: end the call after unlocking.
    case endAfterUnlocking
  }

  /// Handles an item handed to `next` by a chain running for the state updater of `frame`: applies it if it
  /// is a state updater (in place, through the frame's typed fast path when it has the dispatched type), or
  /// records it to dispatch after the chain if it is a side effect.
  ///
  /// - Throws: ``StoreError/nextCalledOutOfScope(_:)`` if the frame's dispatch no longer holds the turn;
  ///   ``StoreError/nextCalledConcurrently(_:)`` if another call of this dispatch's `next` is still being
  ///   handled.
  @inlinable
  func handleInUpdaterChain(_ item: any Dispatchable, frame: UpdaterFrame<S>) throws {
    var recorded: RecordedChange<S>?
    let attempt = try withLockRunningUpdater { core -> ChainAttempt in
      try Self.enterNext(item, frame: frame, in: &core)
      guard core.commitHooks.isEmpty else {
        recorded = core.recordedCommit { state in frame.applyIfDispatchedType(item, &state) }
        return recorded == nil ? .notDispatchedType : .done(recorded?.commit)
      }
      let (applied, commit) = core.commitIfApplies { state in frame.applyIfDispatchedType(item, &state) }
      guard applied else { return .notDispatchedType }
      // Without a delivery to make, the call ends here (after unlocking if its dispatch waits for it).
      if commit == nil {
        if frame.isClosed { return .endAfterUnlocking }
        frame.inNext = false
      }
      return .done(commit)
    }
    switch attempt {
    case .done(let commit):
      if let recorded {
        // Recorded while the call still holds the turn (its dispatch cannot release it before `exitNext`).
        recorded.record(item)
        commit?.deliver()
        exitNext(frame)
      } else if let commit {
        commit.deliver()
        exitNext(frame)
      }
    case .endAfterUnlocking:
      exitNext(frame)
    case .notDispatchedType:
      try handleSubstitute(item, frame: frame)
    }
  }

  /// Checks, under the lock, that `frame` holds the turn, that its chain has not returned, and that it has
  /// no `next` call in progress, and marks one: every call that passes ends with ``exitNext(_:)``.
  @inlinable
  static func enterNext(_ item: any Dispatchable, frame: UpdaterFrame<S>, in core: inout CoreState<S, D>) throws {
    guard core.turnFrame === frame, !frame.isClosed else { throw StoreError.nextCalledOutOfScope(typeName(of: item)) }
    if let error = core.lifecycle.phase.dispatchError { throw error }
    guard !frame.inNext else { throw StoreError.nextCalledConcurrently(typeName(of: item)) }
    frame.inNext = true
  }

  /// Ends the `next` call in progress for `frame`, once its commit is delivered (or it failed): if the chain
  /// has returned meanwhile, its dispatch waits in ``closeChain(_:)``, and goes on now.
  @usableFromInline func exitNext(_ frame: UpdaterFrame<S>) {
    withLock { $0.exitNext(frame) }?.perform()
  }

  /// Ends the chain of `frame`'s dispatch, which holds the turn: a `next` called from now on fails with
  /// ``StoreError/nextCalledOutOfScope(_:)``, and a call still in progress (an interceptor that handed `next`
  /// to a task it did not await, and returned) is waited for. So the dispatch that holds the turn owns the
  /// delivery in flight too: it releases the turn, and returns, only after that delivery is done, and the next
  /// updater's commit can never overlap it.
  @usableFromInline nonisolated(nonsending) func closeChain(_ frame: UpdaterFrame<S>) async {
    if let waiter = withLock({ $0.closeChain(frame) }) {
      await waitForChainClose(waiter)
    }
  }

  /// Waits until the `next` call that ``CoreState/closeChain(_:)`` found in progress has ended. Not
  /// cancellable: what it waits for is a synchronous delivery.
  @usableFromInline nonisolated(nonsending) func waitForChainClose(_ waiter: UInt64) async {
    // Never fails: the outcome is always success, and the wait ignores cancellation.
    try? await suspend(install: { core, continuation in core.chainCloseWaiters.suspend(waiter, on: continuation) })
  }

  /// Handles an item of another type than the dispatched updater: rare, so classified outside the lock.
  @usableFromInline func handleSubstitute(_ item: any Dispatchable, frame: UpdaterFrame<S>) throws {
    defer { exitNext(frame) }
    switch try Self.classify(item) {
    case .sideEffect:
      withLock { _ in frame.redirects.append(item) }
    case .updater(let updater):
      var recorded: RecordedChange<S>?
      let commit = try withLockRunningUpdater { core in
        guard core.turnFrame === frame else { throw StoreError.nextCalledOutOfScope(typeName(of: item)) }
        if let error = core.lifecycle.phase.dispatchError { throw error }
        guard core.commitHooks.isEmpty else {
          recorded = try core.recordedCommit { state in
            try Self.applyErased(updater, to: &state)
            return true
          }
          return recorded?.commit
        }
        return try core.commit { try Self.applyErased(updater, to: &$0) }
      }
      recorded?.record(item)
      commit?.deliver()
    }
  }
}
