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
    let memory = SliceMemory<S>()
    let unsubscribe = core.observe(
      initial: { memory.initialize($0) },
      receive: { new in
        guard let (old, new) = memory.change(to: new) else { return }
        listener(old, new)
      }, finish: {})
    return { unsubscribe() }
  }

  /// Adds a listener that gets the feature's slices as `any State`; see ``addListener(_:)``.
  @discardableResult
  public func addAnyListener(_ listener: @escaping AnyStoreListener) -> StoreUnsubscribe {
    addListener { old, new in listener(old, new) }
  }

  /// Every committed change of the feature's slice, as the slice before and after it, from when iteration
  /// starts; commits that leave the slice unchanged are skipped as for ``addListener(_:)``.
  ///
  /// Each `for await` loop is an independent subscriber; by default it buffers up to 64 changes and then
  /// drops the oldest.
  public func changes(buffering: StreamBuffering = .bufferingNewest(64)) -> StoreStream<StateChange<S>> {
    StoreStream { [core] in
      let buffer = StreamBuffer<StateChange<S>>(policy: buffering)
      let memory = SliceMemory<S>()
      let unsubscribe = core.observe(
        initial: { memory.initialize($0) },
        receive: { new in
          guard let (old, new) = memory.change(to: new) else { return }
          buffer.push(StateChange(old: old, new: new))
        }, finish: { buffer.finish() })
      buffer.setOnTermination { unsubscribe() }
      return buffer
    }
  }

  /// The feature's slice: its current value when iteration starts, then each new value, skipping commits
  /// that leave an `Equatable` slice equal (a slice that is not `Equatable` comes with every commit that may
  /// change it, as for ``addListener(_:)``). While the scope's element or optional child is missing, nothing comes.
  ///
  /// Each `for await` loop is an independent subscriber; see ``Store/states(buffering:)`` for buffering.
  public func states(buffering: StreamBuffering = .latest) -> StoreStream<S> {
    StoreStream { [core] in
      let buffer = StreamBuffer<S>(policy: buffering)
      let memory = SliceMemory<S>()
      let unsubscribe = core.observe(
        initial: { slice in
          if memory.initialize(slice), let slice { buffer.push(slice) }
        },
        receive: { new in
          guard let (_, new) = memory.change(to: new) else { return }
          buffer.push(new)
        }, finish: { buffer.finish() })
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
      let last = Locked<Value?>(nil)
      let push: @Sendable (S?) -> Void = { slice in
        guard let slice else { return }
        let value = projection(slice)
        let isNew = last.withLock { last -> Bool in
          defer { last = value }
          return last != value
        }
        if isNew { buffer.push(value) }
      }
      let unsubscribe = core.observe(initial: push, receive: push, finish: { buffer.finish() })
      buffer.setOnTermination { unsubscribe() }
      return buffer
    }
  }
}

/// The slice an observer of a scope saw last, and whether a new one is a change.
final class SliceMemory<S: State>: Sendable {
  private struct Seen {
    var isSet = false
    var slice: S?
  }

  private let seen = Locked(Seen())
  private let equality = ScopeCore<S>.equality()

  /// Records the slice at registration, unless a commit was delivered first; returns whether it did.
  @discardableResult
  func initialize(_ slice: S?) -> Bool {
    seen.withLock { seen in
      guard !seen.isSet else { return false }
      seen = Seen(isSet: true, slice: slice)
      return true
    }
  }

  /// Records `new`; returns the change from the last slice seen, or nil if there is none to report (the
  /// slice is missing, was missing, or is equal).
  func change(to new: S?) -> (old: S, new: S)? {
    let old = seen.withLock { seen -> S? in
      defer { seen = Seen(isSet: true, slice: new ?? seen.slice) }
      return seen.slice
    }
    guard let old, let new else { return nil }
    if let equality, equality(old, new) { return nil }
    return (old, new)
  }
}
