extension StoreCore {
  // MARK: - Sending

  /// Enqueues a state updater now and returns its handle. Without interceptors, on an idle store, it is
  /// applied right here, as an awaited dispatch would be, and the handle has already succeeded.
  @inlinable
  func send<U: StateUpdater>(_ updater: U) -> DispatchHandle<Void> where U.StateType == S {
    if let dispatchObservers {
      return dispatchObservers.observe(updater) { sendUnobserved(updater) }
    }
    return sendUnobserved(updater)
  }

  /// ``send(_:)`` without the dispatch observers.
  @inlinable
  func sendUnobserved<U: StateUpdater>(_ updater: U) -> DispatchHandle<Void> where U.StateType == S {
    if sendsApplyDirectly {
      // A refusal here is the store's answer (it was idle: nothing queued could change it), as on the erased route
      // (``anySendUnobserved(_:)``); enqueueing the item again would decide, and count, the refusal twice.
      do {
        if try applyIfIdle(touching: nil, item: { updater }, { updater.updateState(&$0) }) { return succeededHandle }
      } catch {
        return .failed(error)
      }
    }
    return enqueueUpdater(
      updater, apply: { updater.updateState(&$0) }, frame: { [id] in UpdaterFrame<S>(storeID: id, dispatching: U.self) }
    )
  }

  /// Whether a sent updater may be applied on the sending thread if the store is idle: no interceptor
  /// (their chain is async), no activity tracking, and not called from inside an updater (the lock is
  /// held there).
  @inlinable
  var sendsApplyDirectly: Bool {
    !hasInterceptors && !tracksActivity && !owner.isCurrentThread
  }

  /// Enqueues a side effect now and returns its handle.
  @usableFromInline func send<E: SideEffect>(_ effect: E, context: SideEffectContext<S, D>) -> DispatchHandle<Void>
  where E.StateType == S, E.Dependencies == D {
    guard let dispatchObservers else {
      return enqueueSideEffect(effect) { [self] in try await dispatchUnobserved(effect, context: context) }
    }
    return dispatchObservers.observe(effect) {
      enqueueSideEffect(effect) { [self] in try await dispatchUnobserved(effect, context: context) }
    }
  }

  /// Enqueues a returning side effect now and returns its handle.
  @usableFromInline func send<R: ReturningSideEffect>(_ effect: R, context: any AnySideEffectContext) -> DispatchHandle<
    R.ReturnValue
  > {
    guard let dispatchObservers else {
      return enqueueSideEffect(effect) { [self] in try await dispatchUnobserved(effect, context: context) }
    }
    return dispatchObservers.observe(effect) {
      enqueueSideEffect(effect) { [self] in try await dispatchUnobserved(effect, context: context) }
    }
  }

  /// Enqueues any item now and returns its handle.
  func anySend(_ item: any Dispatchable) -> DispatchHandle<any Sendable> {
    guard let dispatchObservers else { return anySendUnobserved(item) }
    return dispatchObservers.observe(item) { anySendUnobserved(item) }
  }

  /// ``anySend(_:)`` without the dispatch observers (a scope's, observed as the feature sent it).
  func anySendUnobserved(_ item: any Dispatchable) -> DispatchHandle<any Sendable> {
    let kind: ItemKind
    do {
      kind = try Self.classify(item)
    } catch {
      return .failed(error)
    }
    switch kind {
    case .updater(let updater):
      // The typed route, whose handle is read as `any Sendable`: one job, one storage.
      if sendsApplyDirectly {
        do {
          if try applyIfIdle(touching: nil, item: { updater }, { try Self.applyErased(updater, to: &$0) }) {
            return DispatchHandle(erasing: succeededHandle)
          }
        } catch {
          return .failed(error)
        }
      }
      return DispatchHandle(
        erasing: enqueueUpdater(
          item, apply: { try Self.applyErased(updater, to: &$0) }, frame: { [id] in UpdaterFrame<S>(storeID: id) }))
    case .sideEffect:
      return enqueueSideEffect(item) { [self] in try await anyDispatchUnobserved(item) }
    }
  }

  /// Runs a sent updater's interceptor chain while the pump holds the turn; returns the items interceptors
  /// substituted.
  nonisolated(nonsending) func applySentUpdater(_ item: any Dispatchable, frame: UpdaterFrame<S>) async throws
    -> [any Dispatchable]
  {
    do {
      try await runChainHoldingTurn(item, frame: frame, holder: TaskIdentity.current)
    } catch {
      await closeChain(frame)
      throw error
    }
    let (waiter, redirects) = withLock { core in (core.closeChain(frame), frame.redirects) }
    guard let waiter else { return redirects }
    await waitForChainClose(waiter)
    return withLock { _ in frame.redirects }
  }

