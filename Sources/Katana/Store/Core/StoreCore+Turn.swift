extension StoreCore {
  // MARK: - The turn

  /// The fast path of an updater dispatch: applies `mutate` right away if the store is ready and nothing is ahead
  /// in the mailbox, delivers the change, and returns true. One critical section, and no ``Commit`` at all when the
  /// commit concerns nobody (``CoreState/commitIfQuiet(touching:item:widened:released:_:)``); otherwise the whole commit is made
  /// in a second critical section (the first changed nothing). With a delivery to make, the turn is taken in the
  /// commit's critical section and released once the delivery is done, so that deliveries never overlap.
  ///
  /// Returns false, having changed nothing, if the caller must take the plain path: the store is busy (or not
  /// running), or the commit needs its item (commit hooks, recorders, a refusal to decide) and `item` gives none.
  ///
  /// - Parameters:
  ///   - filter: The observers a commit through a scope concerns (nil: every observer).
  ///   - item: The item committed, as the store applies it, called only if the commit needs it (nil: the caller
  ///     has none at hand, and takes the plain path then).
  @inlinable @inline(__always)
  func applyIfIdle(
    touching filter: ScopeCommitFilter?, item: () -> (any Dispatchable)? = { nil }, _ mutate: (inout S) throws -> Void
  ) throws -> Bool {
    var widened: [StateSubscriber<S>] = []
    // What a full recorder's log drops in this commit: released when this function returns, after unlocking.
    var released: [CommitLogState<S>.Dropped] = []
    let quietly = try withLockRunningUpdater { core -> Bool? in
      guard core.canTakeTurnNow else { return false }
      let outcome = try core.commitIfQuiet(touching: filter, item: item, widened: &widened, released: &released) {
        state in
        try mutate(&state)
        return true
      }
      switch outcome {
      case nil: return nil
      case .applied?: return true
      case .deliver?:
        core.mailbox.takeTurn(holder: nil)
        return true
      case .declined?, .needsItem?, .nothingToCommit?: return false
      }
    }
    if !widened.isEmpty { deliverWidened(to: widened) }
    guard let quietly else { return try applyNoticedIfIdle(touching: filter, item: item, mutate) }
    return quietly
  }

  /// Delivers the state to `subscribers`, the stream subscribers a commit that reached beyond its scope's place
  /// was registered with (chosen in its critical section), then releases the turn its caller took there: until
  /// then no commit can come, so the state read here is that commit's.
  @inlinable @inline(never)
  func deliverWidened(to subscribers: [StateSubscriber<S>]) {
    let state = withLock { $0.state }
    deliver(.widened(state, to: subscribers))
    releaseTurn()
  }

  /// ``applyIfIdle(touching:item:_:)`` for a commit that someone is concerned by: the whole commit transition, in one
  /// critical section. Kept out of line, so that the hot path above handles no ``Commit``.
  @inlinable @inline(never)
  func applyNoticedIfIdle(
    touching filter: ScopeCommitFilter?, item: () -> (any Dispatchable)?, _ mutate: (inout S) throws -> Void
  ) throws -> Bool {
    // The commit comes out through a captured variable (see ``CoreState/commit(_:touching:delivering:_:)``).
    var delivery: Commit<S>?
    let applied = try withLockRunningUpdater { core -> Bool in
      guard core.canTakeTurnNow else { return false }
      switch try core.commit(
        item, touching: filter, delivering: &delivery,
        { state in
          try mutate(&state)
          return true
        })
      {
      case .applied: return true
      case .deliver:
        core.mailbox.takeTurn(holder: nil)
        return true
      case .needsItem, .declined, .nothingToCommit: return false
      }
    }
    if let delivery {
      deliver(delivery)
      releaseTurn()
    }
    return applied
  }

  /// Commits `mutate`, the change of `item`, while the calling dispatch holds the turn, and delivers it.
  ///
  /// - Throws: The refusal (the store has shut down, or is away from live); what `mutate` throws.
  @usableFromInline func commitHoldingTurn(
    _ item: any Dispatchable, touching filter: ScopeCommitFilter? = nil, _ mutate: (inout S) throws -> Void
  ) throws {
    var delivery: Commit<S>?
    try withLockRunningUpdater { core in
      _ = try core.commit({ item }, touching: filter, delivering: &delivery) { state in
        try mutate(&state)
        return true
      }
    }
    if let delivery { deliver(delivery) }
  }

  /// The slow path of an updater dispatch: takes the turn (waiting for it if needed), applies the updater
  /// (through the interceptor chain if there is one), releases the turn, then dispatches any substituted
  /// items. Only waiting and the chain itself are asynchronous.
  @inlinable
  nonisolated(nonsending) func dispatchUpdaterWaitingForTurn(
    _ item: any Dispatchable, applying typedApply: @escaping UpdaterFrame<S>.TypedApply,
    apply: (inout S) throws -> Void, depth: Int
  ) async throws {
    // With interceptors, taking the turn at once also installs the frame (the spare one, if it is free) and reads
    // the chain (one critical section instead of two).
    var chain: InstalledChain?
    var installed: UpdaterFrame<S>?
    let holder = try await acquireTurn(
      installing: hasInterceptors ? typedApply : nil, frame: &installed, chain: &chain)
    guard hasInterceptors else {
      do {
        try commitHoldingTurn(item, apply)
      } catch {
        releaseTurn()
        throw error
      }
      releaseTurn()
      return
    }
    let frame = installed ?? UpdaterFrame(storeID: id, applyIfDispatchedType: typedApply)
    do {
      if let chain {
        try await run(chain, item, frame: frame)
      } else {
        try await runChainHoldingTurn(item, frame: frame, holder: holder)
      }
    } catch {
      await closeChain(frame)
      releaseTurn()
      throw error
    }
    // Closing the chain makes a `next` called later fail instead of being lost; in the same critical section,
    // the redirects are read, the frame kept for the next dispatch (but on the plain chain, which keeps a frame per
    // dispatch) and the turn released, unless a `next` is still in progress: then once it is done. What recycling
    // displaces is released after unlocking.
    var waiter: UInt64?
    var recycled: (UpdaterFrame<S>?, UpdaterFrame<S>.TypedApply)?
    // Without anything waiting in the mailbox (the usual case), releasing the turn builds no actions.
    var (redirects, actions) = withLock {
      core -> ([any Dispatchable], Mailbox<CoreState<S, D>.Waiter, MailboxJob>.Actions?) in
      waiter = core.closeChain(frame)
      if waiter != nil { return ([], nil) }
      let redirects = frame.redirects
      if !usesPlainInterceptorChain { recycled = core.recycle(frame) }
      return (redirects, core.releaseTurnIfNothingWaits() ? nil : core.releaseTurn(byPump: false))
    }
    if let waiter {
      await waitForChainClose(waiter)
      (redirects, actions) = withLock {
        core -> ([any Dispatchable], Mailbox<CoreState<S, D>.Waiter, MailboxJob>.Actions?) in
        let redirects = frame.redirects
        if !usesPlainInterceptorChain { recycled = core.recycle(frame) }
        return (redirects, core.releaseTurn(byPump: false))
      }
    }
    // What recycling displaced (user values among them) is released here, after unlocking.
    recycled.map { _ in }
    if let actions, !actions.isEmpty {
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
    let chain = try withLock { core in try core.installChain(frame, holder: holder) }
    try await run(chain, item, frame: frame)
  }

  /// Runs `chain` for `item`, the updater of `frame`'s dispatch, with `frame` bound as the dispatch's frame.
  @inlinable @inline(__always)
  nonisolated(nonsending) func run(_ chain: InstalledChain, _ item: any Dispatchable, frame: UpdaterFrame<S>)
    async throws
  {
    switch chain {
    case .dispatch(let dispatchChain):
      // A chain of `DispatchInterceptor`s alone is called here, specialised and inlined: one async frame fewer. Each
      // `next` it is given carries the frame, so none is bound to the task: no task-local value is pushed, popped or
      // looked up (about a quarter of a dispatch through one such interceptor).
      try await dispatchChain.run(item, from: 0, frame: frame)
    case .opaque(let opaque):
      try await DispatchFrame.withFrame(frame) { try await opaque.run(item) }
    case .plain(let plain): try await DispatchFrame.withFrame(frame) { try await plain(item) }
    }
  }

  /// Commits `mutate`, the change of `item`, when the calling task's turn comes, without the interceptor chain (a
  /// replayed commit, see `replay(into:throughInterceptors:)`), through the one commit transition: observers and
  /// commit hooks get it, and it is refused as any commit would be (after shutdown, away from live).
  nonisolated(nonsending) func commitOutsideChain(_ item: any Dispatchable, _ mutate: (inout S) throws -> Void)
    async throws
  {
    var frame: UpdaterFrame<S>?
    var chain: InstalledChain?
    _ = try await acquireTurn(installing: nil, frame: &frame, chain: &chain)
    defer { releaseTurn() }
    try commitHoldingTurn(item, mutate)
  }

  /// Runs `body` with the live state (the latest committed one, or, while the store shows a recorded state, the live
  /// state it will return to) while the calling task holds the turn, without committing: every commit before it has
  /// been handed to the recorders and commit hooks and delivered, and none can come until `body` returns.
  nonisolated(nonsending) func withTurnOnLiveState<T>(_ body: (S) -> T) async throws -> T {
    var frame: UpdaterFrame<S>?
    var chain: InstalledChain?
    _ = try await acquireTurn(installing: nil, frame: &frame, chain: &chain)
    defer { releaseTurn() }
    let state = withLock { $0.live ?? $0.state }
    return body(state)
  }

  /// Waits until the calling task holds the turn, and returns the task's identity (the turn's holder).
  ///
  /// - Parameters:
  ///   - apply: What the frame of a dispatch through the chain applies in place: given, a frame (the spare one if it
  ///     is free, ``CoreState/takeSpareFrame(applying:)``, or a new one) is installed if the turn is granted at once, in
  ///     the same critical section.
  ///   - frame: Set to the frame installed.
  ///   - chain: Set to the interceptor chain when a frame is installed (the chain may then run at once); left nil
  ///     otherwise.
  /// - Throws: `CancellationError` if the caller is cancelled before its turn comes (the updater is then
  ///   withdrawn), ``StoreError/deadlock(_:)`` if the caller is the one holding the turn or running the
  ///   state initializer, the phase's error once the store has failed or shut down.
  @inlinable @inline(__always)
  nonisolated(nonsending) func acquireTurn(
    installing apply: UpdaterFrame<S>.TypedApply?, frame: inout UpdaterFrame<S>?, chain: inout InstalledChain?
  ) async throws -> TaskIdentity? {
    let holder = TaskIdentity.current
    let (arrival, waitingCount) = try withLock {
      core throws -> (Mailbox<CoreState<S, D>.Waiter, MailboxJob>.Arrival, Int) in
      // Read under the lock (see ``checkCancellationAtArrival()``), from the task's own record: reading it through the
      // `UnsafeCurrentTask?` that gave the identity copied that optional (a resilient type, through its value witnesses,
      // retaining the task) and destroyed the copy, about 15 ns of a dispatch through one interceptor.
      try Self.checkCancellationAtArrival()
      let runsStartup = holder != nil && holder == core.lifecycle.startupTask
      let arrival = core.mailbox.arriveUpdater(holder: holder, runsStartup: runsStartup)
      if case .proceed = arrival, let apply {
        let installing =
          core.takeSpareFrame(applying: apply) ?? UpdaterFrame(storeID: id, applyIfDispatchedType: apply)
        frame = installing
        chain = try? core.installChain(installing, holder: holder)
      }
      return (arrival, core.mailbox.waitingCount)
    }
    switch arrival {
    case .proceed:
      return holder
    case .wait(let waiter, let position):
      try await waitInMailbox(waiter, at: position, waitingCount: waitingCount)
      return holder
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
    let released = withLock { $0.releaseTurnIfNothingWaits() }
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

  /// Waits, if the store is still starting, until the side effect `item` may start; returns the interceptor chain.
  ///
  /// - Throws: What the mailbox fails it with (the store failed or shut down), a deadlock, or the store's refusal
  ///   (``CoreState/refusal(of:)``: while the store is away from live, no side effect starts).
  nonisolated(nonsending) func chainOnceSideEffectsMayStart(_ item: any Dispatchable) async throws
    -> StoreInterceptorNext?
  {
    let holder = TaskIdentity.current
    let (arrival, chain, waitingCount) = try withLock { core in
      let runsStartup = holder != nil && holder == core.lifecycle.startupTask
      let arrival = core.mailbox.arriveSideEffect(runsStartup: runsStartup)
      if case .proceed = arrival, let refusal = core.refusal(of: item) { throw refusal }
      return (arrival, hasInterceptors ? core.chain : nil, core.mailbox.waitingCount)
    }
    switch arrival {
    case .proceed:
      return chain
    case .wait(let waiter, let position):
      try await waitInMailbox(waiter, at: position, waitingCount: waitingCount)
      return try withLock { core in
        if let refusal = core.refusal(of: item) { throw refusal }
        return hasInterceptors ? core.chain : nil
      }
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
  func makeChainEnd() -> ChainTail {
    ChainTail(
      updater: { [self] item, frame in try handleUpdaterFromChain(item, frame: frame) },
      next: { [self] item, frame in try await handleFromChain(item, frame: frame) })
  }

  /// The end of the interceptor chain for a state updater: handles what interceptors hand to `next` for the dispatch of
  /// `frame`, synchronously, and returns true if that is this store's updater dispatch; returns false, having done
  /// nothing, if it is a side effect's (``handleFromChain(_:frame:)`` handles it).
  ///
  /// - Parameter frame: The frame of the dispatch the call belongs to: carried by a ``DispatchInterceptorNext``, found in
  ///   the calling task by a ``StoreInterceptorNext``.
  @inlinable @inline(__always)
  func handleUpdaterFromChain(_ item: any Dispatchable, frame: DispatchFrame?) throws -> Bool {
    guard let frame, frame.storeID == id else {
      throw StoreError.nextCalledOutOfScope(typeName(of: item))
    }
    guard frame.isUpdater else { return false }
    // The frame was created by this store, whose state type is `S`.
    try handleQuietlyInUpdaterChain(item, frame: unsafeDowncast(frame, to: UpdaterFrame<S>.self))
    return true
  }

  /// The end of the interceptor chain: handles what interceptors hand to `next` for the dispatch of `frame` (see
  /// ``handleUpdaterFromChain(_:frame:)``).
  @inlinable @inline(__always)
  nonisolated(nonsending) func handleFromChain(_ item: any Dispatchable, frame: DispatchFrame?) async throws {
    guard let frame, frame.storeID == id else {
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

  /// Handles an item handed to `next` by a chain running for the state updater of `frame`: applies it if it
  /// is a state updater (in place, through the frame's typed fast path when it has the dispatched type), or
  /// records it to dispatch after the chain if it is a side effect.
  ///
  /// - Throws: ``StoreError/nextCalledOutOfScope(_:)`` if the frame's dispatch no longer holds the turn;
  ///   ``StoreError/nextCalledConcurrently(_:)`` if another call of this dispatch's `next` is still being
  ///   handled; the commit's refusal.
  @inlinable
  func handleInUpdaterChain(_ item: any Dispatchable, frame: UpdaterFrame<S>) throws {
    // The call enters and commits in one critical section; without a delivery to make it ends there too.
    try commitInNext(item, frame: frame, entering: true)
  }

  /// ``handleInUpdaterChain(_:frame:)`` for the opaque chain (``OpaqueChain``): a commit that concerns nobody but the
  /// state and the recorders' logs (``CoreState/commitIfQuiet(touching:item:widened:released:_:)``) enters the call,
  /// commits and ends it in one critical section, and handles no ``Commit``
  /// (a commit holds two copies of the state, copied and destroyed through value witnesses: about 4% of a dispatch
  /// through one interceptor); any other goes on in ``commitInNext(_:frame:entering:)``, a second critical section.
  /// The plain chain's end keeps ``handleInUpdaterChain(_:frame:)``, its twin (STYLE 11).
  @inlinable
  func handleQuietlyInUpdaterChain(_ item: any Dispatchable, frame: UpdaterFrame<S>) throws {
    var widened: [StateSubscriber<S>] = []
    // What a full recorder's log drops in this commit: released when this function returns, after unlocking.
    var released: [CommitLogState<S>.Dropped] = []
    let (quietly, resumption) = try withLockRunningUpdater {
      core -> (CommitOutcome?, Resumption<CoreState<S, D>.Waiter>?) in
      try core.enterNext(item, frame: frame)
      // Without a scope's filter, `widened` stays empty.
      let outcome = core.commitIfQuiet(touching: nil, item: { item }, widened: &widened, released: &released) {
        state in
        frame.applyIfDispatchedType(item, &state)
      }
      switch outcome {
      case nil, .declined?: return (outcome, nil)
      case .applied?, .deliver?, .nothingToCommit?, .needsItem?: return (outcome, core.exitNext(frame))
      }
    }
    resumption?.perform()
    switch quietly {
    case nil: try commitInNext(item, frame: frame, entering: false)
    case .declined?: try handleSubstitute(item, frame: frame)
    case .applied?, .deliver?, .nothingToCommit?, .needsItem?: break
    }
  }

  /// Commits `item` from a call of `next` for `frame`'s dispatch, which holds the turn, delivers it and ends the call:
  /// the plain chain's end (``handleInUpdaterChain(_:frame:)``, `entering` the call in the same critical section),
  /// and the rest of ``handleQuietlyInUpdaterChain(_:frame:)`` when the commit concerns someone (the call has entered:
  /// no other commit can come in between).
  @inlinable @inline(never)
  func commitInNext(_ item: any Dispatchable, frame: UpdaterFrame<S>, entering: Bool) throws {
    var delivery: Commit<S>?
    let (result, resumption) = try withLockRunningUpdater {
      core -> (Result<CommitOutcome, any Error>, Resumption<CoreState<S, D>.Waiter>?) in
      if entering { try core.enterNext(item, frame: frame) }
      let result = Result {
        try core.commit({ item }, touching: nil, delivering: &delivery) { state in
          frame.applyIfDispatchedType(item, &state)
        }
      }
      switch result {
      case .success(.deliver), .success(.declined): return (result, nil)
      default: return (result, core.exitNext(frame))
      }
    }
    resumption?.perform()
    switch try result.get() {
    case .deliver:
      if let delivery { deliver(delivery) }
      exitNext(frame)
    case .declined:
      try handleSubstitute(item, frame: frame)
    case .applied, .nothingToCommit, .needsItem:
      break
    }
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

  /// Handles an item of another type than the dispatched updater, while the `next` call that got it is in
  /// progress: rare, so classified outside the lock. Ends that call.
  @usableFromInline func handleSubstitute(_ item: any Dispatchable, frame: UpdaterFrame<S>) throws {
    defer { exitNext(frame) }
    switch try Self.classify(item) {
    case .sideEffect:
      withLock { _ in frame.redirects.append(item) }
    case .updater(let updater):
      var delivery: Commit<S>?
      try withLockRunningUpdater { core in
        guard core.isInNext(frame) else { throw StoreError.nextCalledOutOfScope(typeName(of: item)) }
        _ = try core.commit({ item }, touching: nil, delivering: &delivery) { state in
          try Self.applyErased(updater, to: &state)
          return true
        }
      }
      if let delivery { deliver(delivery) }
    }
  }
}
