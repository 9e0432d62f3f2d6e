extension StoreCore {
  // MARK: - The turn

  @usableFromInline
  enum InlineOutcome {
    /// Applied; nobody observes the store.
    case applied
    /// Applied; the caller holds the turn and must deliver the commit, then release the turn.
    case appliedHoldingTurn(Commit<S>)
    /// The store is busy, not ready, or gone: take the slow path.
    case mustWait
  }

  /// Applies `mutate` right away if the store is ready and nothing is ahead in the mailbox, delivers the
  /// change to observers, and returns true: the hot path, one lock acquisition without observers. Returns
  /// false if the caller must wait.
  @inlinable @inline(__always)
  func applyIfIdle(_ mutate: (inout S) throws -> Void) rethrows -> Bool {
    let outcome = try withLockRunningUpdater { core -> InlineOutcome in
      guard core.canTakeTurnNow else { return .mustWait }
      guard let commit = try core.commit(mutate) else { return .applied }
      core.mailbox.takeTurn(holder: nil)
      return .appliedHoldingTurn(commit)
    }
    switch outcome {
    case .applied:
      return true
    case .appliedHoldingTurn(let commit):
      commit.deliver()
      releaseTurn()
      return true
    case .mustWait:
      return false
    }
  }

  /// The slow path of an updater dispatch: takes the turn (waiting for it if needed), applies the updater
  /// (through the interceptor chain if there is one), releases the turn, then dispatches any substituted
  /// items. Only waiting and the chain itself are asynchronous.
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatchUpdaterWaitingForTurn(
    _ item: any Dispatchable, frame: UpdaterFrame<S>, apply: (inout S) throws -> Void, depth: Int
  ) async throws {
    let holder = TaskIdentity.current
    // With interceptors, taking the turn also installs the frame (one critical section instead of two).
    let frameInstalled = try await acquireTurn(holder: holder, installing: hasInterceptors ? frame : nil)
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
      try await runChainHoldingTurn(item, frame: frame, holder: holder, frameInstalled: frameInstalled)
    } catch {
      releaseTurn()
      throw error
    }
    // Reading the redirects and releasing the turn in one critical section closes the frame: a `next`
    // called later fails instead of being lost.
    let (redirects, actions) = withLock { core in (frame.redirects, core.releaseTurn(byPump: false)) }
    if !actions.isEmpty {
      perform(actions)
    }
    if !redirects.isEmpty {
      try await dispatchRedirects(redirects, depth: depth)
    }
  }

  /// Runs the interceptor chain for an updater while holding the turn; the chain's final `next` finds
  /// `frame` in the locked state. Does not release the turn.
  @inlinable @inline(__always)
  nonisolated(nonsending) func runChainHoldingTurn(
    _ item: any Dispatchable, frame: UpdaterFrame<S>, holder: TaskIdentity?, frameInstalled: Bool = false
  ) async throws {
    let chain = try withLock { core -> StoreInterceptorNext in
      if let error = core.phase.dispatchError { throw error }
      if !frameInstalled {
        core.turnFrame = frame
        core.mailbox.turnHolder = holder
      }
      return core.chain
    }
    if SideEffectFrame.current == nil {
      try await chain(item)
    } else {
      // Dispatched from an interceptor running for a side effect: the side effect's frame, inherited
      // through the task-local, must not capture this updater's `next`.
      try await SideEffectFrame.withoutFrame { try await chain(item) }
    }
  }

  /// Commits `mutate` while holding the turn, and delivers the change to observers.
  @inlinable
  func commitHoldingTurn(_ mutate: (inout S) throws -> Void) throws {
    let commit = try withLockRunningUpdater { core in
      if let error = core.phase.dispatchError { throw error }
      return try core.commit(mutate)
    }
    commit?.deliver()
  }

  /// Waits until the calling task holds the turn.
  ///
  /// - Parameter frame: A chain frame to install if the turn is granted at once, in the same critical
  ///   section.
  /// - Returns: Whether `frame` was installed.
  /// - Throws: `CancellationError` if the caller is cancelled before its turn comes (the updater is then
  ///   withdrawn), ``StoreError/deadlock(_:)`` if the caller is the one holding the turn or running the
  ///   state initializer, the phase's error once the store has failed or shut down.
  @inlinable @inline(__always)
  nonisolated(nonsending) func acquireTurn(holder: TaskIdentity?, installing frame: UpdaterFrame<S>? = nil)
    async throws -> Bool
  {
    let decision = withLock { core -> Admission<Void> in
      if let error = core.phase.dispatchError { return .fail(error) }
      if core.canTakeTurnNow {
        core.mailbox.takeTurn(holder: holder)
        core.turnFrame = frame
        return .proceed(())
      }
      if let error = deadlock(for: holder, in: core) { return .fail(error) }
      return .wait(core.makeID())
    }
    switch decision {
    case .proceed:
      return frame != nil
    case .fail(let error):
      throw error
    case .wait(let id):
      try await waitInMailbox(id: id) { core, continuation in
        if core.canTakeTurnNow {
          core.mailbox.takeTurn(holder: holder)
          return true
        }
        core.mailbox.enqueue(.updater(id: id, task: holder, continuation: continuation))
        return false
      }
      return false
    }
  }

  /// The error to throw instead of waiting for the turn, if waiting from `task` could never end.
  @inlinable
  func deadlock(for task: TaskIdentity?, in core: CoreState<S, D>) -> StoreError? {
    guard let task else { return nil }
    if task == core.mailbox.turnHolder {
      return .deadlock(
        "this task holds the updater turn (it is running an interceptor for a state updater) and waited for "
          + "another state updater of the same store, which can only run after the turn is released.")
    }
    if task == core.startupTask {
      return .deadlock(
        "the store's state initializer dispatched to its own store and waited; dispatches wait until the "
          + "initializer has returned.")
    }
    return nil
  }

  /// Suspends until the mailbox resumes the caller.
  ///
  /// - Parameter enqueue: Runs under the lock once the caller is ready to suspend. Returns true to resume
  ///   the caller right away (the situation changed since the caller decided to wait), or enqueues an entry
  ///   holding the continuation and returns false.
  @inlinable
  nonisolated(nonsending) func waitInMailbox(
    id: UInt64,
    enqueue: @escaping (inout CoreState<S, D>, UnsafeContinuation<Void, any Error>) -> Bool
  ) async throws {
    try await withTaskCancellationHandler {
      try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
        var waitingCount = 0
        let immediate: Result<Void, any Error>? = withLock { core in
          if let error = core.phase.dispatchError { return .failure(error) }
          if Task.isCancelled { return .failure(CancellationError()) }
          if enqueue(&core, continuation) { return .success(()) }
          waitingCount = core.mailbox.entries.count
          return nil
        }
        if let immediate {
          continuation.resume(with: immediate)
        } else {
          configuration.onMailboxEnqueue?(waitingCount)
        }
      }
    } onCancel: {
      withdraw(id)
    }
  }

  /// Withdraws the mailbox entry `id` if it has not started, failing its dispatcher with
  /// `CancellationError`.
  @inlinable
  func withdraw(_ id: UInt64) {
    let entry = withLock { $0.mailbox.withdraw(id) }
    entry?.fail(CancellationError())
  }

  /// Releases the turn held by an awaited dispatch.
  @inlinable
  func releaseTurn() {
    let actions = withLock { $0.releaseTurn(byPump: false) }
    if !actions.isEmpty {
      perform(actions)
    }
  }

  @inlinable
  func perform(_ actions: MailboxActions) {
    for continuation in actions.resumptions {
      continuation.resume()
    }
    if let job = actions.startPump {
      startPump(with: job)
    }
    for job in actions.startSideEffects {
      if !startOwnedTask(id: job.id, job.run) {
        job.fail(StoreError.storeShutDown)
      }
    }
  }

  /// Waits, if the store is still starting, until side effects may start; returns the interceptor chain.
  @inlinable
  nonisolated(nonsending) func chainOnceSideEffectsMayStart() async throws -> StoreInterceptorNext? {
    let holder = TaskIdentity.current
    let decision = withLock { core -> Admission<StoreInterceptorNext?> in
      switch core.phase {
      case .ready: return .proceed(hasInterceptors ? core.chain : nil)
      case .failed, .shutDown: return .fail(core.phase.dispatchError ?? .storeShutDown)
      case .starting:
        if let error = deadlock(for: holder, in: core) { return .fail(error) }
        return .wait(core.makeID())
      }
    }
    switch decision {
    case .proceed(let chain):
      return chain
    case .fail(let error):
      throw error
    case .wait(let id):
      try await waitInMailbox(id: id) { core, continuation in
        // Start right away only if nothing dispatched earlier is still waiting.
        if core.canTakeTurnNow { return true }
        core.mailbox.enqueue(.sideEffect(id: id, continuation: continuation))
        return false
      }
      return hasInterceptors ? withLock { $0.chain } : nil
    }
  }

  // MARK: - The chain's final `next`

  /// The end of the interceptor chain: handles what interceptors hand to `next`.
  @inlinable @inline(__always)
  nonisolated(nonsending) func handleFromChain(_ item: any Dispatchable) async throws {
    if let frame = SideEffectFrame.current, frame.storeID == id {
      try await handleInSideEffectChain(item, frame: frame)
    } else {
      try handleInUpdaterChain(item)
    }
  }

  @inlinable
  nonisolated(nonsending) func handleInSideEffectChain(_ item: any Dispatchable, frame: SideEffectFrame)
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
      let value = try await SideEffectFrame.withoutFrame {
        try await runBody { try await effect.anySideEffect(context) }
      }
      frame.setValue(value)
    }
  }

  @inlinable
  func handleInUpdaterChain(_ item: any Dispatchable) throws {
    let attempt = try withLockRunningUpdater { core -> ChainAttempt in
      guard let frame = core.turnFrame else { throw StoreError.nextCalledOutOfScope(typeName(of: item)) }
      if let error = core.phase.dispatchError { throw error }
      var applied = false
      let commit = core.commitIfApplies { state in
        applied = frame.applyIfDispatchedType(item, to: &state)
        return applied
      }
      return applied ? .done(commit) : .notDispatchedType(frame)
    }
    switch attempt {
    case .done(let commit):
      commit?.deliver()
    case .notDispatchedType(let frame):
      // Substituted items are rare: classify them outside the lock, then apply or record them.
      switch try Self.classify(item) {
      case .sideEffect:
        try withLock { core in
          guard core.turnFrame === frame else { throw StoreError.nextCalledOutOfScope(typeName(of: item)) }
          frame.redirects.append(item)
        }
      case .updater(let updater):
        let commit = try withLockRunningUpdater { core in
          guard core.turnFrame === frame else { throw StoreError.nextCalledOutOfScope(typeName(of: item)) }
          if let error = core.phase.dispatchError { throw error }
          return try core.commit { try Self.applyErased(updater, to: &$0) }
        }
        commit?.deliver()
      }
    }
  }
}