  /// Enqueues a sent updater, `item` (whose change is `apply`): the one route of every sent updater, typed or
  /// type-erased (whose handle reads this one's storage, ``DispatchHandle/init(erasing:)``), at the root or through a
  /// scope. Without interceptors it is committed synchronously when the pump reaches it; with them, its chain runs
  /// while the pump holds the turn, and the items of the other kind that interceptors substituted are dispatched
  /// after.
  @usableFromInline func enqueueUpdater(
    _ item: any Dispatchable, apply: @escaping @Sendable (inout S) throws -> Void,
    frame: @escaping @Sendable () -> UpdaterFrame<S>
  ) -> DispatchHandle<Void> {
    let storage = HandleStorage<Void>.make()
    let handle = DispatchHandle(storage: storage)
    guard hasInterceptors else {
      enqueue(
        item, isUpdater: true, handle: storage,
        work: .synchronous({ [self] in
          do {
            try commitHoldingTurn(item, apply)
            handle.complete(.success(()))
          } catch {
            handle.complete(.failure(error))
          }
        }))
      return handle
    }
    enqueue(
      item, isUpdater: true, handle: storage,
      work: .asynchronous({ [self] in
        let redirects: [any Dispatchable]
        do {
          redirects = try await applySentUpdater(item, frame: frame())
        } catch {
          handle.complete(.failure(error))
          return
        }
        guard !redirects.isEmpty else {
          handle.complete(.success(()))
          return
        }
        // This task holds the turn, so the substituted items run in a task of their own, after it is released.
        let started = startOwnedTask(id: makeID()) { [self] in
          do {
            try await dispatchRedirects(redirects, depth: 0)
            handle.complete(.success(()))
          } catch {
            handle.complete(.failure(error))
          }
        }
        if !started {
          handle.complete(.failure(StoreError.storeShutDown))
        }
      }))
    return handle
  }

  /// Enqueues a sent side effect, which runs `work` in a store-owned task.
  func enqueueSideEffect<Value: Sendable>(
    _ item: any Dispatchable, run work: @escaping @Sendable () async throws -> Value
  ) -> DispatchHandle<Value> {
    let storage = HandleStorage<Value>.make()
    let handle = DispatchHandle(storage: storage)
    enqueue(
      item, isUpdater: false, handle: storage,
      work: .asynchronous({
        do {
          handle.complete(.success(try await work()))
        } catch {
          handle.complete(.failure(error))
        }
      }))
    return handle
  }

  /// Puts a job into the mailbox, or starts it right away if nothing is ahead of it.
  func enqueue<Value: Sendable>(
    _ item: any Dispatchable, isUpdater: Bool, handle: HandleStorage<Value>, work: MailboxJob.Work
  ) {
    guard !owner.isCurrentThread else {
      handle.fail(StoreError.dispatchFromStateUpdater(typeName(of: item)))
      return
    }
    // The sent item whose work sends this one, if any: a cancellation by id from that work reaches this item.
    let sender = isUpdater ? nil : SentItemOrigin.current
    // On a recorded store, the side effect that sends the item is its cause, wherever and whenever the store runs it
    // (as when it applies a sent updater at once, in the sender's task).
    let work = recordsEffects.isSet ? Self.carryingCause(work) : work
    let (job, decision) = withLock { core -> (MailboxJob, Mailbox<CoreState<S, D>.Waiter, MailboxJob>.JobArrival) in
      let job = MailboxJob(
        id: core.makeID(), isUpdater: isUpdater, store: self, handle: handle, work: work,
        tracksActivity: tracksActivity)
      if tracksActivity { core.lifecycle.beginActivity(.job(job.id), carrier: nil) }
      let (arrival, decision) = core.mailbox.arriveJob(job)
      if case .queued(let position, _) = decision { job.position = position }
      if case .fail = decision { return (job, decision) }
      if !isUpdater {
        let origin = SentItemOrigin(arrival: arrival, sender: sender)
        job.origin = origin
        core.liveSentItems[arrival] = origin
      }
      // Set under the store lock, before anyone can cancel or complete the job.
      handle.setControl(job)
      return (job, decision)
    }
    switch decision {
    case .queued(_, let waitingCount):
      configuration.onMailboxEnqueue?(waitingCount)
    case .startPump:
      startPump(with: job)
    case .startSideEffect:
      startSideEffectJob(job)
    case .fail(let error):
      job.fail(error)
    }
  }

  /// `work`, run with the recorded cause of the calling task (the side effect sending it) bound again.
  static func carryingCause(_ work: MailboxJob.Work) -> MailboxJob.Work {
    guard let cause = RecorderCause.local.get() else { return work }
    switch work {
    case .synchronous(let run):
      return .synchronous { RecorderCause.local.withValue(cause) { run() } }
    case .asynchronous(let run):
      return .asynchronous { await RecorderCause.local.withValue(cause) { await run() } }
    }
  }

