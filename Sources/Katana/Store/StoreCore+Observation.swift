extension StoreCore {
  // MARK: - Observation

  /// Adds a listener; see ``Store/addListener(_:)``.
  @usableFromInline
  func addListener(_ listener: @escaping StoreListener<S>) -> StoreUnsubscribe {
    guard !owner.isCurrentThread else {
      runtimeWarning("addListener was called from inside a StateUpdater; the listener was not added.")
      return {}
    }
    var listener = listener
    // With an executor, a call handed over before removal runs later: it checks that the listener is still
    // subscribed when it runs, so that removing a listener on its executor (Katana 6's main queue) stops
    // every call that has not started, as in Katana 6.
    var subscribed: AtomicFlag?
    if let execute = configuration.listenerExecutor {
      let flag = AtomicFlag()
      flag.set(true)
      subscribed = flag
      listener = { [listener] old, new in
        execute {
          if flag.isSet { listener(old, new) }
        }
      }
    }
    let id = withLock { core -> UInt64? in
      if case .shutDown = core.phase { return nil }
      let id = core.makeID()
      core.observers.add(ListenerEntry(id: id, listener: listener))
      return id
    }
    guard let id else { return {} }
    return { [weak self, subscribed] in
      subscribed?.set(false)
      self?.withLock { $0.observers.removeListener(id) }
    }
  }

  /// Registers a stream subscriber. `makeSubscriber` runs under the lock (with the thread marked as
  /// running an updater, since it may evaluate a projection) and gets the current state.
  @usableFromInline
  func subscribe<Element: Sendable>(
    buffer: StreamBuffer<Element>, makeSubscriber: (UInt64, S) -> StateSubscriber<S>
  ) -> StreamBuffer<Element> {
    guard !owner.isCurrentThread else {
      runtimeWarning("A store stream was created inside a StateUpdater; it finishes immediately.")
      buffer.finish()
      return buffer
    }
    let id = withLockRunningUpdater { core -> UInt64? in
      if case .shutDown = core.phase { return nil }
      let id = core.makeID()
      core.observers.add(makeSubscriber(id, core.state))
      return id
    }
    guard let id else {
      buffer.finish()
      return buffer
    }
    buffer.setOnTermination { [weak self] in
      self?.withLock { $0.observers.removeSubscriber(id) }
    }
    return buffer
  }

  /// The number of registered listeners and stream subscribers (tests check unregistration).
  var observerCount: Int {
    withLock { $0.observers.listeners.count + $0.observers.subscribers.count }
  }

  // MARK: - Activity (opt-in, for tests)

  /// Whether a tracked dispatch already counts the work running in this task.
  @inlinable
  var isTrackedHere: Bool { ActivityScope.isTracking }

  /// Counts `body` as in-flight work.
  @inlinable
  nonisolated(nonsending) func withActivity<T>(_ body: () async throws -> T) async rethrows -> T {
    withLock { $0.activeWork += 1 }
    defer { endActivity() }
    return try await ActivityScope.tracking(body)
  }

  /// Marks one unit of in-flight work finished, waking whoever waits for the store to be idle.
  @usableFromInline
  func endActivity() {
    let waiters = withLock { core -> [UnsafeContinuation<Void, any Error>] in
      core.activeWork -= 1
      guard core.activeWork == 0 else { return [] }
      defer { core.idleWaiters = [:] }
      return Array(core.idleWaiters.values)
    }
    for waiter in waiters {
      waiter.resume()
    }
  }

  /// The amount of in-flight work (with activity tracking on).
  var activeWork: Int {
    withLock { $0.activeWork }
  }

  /// Returns once nothing is in flight: no awaited dispatch in progress, no sent item unfinished, no
  /// store-owned task running. Requires ``StoreConfiguration/tracksActivity``.
  ///
  /// - Throws: `CancellationError` if the calling task is cancelled while waiting.
  nonisolated(nonsending) func waitUntilIdle() async throws {
    let id = withLock { core -> UInt64? in core.activeWork == 0 ? nil : core.makeID() }
    guard let id else { return }
    try await withTaskCancellationHandler {
      try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
        let idle = withLock { core -> Bool in
          if core.activeWork == 0 { return true }
          if Task.isCancelled { return false }
          core.idleWaiters[id] = continuation
          return false
        }
        if idle {
          continuation.resume()
        } else if Task.isCancelled, withLock({ $0.idleWaiters[id] == nil }) {
          continuation.resume(throwing: CancellationError())
        }
      }
    } onCancel: {
      let waiter = withLock { $0.idleWaiters.removeValue(forKey: id) }
      waiter?.resume(throwing: CancellationError())
    }
  }

  // MARK: - Attachments

  /// The object of type `T` attached to this store, created with `make` on first use; nil once the store
  /// has shut down. Store features (the effect registry, built-in interceptors) keep per-store state here.
  func attachment<T: AnyObject & Sendable>(_ type: T.Type, make: () -> T) -> T? {
    withLock { core in
      if case .shutDown = core.phase { return nil }
      if let existing = core.attachments[ObjectIdentifier(type)] as? T { return existing }
      let created = make()
      core.attachments[ObjectIdentifier(type)] = created
      return created
    }
  }
}
