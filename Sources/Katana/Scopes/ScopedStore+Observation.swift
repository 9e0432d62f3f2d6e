extension ScopedStore {
  /// Calls `listener` with the feature's slice before and after every committed change of it, until the
  /// returned closure is called; see ``Store/addListener(_:)``.
  ///
  /// A commit that leaves an `Equatable` slice equal (an update of another feature, or of another part of
  /// the state) does not call the listener. For a slice that is not `Equatable`, every commit that may
  /// change it calls it: commits of the root store, and of scopes whose place may overlap this one's
  /// (commits of other features' scopes do not). While the scope's element or optional child is missing, the listener is not called;
  /// when it comes back, the next call compares with the slice as it was last seen.
  ///
  /// - Important: Listeners of a scope keep a copy of the slice (not of the whole state): an updater that
  ///   mutates a collection inside the slice copies that collection once.
  @discardableResult
  public func addListener(_ listener: @escaping StoreListener<S>) -> StoreUnsubscribe {
    let unsubscribe = core.observeChanges({ old, new in listener(old, new) }, finish: {})
    return { unsubscribe() }
  }

  /// Every committed change of the feature's slice, as the slice before and after it, from when iteration
  /// starts; commits that leave the slice unchanged are skipped as for ``addListener(_:)``.
  ///
  /// Each `for await` loop is an independent subscriber; by default it buffers up to 64 changes and then
  /// drops the oldest.
  public func changes(buffering: StreamBuffering = .bufferingNewest(64)) -> StoreStream<StateChange<S>> {
    StoreStream { [core] in
      let buffer = StreamBuffer<StateChange<S>>(policy: buffering)
      let unsubscribe = core.observeChanges(
        { old, new in buffer.push(StateChange(old: old, new: new)) }, finish: { buffer.finish() })
      buffer.setOnTermination { unsubscribe() }
      return buffer
    }
  }

  /// The feature's slice: its current value when iteration starts, then each new value, skipping commits
  /// that leave an `Equatable` slice equal (a slice that is not `Equatable` comes with every commit that may
  /// change it, as for ``addListener(_:)``). While the scope's element or optional child is missing, nothing comes; when it
  /// appears (a sheet's state set after the stream started), it comes at once.
  ///
  /// Each `for await` loop is an independent subscriber; see ``Store/states(buffering:)`` for buffering.
  public func states(buffering: StreamBuffering = .latest) -> StoreStream<S> {
    StoreStream { [core] in
      let buffer = StreamBuffer<S>(policy: buffering)
      let memory = SliceMemory<S>()
      let push: @Sendable (S?) -> Void = { slice in
        if let new = memory.newValue(slice) { buffer.push(new) }
      }
      let unsubscribe = core.observe(initial: push, receive: push, startupState: push, finish: { buffer.finish() })
      buffer.setOnTermination { unsubscribe() }
      return buffer
    }
  }

  /// A projection of the feature's slice: its current value when iteration starts, then each new value,
  /// skipping commits that leave it equal; see ``Store/values(of:buffering:)``.
  public func values<Value: Equatable & Sendable>(
    of projection: @escaping @Sendable (S) -> Value, buffering: StreamBuffering = .latest
  ) -> StoreStream<Value> {
    StoreStream { [core] in
      let buffer = StreamBuffer<Value>(policy: buffering)
      let last = LastValue<Value>()
      let push: @Sendable (S?) -> Void = { slice in
        if let slice { last.push(projection(slice), to: buffer) }
      }
      let unsubscribe = core.observe(initial: push, receive: push, startupState: push, finish: { buffer.finish() })
      buffer.setOnTermination { unsubscribe() }
      return buffer
    }
  }
}

/// The slice a stream of a scope's slices saw last, and whether a new one is worth yielding.
///
/// Touched by one handler at a time (``ObserverStartup`` orders the first value before every delivery, and the
/// store's turn serialises deliveries); the lock only hands the value over between their threads.
final class SliceMemory<S: FeatureState>: Sendable {
  /// The last slice seen, nil until one was present.
  private let seen = Locked<S?>(nil)
  private let equality = ScopeCore<S>.equality()

  /// Records `new`; returns it if a stream of slices yields it: it is present, and was never seen or differs
  /// from the last slice seen (a slice that appears after the stream started is yielded).
  func newValue(_ new: S?) -> S? {
    guard let new else { return nil }
    let old = seen.withLock { seen -> S? in
      defer { seen = new }
      return seen
    }
    if let old, let equality, equality(old, new) { return nil }
    return new
  }
}

extension ScopedStore where S: State {
  /// Adds a listener that gets the feature's slices as `any State`; see ``addListener(_:)``.
  @discardableResult
  public func addAnyListener(_ listener: @escaping AnyStoreListener) -> StoreUnsubscribe {
    addListener { old, new in listener(old, new) }
  }
}
