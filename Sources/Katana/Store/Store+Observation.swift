extension Store {
  /// Calls `listener` with the state before and after every committed change, until the returned closure
  /// is called.
  ///
  /// - The listener gets every change committed after it is added, in commit order, one at a time; never
  ///   the initial state, nor anything for a dispatch that was rejected or failed.
  /// - It runs synchronously, on the committing dispatch's task and thread, outside the store's lock,
  ///   before that dispatch returns: after `try await store.dispatch(updater)` every listener has seen the
  ///   change. Keep it short; to update UI, hop to the main actor from it, or use ``states(buffering:)``.
  /// - It may dispatch (with `send`, or from a task it starts).
  ///
  /// - Returns: A closure that removes the listener. Calling it again, or after the store is gone, does
  ///   nothing. A call already running, or one for a change committed before removal, may still happen.
  ///
  /// - Important: While a listener is registered, each commit keeps the previous state for it, so an
  ///   updater that mutates a collection copies that collection once. Stores with large collections that
  ///   only need some fields should observe them with ``values(of:buffering:)`` instead.
  @inlinable @discardableResult
  public nonisolated func addListener(_ listener: @escaping StoreListener<S>) -> StoreUnsubscribe {
    core.addListener(listener)
  }

  /// Adds a listener that gets the states as `any State`; see ``addListener(_:)``.
  @inlinable @discardableResult
  public nonisolated func addAnyListener(_ listener: @escaping AnyStoreListener) -> StoreUnsubscribe {
    core.addListener { old, new in listener(old, new) }
  }

  /// The store's state: the current one when iteration starts, then each committed state.
  ///
  /// Started before the store is ready, it begins with `S()` and gets the initial state once start-up is
  /// done.
  ///
  /// Each `for await` loop is an independent subscriber. With the default `.latest` buffering, a slow
  /// consumer skips intermediate states and always gets the most recent one.
  ///
  /// - Important: Buffered states keep storage alive: the next update that mutates that storage copies it.
  ///   Prefer ``values(of:buffering:)`` for large states.
  @inlinable
  public nonisolated func states(buffering: StreamBuffering = .latest) -> StoreStream<S> {
    StoreStream { [core] in
      let buffer = StreamBuffer<S>(policy: buffering)
      let unsubscribe = core.observe(
        location: nil, needsOldState: false, start: .underLock { buffer.push($0) },
        receive: { _, new in buffer.push(new) },
        startupState: { buffer.push($0) }, finish: { buffer.finish() })
      if let unsubscribe { buffer.setOnTermination(unsubscribe) }
      return buffer
    }
  }

  /// Every committed change, as the state before and after it, from when iteration starts.
  ///
  /// Each `for await` loop is an independent subscriber; by default it buffers up to 64 changes and then
  /// drops the oldest.
  ///
  /// - Important: Like a listener, a change subscriber makes each commit keep the previous state, and
  ///   buffered changes keep states alive.
  @inlinable
  public nonisolated func changes(buffering: StreamBuffering = .bufferingNewest(64)) -> StoreStream<StateChange<S>> {
    StoreStream { [core] in
      let buffer = StreamBuffer<StateChange<S>>(policy: buffering)
      let unsubscribe = core.observe(
        location: nil, needsOldState: true, start: .underLock { _ in },
        receive: { old, new in
          // The store captures the old state whenever a subscriber needs it.
          if let old { buffer.push(StateChange(old: old, new: new)) }
        }, startupState: { _ in }, finish: { buffer.finish() })
      if let unsubscribe { buffer.setOnTermination(unsubscribe) }
      return buffer
    }
  }

  /// A projection of the store's state: its current value when iteration starts, then each new value,
  /// skipping commits that leave it equal.
  ///
  /// ```swift
  /// for await count in store.values(of: \.todos.count) { render(count) }
  /// ```
  ///
  /// Pass a key-path literal, as above, or any function of the state. A literal is converted to a direct
  /// getter (about 9 ns per evaluation, measured); to project through a `KeyPath` value you hold, write
  /// `store.values(of: { $0[keyPath: path] })` (about four times slower, through the key-path runtime).
  ///
  /// A projection keeps only the projected value, never the state, so observing one field does not make
  /// updates of other fields copy anything. The projection runs once per committed change, outside the
  /// store's lock; keep it cheap. Each `for await` loop is an independent subscriber; with the default
  /// `.latest` buffering a slow consumer skips to the most recent value. Started before the store is ready,
  /// it begins with the projection of `S()` and gets the initial state's once start-up is done (if it
  /// differs).
  @inlinable
  public nonisolated func values<Value: Equatable & Sendable>(
    of projection: @escaping @Sendable (S) -> Value, buffering: StreamBuffering = .latest
  ) -> StoreStream<Value> {
    StoreStream { [core] in
      let buffer = StreamBuffer<Value>(policy: buffering)
      let last = LastValue<Value>()
      // The projection is user code: it runs outside the store's lock, its first value first.
      let push: @Sendable (S) -> Void = { last.push(projection($0), to: buffer) }
      let unsubscribe = core.observe(
        location: nil, needsOldState: false, start: .afterRegistration(push),
        receive: { _, new in last.push(projection(new), to: buffer) }, startupState: push,
        finish: { buffer.finish() })
      if let unsubscribe { buffer.setOnTermination(unsubscribe) }
      return buffer
    }
  }
}
