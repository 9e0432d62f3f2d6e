extension StoreCore {
  // MARK: - Observation

  /// Adds a listener; see ``Store/addListener(_:)``.
  @usableFromInline func addListener(_ listener: @escaping StoreListener<S>) -> StoreUnsubscribe {
    guard !owner.isCurrentThread else {
      runtimeWarning("addListener was called from inside a StateUpdater; the listener was not added.")
      return {}
    }
    let isSubscribed = AtomicFlag(true)
    var listener = listener
    // With an executor, a call handed over before removal runs later: it checks that the listener is still
    // subscribed when it runs, so that removing a listener on its executor (Katana 6's main queue) stops
    // every call that has not started, as in Katana 6.
    if let execute = configuration.listenerExecutor {
      listener = { [listener] old, new in
        execute {
          if isSubscribed.isSet { listener(old, new) }
        }
      }
    }
    let added = withLock { core -> (id: UInt64, dropped: Observers<S>.Dropped)? in
      if case .shutDown = core.lifecycle.phase { return nil }
      let id = core.makeID()
      return (id, core.add(ListenerEntry(id: id, listener: listener, isSubscribed: isSubscribed)))
    }
    // Listeners unsubscribed from inside an updater meanwhile are released here, outside the lock.
    guard let id = added?.id else { return {} }
    return { [weak self] in
      isSubscribed.set(false)
      self?.removeListener(id)
    }
  }

  /// Removes listener `id`, releasing it outside the lock. From inside a state updater (where the lock is
  /// held) the listener is only marked unsubscribed: it is skipped from then on and dropped later.
  func removeListener(_ id: UInt64) {
    guard !owner.isCurrentThread else { return }
    let removed = withLock { $0.removeListener(id) }
    withExtendedLifetime(removed) {}
  }

  /// Registers an observer of committed states (everything but a root listener: streams and projections at
  /// the root, every observer of a scope), started with the one start-up primitive, ``ObserverStartup``.
  ///
  /// `start` runs first, with the state at registration; then `receive` gets every state committed after
  /// registration, in commit order, each exactly once and never two at a time. A store that started from an
  /// async initializer hands its initial state, once ready, to `startupState` instead, in the same order. See
  /// ``ObserverStart`` for where `start` runs, and where the deliveries that race it are handled.
  ///
  /// - Parameters:
  ///   - location: The part of the state observed, for a scope's observer; nil for the whole state.
  ///   - needsOldState: Whether `receive` needs the state before each change.
  ///   - startupState: Gets the initial state of a store that became ready after registration: streams of
  ///     states and projections yield it (they began with `S()`); listeners and streams of changes only
  ///     compare the next change with it (the initial state is not a change).
  /// - Returns: A closure that removes the observer, safe to call from anywhere (a state updater included),
  ///   any number of times; nil if the observer was not registered (the store has shut down, or the call
  ///   comes from inside a state updater), in which case `finish` has been called.
  @usableFromInline func observe(
    location: ScopeLocation?, needsOldState: Bool, start: ObserverStart<S>,
    receive: @escaping @Sendable (_ old: S?, _ new: S) -> Void, startupState: @escaping @Sendable (S) -> Void,
    finish: @escaping @Sendable () -> Void
  ) -> (@Sendable () -> Void)? {
    guard !owner.isCurrentThread else {
      runtimeWarning("A store was observed from inside a StateUpdater; the observer was not added.")
      finish()
      return nil
    }
    let registered = withLock { core -> (StateSubscriber<S>, S, Observers<S>.Dropped)? in
      if case .shutDown = core.lifecycle.phase { return nil }
      let subscriber = StateSubscriber<S>(
        id: core.makeID(), needsOldState: needsOldState, location: location, receive: receive,
        receiveStartupState: startupState, finish: finish)
      if case .underLock(let start) = start {
        start(core.state)
        subscriber.finishStart()
      }
      return (subscriber, core.state, core.add(subscriber))
    }
    // Observers unsubscribed from inside an updater meanwhile are released here, outside the lock.
    guard let (subscriber, state, _) = registered else {
      finish()
      return nil
    }
    if case .afterRegistration(let start) = start {
      start(state)
      subscriber.finishStart()
    }
    return { [weak self, id = subscriber.id, isSubscribed = subscriber.isSubscribed] in
      isSubscribed.set(false)
      self?.removeSubscriber(id)
    }
  }

  /// Removes subscriber `id`, releasing it outside the lock. From inside a state updater (where the lock is
  /// held) it has only been marked unsubscribed: it is skipped from then on and dropped later.
  func removeSubscriber(_ id: UInt64) {
    guard !owner.isCurrentThread else { return }
    let removed = withLock { $0.removeSubscriber(id) }
    withExtendedLifetime(removed) {}
  }

  /// The number of registered listeners (unsubscribed ones excluded) and stream subscribers (tests check
  /// unregistration).
  var observerCount: Int {
    withLock { core in
      core.observers.listeners.filter { $0.isSubscribed.isSet }.count
        + core.observers.subscribers.filter { $0.isSubscribed.isSet }.count
    }
  }

  // MARK: - Activity (opt-in, for tests)

  /// Counts `body` as in-flight work.
  ///
  /// Every tracked dispatch counts itself, whatever task it runs in and however deeply it is nested: a
  /// nested dispatch counts while its outer one does too, which costs a little and changes nothing, while a
  /// dispatch from a task that a side effect started (and did not wait for) keeps the store busy on its own.
  @usableFromInline nonisolated(nonsending) func withActivity<T>(_ body: () async throws -> T) async rethrows -> T {
    let carrier = TaskIdentity.current
    let key = withLock { core in
      let key = Lifecycle<CoreState<S, D>.Waiter, Task<Void, Never>>.ActivityKey.dispatch(core.makeID())
      core.lifecycle.beginActivity(key, carrier: carrier)
      return key
    }
    defer { perform(withLock { $0.lifecycle.endActivity(key) }) }
    return try await body()
  }

  /// The tasks that carry the store's in-flight work, followed through hand-offs; nil if some piece of work
  /// has no known carrier yet, or if one of `tasks` carries none itself (see ``Lifecycle/carriers(inside:)``).
  /// Requires ``StoreConfiguration/tracksActivity``.
  func activityCarriers(inside tasks: [TaskIdentity]) -> [TaskIdentity]? {
    withLock { $0.lifecycle.carriers(inside: tasks) }
  }

  /// Records that `waiter` waits for the task that binds `token` (nil: no longer).
  func handOff(from waiter: TaskIdentity, to token: UInt64?) {
    withLock { $0.lifecycle.handOff(from: waiter, to: token) }
  }

  /// Records that `token` is run by `task` (nil: no longer).
  func bind(_ token: UInt64, to task: TaskIdentity?) {
    withLock { $0.lifecycle.bind(token, to: task) }
  }

  /// The amount of in-flight work (with activity tracking on).
  var activeWork: Int {
    withLock { $0.lifecycle.activeWork }
  }

  /// Returns once nothing is in flight: no awaited dispatch in progress, no sent item unfinished, no
  /// store-owned task running. Requires ``StoreConfiguration/tracksActivity``.
  ///
  /// - Throws: `CancellationError` if the calling task is cancelled while waiting.
  nonisolated(nonsending) func waitUntilIdle() async throws {
    guard case .wait(let waiter) = withLock({ $0.lifecycle.waitUntilIdle() }) else { return }
    try await suspend(
      install: { core, continuation in core.lifecycle.suspendIdleWaiter(waiter, on: continuation) },
      cancel: { core in core.lifecycle.cancelIdleWaiter(waiter)?.afterUnlock })
  }

  // MARK: - Attachments

  /// The object of type `T` attached to this store, created with `make` on first use; nil once the store
  /// has shut down. Store features (the effect registry, built-in interceptors) keep per-store state here.
  /// Attachments have a lock of their own, so this works from anywhere, a state updater included.
  func attachment<T: AnyObject & Sendable>(_ type: T.Type, make: () -> T) -> T? {
    attachments.withLock { attachments in
      guard attachments != nil else { return nil }
      if let existing = attachments?[ObjectIdentifier(type)] as? T { return existing }
      let created = make()
      attachments?[ObjectIdentifier(type)] = created
      return created
    }
  }
}
