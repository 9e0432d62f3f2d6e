extension StoreCore {
  // MARK: - Sending

  /// Enqueues a state updater now and returns its handle. Without interceptors, on an idle store, it is
  /// applied right here, as an awaited dispatch would be, and the handle has already succeeded.
  @inlinable
  func send<U: StateUpdater>(_ updater: U) -> DispatchHandle<Void> where U.StateType == S {
    if sendsApplyDirectly, applyIfIdle({ updater.updateState(&$0) }) {
      return succeededHandle
    }
    return enqueueUpdater(
      updater, value: (), apply: { updater.updateState(&$0) }, frame: { TypedUpdaterFrame<S, U>() })
  }

  /// Whether a sent updater may be applied on the sending thread if the store is idle: no interceptor
  /// (their chain is async), no activity tracking, and not called from inside an updater (the lock is
  /// held there).
  @inlinable
  var sendsApplyDirectly: Bool {
    !hasInterceptors && !tracksActivity && !owner.isCurrentThread
  }

  /// Enqueues a side effect now and returns its handle.
  @inlinable
  func send<E: SideEffect>(_ effect: E, context: SideEffectContext<S, D>) -> DispatchHandle<Void>
  where E.StateType == S, E.Dependencies == D {
    enqueueSideEffect(effect) { [self] in try await dispatch(effect, context: context) }
  }

  /// Enqueues a returning side effect now and returns its handle.
  @inlinable
  func send<R: ReturningSideEffect>(_ effect: R, context: any AnySideEffectContext) -> DispatchHandle<
    R.ReturnValue
  > {
    enqueueSideEffect(effect) { [self] in try await dispatch(effect, context: context) }
  }

  /// Enqueues any item now and returns its handle.
  @inlinable
  func anySend(_ item: any Dispatchable) -> DispatchHandle<any Sendable> {
    let kind: ItemKind
    do {
      kind = try Self.classify(item)
    } catch {
      return .failed(error)
    }
    switch kind {
    case .updater(let updater):
      if sendsApplyDirectly {
        do {
          if try applyIfIdle({ try Self.applyErased(updater, to: &$0) }) { return succeededAnyHandle }
        } catch {
          return .failed(error)
        }
      }
      return enqueueUpdater(
        item, value: () as any Sendable, apply: { try Self.applyErased(updater, to: &$0) },
        frame: { UpdaterFrame<S>() })
    case .sideEffect:
      return enqueueSideEffect(item) { [self] in try await anyDispatch(item) }
    }
  }

  /// Runs a sent updater's interceptor chain while the pump holds the turn; returns the items interceptors
  /// substituted.
  @inlinable
  func applySentUpdater(_ item: any Dispatchable, frame: UpdaterFrame<S>) async throws -> [any Dispatchable] {
    do {
      try await runChainHoldingTurn(item, frame: frame, holder: TaskIdentity.current)
    } catch {
      withLock { $0.turnFrame = nil }
      throw error
    }
    return withLock { core in
      core.turnFrame = nil
      return frame.redirects
    }
  }

  /// Enqueues a sent updater. Without interceptors it is committed synchronously (`apply`); with them,
  /// `applyThroughChain` runs while the pump holds the turn and returns the items of the other kind that
  /// interceptors substituted.
  @inlinable
  func enqueueUpdater<Value: Sendable>(
    _ item: any Dispatchable, value: Value, apply: @escaping @Sendable (inout S) throws -> Void,
    frame: @escaping @Sendable () -> UpdaterFrame<S>
  ) -> DispatchHandle<Value> {
    let handle = DispatchHandle(storage: HandleStorage<Value>.make())
    guard hasInterceptors else {
      enqueue(
        item, isUpdater: true, handle: handle.storage,
        work: .synchronous({ [self] in
          do {
            try commitHoldingTurn(apply)
            handle.storage.complete(.success(value))
          } catch {
            handle.storage.complete(.failure(error))
          }
        }))
      return handle
    }
    enqueue(
      item, isUpdater: true, handle: handle.storage,
      work: .asynchronous({ [self] in
        let redirects: [any Dispatchable]
        do {
          redirects = try await applySentUpdater(item, frame: frame())
        } catch {
          handle.storage.complete(.failure(error))
          return
        }
        guard !redirects.isEmpty else {
          handle.storage.complete(.success(value))
          return
        }
        // This task holds the turn, so the substituted items run in a task of their own, after it is released.
        let started = startOwnedTask(id: makeID()) { [self] in
          do {
            try await dispatchRedirects(redirects, depth: 0)
            handle.storage.complete(.success(value))
          } catch {
            handle.storage.complete(.failure(error))
          }
        }
        if !started {
          handle.storage.complete(.failure(StoreError.storeShutDown))
        }
      }))
    return handle
  }

  /// Enqueues a sent side effect, which runs `work` in a store-owned task.
  @inlinable
  func enqueueSideEffect<Value: Sendable>(
    _ item: any Dispatchable, run work: @escaping @Sendable () async throws -> Value
  ) -> DispatchHandle<Value> {
    let handle = DispatchHandle(storage: HandleStorage<Value>.make())
    enqueue(
      item, isUpdater: false, handle: handle.storage,
      work: .asynchronous({
        do {
          handle.storage.complete(.success(try await work()))
        } catch {
          handle.storage.complete(.failure(error))
        }
      }))
    return handle
  }

  /// Puts a job into the mailbox, or starts it right away if nothing is ahead of it.
  @inlinable
  func enqueue<Value: Sendable>(
    _ item: any Dispatchable, isUpdater: Bool, handle: HandleStorage<Value>, work: MailboxJob.Work
  ) {
    guard !owner.isCurrentThread else {
      handle.fail(StoreError.dispatchFromStateUpdater(typeName(of: item)))
      return
    }
    let (job, decision) = withLock { core -> (MailboxJob, EnqueueDecision) in
      let job = MailboxJob(
        id: core.makeID(), isUpdater: isUpdater, store: self, handle: handle, work: work,
        tracksActivity: tracksActivity)
      if tracksActivity { core.activeWork += 1 }
      if let error = core.phase.dispatchError { return (job, .fail(error)) }
      // Set under the store lock, before anyone can cancel or complete the job.
      handle.setControl(job)
      if core.canTakeTurnNow {
        if isUpdater {
          core.mailbox.takeTurn(holder: nil)
          return (job, .startPump)
        }
        return (job, .startSideEffect)
      }
      core.mailbox.enqueue(.job(job))
      return (job, .queued(waitingCount: core.mailbox.entries.count))
    }
    switch decision {
    case .queued(let waitingCount):
      configuration.onMailboxEnqueue?(waitingCount)
    case .startPump:
      startPump(with: job)
    case .startSideEffect:
      if !startOwnedTask(id: job.id, { await job.run() }) {
        job.fail(StoreError.storeShutDown)
      }
    case .fail(let error):
      job.fail(error)
    }
  }

  /// Cancels a sent job: withdraws it if it is still queued, cancels its task if it is a running side
  /// effect. A running updater completes.
  @usableFromInline
  func cancelJob(_ id: UInt64) {
    let (entry, task) = withLock { core -> (MailboxEntry?, Task<Void, Never>?) in
      if let entry = core.mailbox.withdraw(id) { return (entry, nil) }
      if case .running(let task) = core.ownedTasks[id] { return (nil, task) }
      return (nil, nil)
    }
    entry?.fail(CancellationError())
    task?.cancel()
  }

  /// The error to return instead of waiting for the sent job `id`, if the waiting task holds the turn
  /// while the job still waits behind it: in the mailbox, or, for a state updater that has not started,
  /// in the pump's current batch.
  @usableFromInline
  func deadlockIfWaiting(forJob id: UInt64, isUpdaterNotStarted: Bool) -> StoreError? {
    guard let task = TaskIdentity.current else { return nil }
    return withLock { core in
      guard task == core.mailbox.turnHolder, isUpdaterNotStarted || core.mailbox.isPending(id) else { return nil }
      return .deadlock(
        "this task holds the updater turn and waited for an item it sent, which is queued behind that turn.")
    }
  }

  // MARK: - The pump

  /// Starts a store-owned task that runs sent updaters while holding the turn, until the next entry is
  /// not one.
  @inlinable
  func startPump(with job: MailboxJob) {
    // Registered under an identifier of its own, not the first job's: cancelling that job's handle must not
    // cancel the pump, which goes on to run the jobs after it (a running updater completes anyway).
    let started = startOwnedTask(id: withLock { $0.makeID() }) { [self] in
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
        if !actions.resumptions.isEmpty || actions.startPump != nil || !actions.startSideEffects.isEmpty {
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
