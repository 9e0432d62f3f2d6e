import Katana

extension TestStore {
  /// Calls `listener` with the state before and after every committed change, until the returned closure
  /// is called: the store's `addListener(_:)`.
  ///
  /// ```swift
  /// let seen = Mutex([Int]())   // or any lock-protected box
  /// store.addListener { _, new in seen.withLock { $0.append(new.count) } }
  /// try await store.dispatch(Increment()) { $0.count = 1 }   // the listener has seen it when this returns
  /// ```
  @discardableResult
  public func addListener(_ listener: @escaping StoreListener<S>) -> StoreUnsubscribe {
    store.addListener(listener)
  }

  /// The store's state: the current one when iteration starts, then each committed state; the store's
  /// `states(buffering:)`.
  public func states(buffering: StreamBuffering = .latest) -> StoreStream<S> {
    store.states(buffering: buffering)
  }

  /// Every committed change, as the state before and after it, from when iteration starts; the store's
  /// `changes(buffering:)`.
  public func changes(buffering: StreamBuffering = .bufferingNewest(64)) -> StoreStream<StateChange<S>> {
    store.changes(buffering: buffering)
  }

  /// A projection of the store's state: its current value when iteration starts, then each new value,
  /// skipping commits that leave it equal; the store's `values(of:buffering:)`.
  public func values<Value: Equatable & Sendable>(
    of projection: @escaping @Sendable (S) -> Value, buffering: StreamBuffering = .latest
  ) -> StoreStream<Value> {
    store.values(of: projection, buffering: buffering)
  }
}