  /// Starts a sent side effect in a store-owned task of its own, which carries the item's origin
  /// (``SentItemOrigin``).
  func startSideEffectJob(_ job: MailboxJob) {
    let started = startOwnedTask(id: job.id, runsSideEffect: true) { [self] in
      if job.tracksActivity {
        let carrier = TaskIdentity.current
        withLock { $0.lifecycle.setCarrier(of: .job(job.id), to: carrier) }
      }
      await SentItemOrigin.$current.withValue(job.origin) { await job.run() }
    }
    if !started {
      job.fail(StoreError.storeShutDown)
    }
  }

  /// Cancels a sent job: withdraws it if it is still queued, cancels its task if it is a running side
  /// effect (or as soon as that task exists). A running updater completes.
  @usableFromInline func cancelJob(_ job: MailboxJob) {
    guard !owner.isCurrentThread else {
      // Taking the lock here would deadlock. The handle is marked cancelled already, so an item that has not
      // started never will; a running side effect keeps running.
      runtimeWarning(
        "DispatchHandle.cancel() was called from inside a StateUpdater; a side effect already running was "
          + "not cancelled. Updaters must be pure: cancel from a side effect, a listener or an interceptor.")
      return
    }
    let (withdrawn, task) = withLock { core -> (MailboxJob?, Task<Void, Never>?) in
      if let position = job.position, let withdrawn = core.mailbox.withdrawJob(at: position) {
        return (withdrawn, nil)
      }
      return (nil, core.lifecycle.cancelTask(job.id))
    }
    withdrawn?.fail(CancellationError())
    task?.cancel()
    // Not in the mailbox and not started: handed to a task that has not run it yet, or taken out by a shutdown that
    // fails it once it has unlocked. It never starts (its handle is marked cancelled): its handle fails now, so that
    // it has failed when `cancel()` returns, as for a withdrawn item. (The later failure changes nothing.)
    if withdrawn == nil {
      job.handle.failIfCancelledBeforeStart()
    }
  }

  /// A sent job has finished (run, withdrawn or failed): it no longer counts as in-flight work, and
  /// cancellations by id no longer need to reach it.
  @usableFromInline func jobFinished(_ job: MailboxJob) {
    let actions = withLock { core -> LifecycleActions? in
      if let origin = job.origin { core.liveSentItems[origin.arrival] = nil }
      return job.tracksActivity ? core.lifecycle.endActivity(.job(job.id)) : nil
    }
    if let actions { perform(actions) }
  }

  /// The side effects that have not finished and precede, in program order, a cancellation by id made from
  /// `origin`'s work (from outside a sent item if nil: all of them), for that cancellation to mark: those
  /// that entered the mailbox before `origin`, and those `origin`'s work sent (before the cancellation,
  /// since they are here already).
  func liveSentItems(before origin: SentItemOrigin?) -> [SentItemOrigin] {
    withLock { core in
      guard let origin else { return Array(core.liveSentItems.values) }
      return core.liveSentItems.values.filter { $0.arrival < origin.arrival || $0.sender === origin }
    }
  }

  /// The error to return instead of waiting for the sent job `job`, if the waiting task holds the turn
  /// while the job still waits behind it: in the mailbox, or, for a state updater that has not started,
  /// in the pump's current batch.
  @usableFromInline func deadlockIfWaiting(for job: MailboxJob, isUpdaterNotStarted: Bool) -> StoreError? {
    guard let task = TaskIdentity.current else { return nil }
    return withLock { core in
      guard task == core.mailbox.turnHolder else { return nil }
      let isQueued = job.position.map { core.mailbox.isQueued(at: $0) } ?? false
      guard isUpdaterNotStarted || isQueued else { return nil }
      return .deadlock(
        "this task holds the updater turn and waited for an item it sent, which is queued behind that turn.")
    }
  }

  // MARK: - The pump

  /// Starts a store-owned task that runs sent updaters while holding the turn, until the next entry is
  /// not one.
  func startPump(with job: MailboxJob) {
    // Registered under an identifier of its own, not the first job's: cancelling that job's handle must not
    // cancel the pump, which goes on to run the jobs after it (a running updater completes anyway).
    let started = startOwnedTask(id: makeID()) { [self] in
      var batch = [job]
      let pump = TaskIdentity.current
      withLock { $0.mailbox.turnHolder = pump }
      while !batch.isEmpty {
        for job in batch {
          await job.run()
        }
        let actions = withLock { core in
          let actions = core.releaseTurn(byPump: true)
          if !actions.continuePump.isEmpty {
            core.mailbox.turnHolder = pump
          }
          return actions
        }
        batch = actions.continuePump
        if !actions.isEmpty {
          perform(actions)
        }
      }
    }
    if !started {
      job.fail(StoreError.storeShutDown)
      releaseTurn()
    }
  }
}
