extension StoreCore {
  /// What shutdown collects under the lock, to act on outside it.
  private struct ShutdownWork {
    var entries: [MailboxEntry]
    var waiters: [UnsafeContinuation<Void, any Error>]
    var subscribers: [StateSubscriber<S>]
    var tasks: [Task<Void, Never>]
    var handlers: [@Sendable () -> Void]
    var chain: StoreInterceptorNext
  }

  // MARK: - Store-owned tasks

  /// Starts a detached task the store owns: shutdown cancels it. Returns false if the store has shut down.
  ///
  /// Detached, so that it inherits neither the caller's actor nor its task-locals (in particular no
  /// side-effect frame).
  @inlinable
  @discardableResult
  func startOwnedTask(id: UInt64, _ body: @escaping @Sendable () async -> Void) -> Bool {
    let reserved = withLock { core -> Bool in
      if case .shutDown = core.phase { return false }
      core.ownedTasks[id] = .reserved
      if tracksActivity { core.activeWork += 1 }
      return true
    }
    guard reserved else { return false }
    let operation: @Sendable () async -> Void = { [self] in
      let identity = TaskIdentity.current
      withLock { core in core.ownedTaskIdentities[id] = identity }
      await body()
      withLock { core in
        core.ownedTasks.removeValue(forKey: id)
        core.ownedTaskIdentities.removeValue(forKey: id)
      }
      if tracksActivity { endActivity() }
    }
    let task =
      configuration.ownedTaskStarter?(operation) ?? Task.detached(priority: Task.currentPriority, operation: operation)
    let cancelNow = withLock { core -> Bool in
      if case .shutDown = core.phase { return true }
      if core.ownedTasks[id] != nil {
        core.ownedTasks[id] = .running(task)
      }
      return false
    }
    if cancelNow {
      task.cancel()
    }
    return true
  }

  /// The number of store-owned tasks still registered (tests check that none leak).
  var ownedTaskCount: Int {
    withLock { $0.ownedTasks.count }
  }

  // MARK: - Lifecycle

  @inlinable
  func makeID() -> UInt64 {
    withLock { $0.makeID() }
  }

  @usableFromInline
  func setDependencies(_ dependencies: D) {
    withLock { $0.dependencies = dependencies }
  }

  /// A context for side effects and interceptors.
  @inlinable
  func makeContext() throws -> SideEffectContext<S, D> {
    let dependencies = withLock { $0.dependencies }
    guard let dependencies else { throw StoreError.storeShutDown }
    return SideEffectContext(core: self, dependencies: dependencies)
  }

  /// Runs the state initializer in a store-owned task, then initialises the interceptors and opens the
  /// mailbox.
  @inlinable
  func start(stateInitializer: @escaping Store<S, D>.StateInitializer, interceptors: [StoreInterceptor]) {
    startOwnedTask(id: makeID()) { [self, runner = configuration.stateInitializerRunner] in
      withLock { $0.startupTask = TaskIdentity.current }
      do {
        let state: S
        if let runner {
          // Start-up then waits for the runner's executor (Katana 6's main queue), as Katana 6's did.
          state = try await runner.run { try await stateInitializer() }
        } else {
          state = try await stateInitializer()
        }
        finishStartup(state: state, interceptors: interceptors)
      } catch {
        failStartup(error)
      }
    }
  }

  @inlinable
  func finishStartup(state: S, interceptors: [StoreInterceptor]) {
    let dependencies = withLock { core -> D? in
      guard case .starting = core.phase else { return nil }
      core.state = state
      return core.dependencies
    }
    guard let dependencies else { return }
    var chain: StoreInterceptorNext = CoreState<S, D>.noChain
    if !interceptors.isEmpty {
      // User code (the interceptors' outer and middle closures) runs here, outside the lock.
      let context = SideEffectContext(core: self, dependencies: dependencies)
      chain = composeInterceptors(interceptors, context: context) { [self] item in
        try await handleFromChain(item)
      }
    }
    let opened = withLock { core -> (MailboxActions, [UnsafeContinuation<Void, any Error>])? in
      guard case .starting = core.phase else { return nil }
      core.chain = chain
      core.phase = .ready
      readyFlag.set(true)
      core.startupTask = nil
      let waiters = Array(core.readinessWaiters.values)
      core.readinessWaiters = [:]
      return (core.mailbox.advance(byPump: false), waiters)
    }
    guard let (actions, waiters) = opened else { return }
    for waiter in waiters {
      waiter.resume()
    }
    perform(actions)
  }

