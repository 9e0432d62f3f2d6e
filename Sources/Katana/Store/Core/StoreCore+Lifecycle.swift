extension StoreCore {
  @usableFromInline typealias LifecycleActions = Lifecycle<CoreState<S, D>.Waiter, Task<Void, Never>>.Actions

  // MARK: - Store-owned tasks

  /// Starts a detached task the store owns: shutdown cancels it, and `Store.shutdown()` waits for it.
  /// Returns false if the store has shut down.
  ///
  /// Detached, so that it inherits neither the caller's actor nor its task-locals (in particular no
  /// dispatch frame).
  ///
  /// - Parameter runsSideEffect: Whether the task runs a sent side effect (started with
  ///   `StoreConfiguration.sideEffectTaskStarter` when set).
  @discardableResult
  func startOwnedTask(id: UInt64, runsSideEffect: Bool = false, _ body: @escaping @Sendable () async -> Void)
    -> Bool
  {
    guard withLock({ $0.lifecycle.reserveTask(id) }) else { return false }
    let operation: @Sendable () async -> Void = { [self] in
      let identity = TaskIdentity.current
      withLock { $0.lifecycle.taskStarted(id, identity: identity) }
      await body()
      perform(withLock { $0.lifecycle.taskFinished(id) })
    }
    let starter = (runsSideEffect ? configuration.sideEffectTaskStarter : nil) ?? configuration.ownedTaskStarter
    let task = starter?(operation) ?? Task.detached(priority: Task.currentPriority, operation: operation)
    // A cancellation that arrived while the task was only reserved (or a shutdown) applies now.
    withLock { $0.lifecycle.attachTask(id, task) }?.cancel()
    return true
  }

  /// The number of store-owned tasks still registered (tests check that none leak).
  var ownedTaskCount: Int {
    withLock { $0.lifecycle.ownedTaskCount }
  }

  /// The number of task identities the store keeps (tests check that a store at rest keeps none; see
  /// ``TaskIdentity``).
  var retainedTaskIdentities: Int {
    withLock { core in
      var count = core.lifecycle.ownedTasks.values.filter { $0.identity != nil }.count
      if core.lifecycle.startupTask != nil { count += 1 }
      if core.mailbox.turnHolder != nil { count += 1 }
      count += core.lifecycle.activity.values.filter { $0.task != nil }.count
      count += core.lifecycle.handOffs.count + core.lifecycle.tokenCarriers.count
      for offset in 0..<core.mailbox.entries.count {
        if case .updater(_, let holder?) = core.mailbox.entries[offset] {
          _ = holder
          count += 1
        }
      }
      return count
    }
  }

  /// Performs what a lifecycle transition returned.
  func perform(_ actions: LifecycleActions) {
    for resumption in actions.resumptions {
      resumption.perform()
    }
    for task in actions.cancellations {
      task.cancel()
    }
  }

  // MARK: - Start-up

  func makeID() -> UInt64 {
    withLock { $0.makeID() }
  }

  @usableFromInline func setDependencies(_ dependencies: D) {
    withLock { $0.dependencies = dependencies }
  }

  /// A context for side effects and interceptors.
  func makeContext() throws -> SideEffectContext<S, D> {
    let dependencies = withLock { $0.dependencies }
    guard let dependencies else { throw StoreError.storeShutDown }
    return SideEffectContext(core: self, dependencies: dependencies)
  }

  /// Runs the state initializer in a store-owned task, then initialises the interceptors and opens the
  /// mailbox.
  ///
  /// - Parameter chainEnd: The interceptor chain's final `next`; see ``makeChainEnd()``.
  @usableFromInline func start(
    stateInitializer: @escaping @Sendable () async throws -> S, interceptors: [StoreInterceptor],
    chainEnd: ChainTail
  ) {
    startOwnedTask(id: makeID()) { [self, runner = configuration.stateInitializerRunner] in
      let identity = TaskIdentity.current
      withLock { $0.lifecycle.startupBegan(identity) }
      do {
        let state: S
        if let runner {
          // Start-up then waits for the runner's executor (Katana 6's main queue), as Katana 6's did.
          state = try await runner.run { try await stateInitializer() }
        } else {
          state = try await stateInitializer()
        }
        finishStartup(state: state, interceptors: interceptors, chainEnd: chainEnd)
      } catch {
        failStartup(error)
      }
    }
  }

  /// Starts a store built from a value, which it already holds, synchronously: initialises the interceptors
  /// and opens the mailbox (what the dependency container dispatched in `init` runs first, in order).
  @usableFromInline func startNow(interceptors: [StoreInterceptor], chainEnd: ChainTail) {
    finishStartup(state: nil, interceptors: interceptors, chainEnd: chainEnd)
  }

  /// Makes the store ready: with `state` (the state initializer's result) as its state, if given.
  func finishStartup(state: S?, interceptors: [StoreInterceptor], chainEnd: ChainTail) {
    var replaced = state
    let started = withLock { core -> (D?, [StateSubscriber<S>], S)? in
      guard case .starting = core.lifecycle.phase else { return nil }
      guard replaced != nil else { return (core.dependencies, [], core.state) }
      swap(&core.state, &replaced!)
      return (core.dependencies, core.observers.subscribers, core.state)
    }
    // `replaced` (the state before start-up) is released here, outside the lock.
    replaced = nil
    guard let (dependencies, stateStreams, initial) = started, let dependencies else { return }
    // Observers that started before the store was ready began with `S()`: they get the initial state now,
    // before any commit can happen (the mailbox opens below). Streams of states and projections yield it;
    // listeners and streams of changes only compare the next change with it (it is not a change).
    for subscriber in stateStreams where subscriber.isSubscribed.isSet {
      subscriber.deliverStartupState(initial)
    }
    var chain: StoreInterceptorNext = CoreState<S, D>.noChain
    var opaqueChain: OpaqueChain<Void>?
    if hasInterceptors {
      // User code (the interceptors' outer and middle closures) runs here, outside the lock, once: side effects run
      // the opaque chain through its substituted head (one reabstraction thunk). The dispatch interceptors come
      // after the closure interceptors, before the store's end.
      let context = SideEffectContext(core: self, dependencies: dependencies)
      let dispatchInterceptors = configuration.dispatchInterceptors
      if usesPlainInterceptorChain {
        let final = composeDispatchInterceptors(dispatchInterceptors, context: context, tail: chainEnd)
        chain = composeInterceptors(interceptors, context: context, final: final)
      } else {
        let composed = composeOpaqueChain(
          interceptors, dispatchInterceptors: dispatchInterceptors, context: context, tail: chainEnd, done: ())
        opaqueChain = composed
        chain = composed.head
      }
    }
    let opened = withLock { core -> (LifecycleActions, Mailbox<CoreState<S, D>.Waiter, MailboxJob>.Actions)? in
      guard let actions = core.finishStartup() else { return nil }
      core.chain = chain
      core.opaqueChain = opaqueChain
      readyFlag.set(true)
      return (actions, core.mailbox.open())
    }
    // If the store shut down meanwhile, `chain` (and the interceptors it captures) is released here.
    guard let (lifecycle, mailbox) = opened else { return }
    perform(lifecycle)
    perform(mailbox)
  }

  func failStartup(_ error: any Error) {
    let failed = withLock { core -> (LifecycleActions, Mailbox<CoreState<S, D>.Waiter, MailboxJob>.Actions?)? in
      guard let actions = core.failStartup(error) else { return nil }
      return (actions, core.mailbox.close(.startupFailed(error)))
    }
    guard let (lifecycle, mailbox) = failed else { return }
    if let mailbox { perform(mailbox) }
    perform(lifecycle)
  }

  /// Waits until the store is ready.
  nonisolated(nonsending) func waitUntilReady() async throws {
    switch withLock({ $0.lifecycle.waitUntilReady() }) {
    case .proceed:
      return
    case .fail(let error):
      throw error
    case .wait(let waiter):
      try await suspend(
        install: { core, continuation in core.lifecycle.suspendReadinessWaiter(waiter, on: continuation) },
        cancel: { core in core.lifecycle.cancelReadinessWaiter(waiter)?.afterUnlock })
    }
  }

  // MARK: - Shutdown

  /// What shutdown takes out under the lock, to act on and release outside it.
  private struct ShutdownWork {
    var lifecycle: Lifecycle<CoreState<S, D>.Waiter, Task<Void, Never>>.Shutdown
    var mailbox: Mailbox<CoreState<S, D>.Waiter, MailboxJob>.Actions?
    var listeners: [ListenerEntry<S>]
    var subscribers: [StateSubscriber<S>]
    var hooks: [CommitHook<S>]
    var handlers: [@Sendable () -> Void]
    var chain: StoreInterceptorNext
    var opaqueChain: OpaqueChain<Void>?
  }

  /// Registers `handler` to run once when the store shuts down (immediately if it already has).
  func addShutdownHandler(_ handler: @escaping @Sendable () -> Void) {
    let runNow = withLock { core -> Bool in
      if case .shutDown = core.lifecycle.phase { return true }
      core.shutdownHandlers.append(handler)
      return false
    }
    if runNow {
      handler()
    }
  }

  /// Shuts the store down: fails everything waiting, finishes streams, drops listeners, interceptors and
  /// attachments, cancels store-owned tasks (the calling task last, if it is one). Idempotent. Returns
  /// whether this call did it (only that call then waits for the store's tasks, see
  /// ``waitUntilOwnedTasksEnd()``).
  @discardableResult
  func shutdown() -> Bool {
    let caller = TaskIdentity.current
    let work = withLock { core -> ShutdownWork? in
      guard let (lifecycle, observers, hooks) = core.shutdown(caller: caller) else { return nil }
      readyFlag.set(false)
      defer {
        core.shutdownHandlers = []
        core.chain = CoreState<S, D>.noChain
        core.opaqueChain = nil
      }
      return ShutdownWork(
        lifecycle: lifecycle, mailbox: core.mailbox.close(.storeShutDown), listeners: observers.listeners,
        subscribers: observers.subscribers, hooks: hooks, handlers: core.shutdownHandlers, chain: core.chain,
        opaqueChain: core.opaqueChain)
    }
    guard let work else { return false }
    let attachments = self.attachments.withLock { attachments in
      defer { attachments = nil }
      return attachments
    }
    if let mailbox = work.mailbox { perform(mailbox) }
    perform(work.lifecycle.actions)
    // A subscriber still taking its first value ends once that value and what was queued meanwhile are in.
    for subscriber in work.subscribers {
      subscriber.finishAtShutdown()
    }
    if work.lifecycle.callerIsOwned {
      withUnsafeCurrentTask { $0?.cancel() }
    }
    for handler in work.handlers {
      handler()
    }
    // The chain (and the interceptors it captures), listeners, subscribers, commit hooks and attachments are
    // released here, outside the lock: their deinit may run user code.
    withExtendedLifetime((work, attachments)) {}
    return true
  }

  /// Waits until every store-owned task has ended, except the calling task if it is one.
  nonisolated(nonsending) func waitUntilOwnedTasksEnd() async {
    let caller = TaskIdentity.current
    guard case .wait(let waiter) = withLock({ $0.lifecycle.waitUntilDrained(caller: caller) }) else { return }
    _ = try? await suspend { core, continuation in core.lifecycle.suspendDrainWaiter(waiter, on: continuation) }
  }
}