  @usableFromInline
  func failStartup(_ error: any Error) {
    let failed = withLock { core -> ([MailboxEntry], [UnsafeContinuation<Void, any Error>])? in
      guard case .starting = core.phase else { return nil }
      core.phase = .failed(error)
      core.startupTask = nil
      let waiters = Array(core.readinessWaiters.values)
      core.readinessWaiters = [:]
      return (core.mailbox.removeAll(), waiters)
    }
    guard let (entries, waiters) = failed else { return }
    let storeError = StoreError.startupFailed(error)
    for entry in entries {
      entry.fail(storeError)
    }
    for waiter in waiters {
      waiter.resume(throwing: storeError)
    }
  }

  /// Waits until the store is ready.
  @inlinable
  nonisolated(nonsending) func waitUntilReady() async throws {
    let decision = withLock { core -> Admission<Void> in
      switch core.phase {
      case .ready: return .proceed(())
      case .starting: return .wait(core.makeID())
      case .failed, .shutDown: return .fail(core.phase.dispatchError ?? .storeShutDown)
      }
    }
    switch decision {
    case .proceed:
      return
    case .fail(let error):
      throw error
    case .wait(let id):
      try await withTaskCancellationHandler {
        try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
          let immediate: Result<Void, any Error>? = withLock { core in
            switch core.phase {
            case .ready: return .success(())
            case .failed, .shutDown: return .failure(core.phase.dispatchError ?? .storeShutDown)
            case .starting:
              if Task.isCancelled { return .failure(CancellationError()) }
              core.readinessWaiters[id] = continuation
              return nil
            }
          }
          if let immediate {
            continuation.resume(with: immediate)
          }
        }
      } onCancel: {
        let waiter = withLock { $0.readinessWaiters.removeValue(forKey: id) }
        waiter?.resume(throwing: CancellationError())
      }
    }
  }

  /// Registers `handler` to run once when the store shuts down (immediately if it already has).
  func addShutdownHandler(_ handler: @escaping @Sendable () -> Void) {
    let runNow = withLock { core -> Bool in
      if case .shutDown = core.phase { return true }
      core.shutdownHandlers.append(handler)
      return false
    }
    if runNow {
      handler()
    }
  }

  /// Shuts the store down: fails everything waiting, finishes streams, drops listeners and interceptors,
  /// cancels store-owned tasks. Idempotent. Returns the cancelled tasks, except the calling task if it is
  /// one of them, so that an explicit shutdown can wait for them without waiting for itself.
  @usableFromInline @discardableResult
  func shutdown() -> [Task<Void, Never>] {
    let work = withLock { core -> ShutdownWork? in
      if case .shutDown = core.phase { return nil }
      core.phase = .shutDown
      readyFlag.set(false)
      core.startupTask = nil
      defer {
        core.readinessWaiters = [:]
        core.shutdownHandlers = []
        core.chain = CoreState<S, D>.noChain
        core.attachments = [:]
      }
      let caller = TaskIdentity.current
      return ShutdownWork(
        entries: core.mailbox.removeAll(),
        waiters: Array(core.readinessWaiters.values),
        subscribers: core.observers.removeAll(),
        tasks: core.ownedTasks.compactMap { id, task in
          guard case .running(let task) = task else { return nil }
          return caller != nil && core.ownedTaskIdentities[id] == caller ? nil : task
        },
        handlers: core.shutdownHandlers,
        chain: core.chain)
    }
    guard let work else { return [] }
    for entry in work.entries {
      entry.fail(StoreError.storeShutDown)
    }
    for waiter in work.waiters {
      waiter.resume(throwing: StoreError.storeShutDown)
    }
    for subscriber in work.subscribers {
      subscriber.finish()
    }
    // The calling task, if it is a store-owned one, is left out of `tasks`: cancel everything else.
    for task in work.tasks {
      task.cancel()
    }
    if let caller = TaskIdentity.current, withLock({ $0.ownedTaskIdentities.values.contains(caller) }) {
      withUnsafeCurrentTask { $0?.cancel() }
    }
    for handler in work.handlers {
      handler()
    }
    // The chain (and the interceptors it captures) is released here, outside the lock: their deinit may
    // run user code.
    _ = work.chain
    return work.tasks
  }
}
