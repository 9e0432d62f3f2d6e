/// A registered listener.
@usableFromInline
struct ListenerEntry<S: State> {
  @usableFromInline let id: UInt64
  @usableFromInline let listener: StoreListener<S>
  /// Cleared by the unsubscribe closure, without the store's lock: a listener removed from inside a state
  /// updater (where the lock is held) is skipped from then on, and dropped at the next change of observers.
  @usableFromInline let isSubscribed: AtomicFlag

  @inlinable
  init(id: UInt64, listener: @escaping StoreListener<S>, isSubscribed: AtomicFlag) {
    self.id = id
    self.listener = listener
    self.isSubscribed = isSubscribed
  }
}

/// A stream subscriber, as the store sees it: something to hand each committed state to.
///
/// One final class with closures rather than a subclass per stream kind: the closures are created where
/// the stream is requested, in code specialised for the store's state type, while a subclass's overrides
/// would run unspecialised (generic code called through a vtable).
@usableFromInline
final class StateSubscriber<S: State>: Sendable {
  @usableFromInline let id: UInt64
  /// Whether ``receive`` needs the state before the change (which costs a copy of whatever the change
  /// mutates).
  @usableFromInline let needsOldState: Bool
  /// Called once per committed change, in commit order, while the committing dispatch holds the turn (so
  /// never concurrently with itself), outside the store's lock.
  @usableFromInline let receive: @Sendable (_ old: S?, _ new: S) -> Void
  /// Ends the subscriber's stream (store shutdown).
  @usableFromInline let finish: @Sendable () -> Void
  /// The part of the state the subscriber observes, for a scope's observer; nil for the whole state. Commits
  /// made through a scope skip subscribers whose part they cannot change (see ``ScopeCommitFilter``).
  let location: ScopeLocation?

  @inlinable
  convenience init(
    id: UInt64, needsOldState: Bool, receive: @escaping @Sendable (S?, S) -> Void,
    finish: @escaping @Sendable () -> Void
  ) {
    self.init(id: id, needsOldState: needsOldState, location: nil, receive: receive, finish: finish)
  }

  @usableFromInline
  init(
    id: UInt64, needsOldState: Bool, location: ScopeLocation?, receive: @escaping @Sendable (S?, S) -> Void,
    finish: @escaping @Sendable () -> Void
  ) {
    self.id = id
    self.needsOldState = needsOldState
    self.location = location
    self.receive = receive
    self.finish = finish
  }
}

/// The last value a projection subscriber delivered.
///
/// The subscriber is registered under the store's lock, but its projection (user code) runs outside it: the
/// first value is computed right after registration, on the subscribing thread, while a commit may already
/// be delivering to the subscriber on another. Until that first value is in, deliveries go through a lock and
/// only keep their value; the first value is pushed first, then the latest delivered one if it differs.
/// After that, deliveries (which the turn serialises) use ``last`` without a lock.
@usableFromInline
final class ProjectionMemory<Value: Equatable & Sendable>: @unchecked Sendable {
  // Sendable: `last` is touched under `startup`'s lock until `initialized` is set (release), then only by
  // deliveries, which never run concurrently with each other and read the flag first (acquire).

  @usableFromInline let initialized = AtomicFlag()
  /// Whether the first value is in; taken only while `initialized` reads false.
  @usableFromInline let startup = Locked(false)
  @usableFromInline @exclusivity(unchecked) var last: Value?

  @inlinable
  init() {}

  /// Delivers the projection of a committed state.
  @inlinable
  func deliver(_ value: Value, to buffer: StreamBuffer<Value>) {
    if initialized.isSet {
      pushIfChanged(value, to: buffer)
      return
    }
    startup.withLock { isInitialized in
      if isInitialized {
        pushIfChanged(value, to: buffer)
      } else {
        last = value
      }
    }
  }

  /// Sets the first value, computed after registration, and pushes it (then the latest delivered value, if
  /// a delivery came first and differs).
  @usableFromInline func initialize(_ value: Value, buffer: StreamBuffer<Value>) {
    startup.withLock { isInitialized in
      buffer.push(value)
      if let delivered = last, delivered != value {
        buffer.push(delivered)
      } else {
        last = value
      }
      isInitialized = true
      initialized.set(true)
    }
  }

  @inlinable
  func pushIfChanged(_ value: Value, to buffer: StreamBuffer<Value>) {
    guard value != last else { return }
    last = value
    buffer.push(value)
  }
}

/// Everyone who observes a store's changes. Lives inside the store's locked state.
///
/// Removing observers hands them back, so that the store releases them after unlocking: a closure's captures
/// may run code in their deinit.
@usableFromInline
struct Observers<S: State> {
  @usableFromInline private(set) var listeners: [ListenerEntry<S>] = []
  @usableFromInline private(set) var subscribers: [StateSubscriber<S>] = []
  /// Whether a commit must keep a copy of the state before the change.
  @usableFromInline private(set) var needsOldState = false
  /// Changes whenever a listener or subscriber is added or removed: what ``ScopeCommitFilter``'s cache
  /// is checked against.
  @usableFromInline private(set) var version: UInt64 = 0

  @inlinable
  init() {}

  @inlinable
  var isEmpty: Bool { listeners.isEmpty && subscribers.isEmpty }

  /// Whether a commit made through the scope of `filter` concerns no observer at all.
  @inlinable
  func concernNobody(_ filter: ScopeCommitFilter) -> Bool {
    guard listeners.isEmpty else { return false }
    if filter.version != version { refresh(filter) }
    return filter.concerned.isEmpty
  }

  /// The stream subscribers a commit made through the scope of `filter` concerns, and whether one of them
  /// needs the state before the change.
  @inlinable
  func subscribers(concerning filter: ScopeCommitFilter) -> (subscribers: [StateSubscriber<S>], needsOldState: Bool) {
    if filter.version != version { refresh(filter) }
    if filter.concerned.count == subscribers.count { return (subscribers, filter.needsOldState) }
    return (filter.concerned.map { subscribers[$0] }, filter.needsOldState)
  }

  /// Recomputes `filter`'s cache for the current subscribers. The cache holds positions, not subscribers: it
  /// never keeps one alive, so nothing user-supplied is released when it changes (under the lock).
  @usableFromInline
  func refresh(_ filter: ScopeCommitFilter) {
    filter.concerned = subscribers.indices.filter { filter.concerns(subscribers[$0].location) }
    filter.needsOldState = filter.concerned.contains { subscribers[$0].needsOldState }
    filter.version = version
  }

  /// Adds a listener; returns the listeners unsubscribed meanwhile from inside an updater, to release.
  mutating func add(_ listener: ListenerEntry<S>) -> [ListenerEntry<S>] {
    let dropped = dropUnsubscribed()
    listeners.append(listener)
    needsOldState = true
    version &+= 1
    return dropped
  }

  /// Removes a listener; returns what was removed, to release.
  mutating func removeListener(_ id: UInt64) -> [ListenerEntry<S>] {
    var removed = dropUnsubscribed()
    if let index = listeners.firstIndex(where: { $0.id == id }) {
      removed.append(listeners.remove(at: index))
    }
    recompute()
    return removed
  }

  mutating func add(_ subscriber: StateSubscriber<S>) {
    subscribers.append(subscriber)
    needsOldState = needsOldState || subscriber.needsOldState
    version &+= 1
  }

  /// Removes a subscriber; returns it, to release.
  mutating func removeSubscriber(_ id: UInt64) -> StateSubscriber<S>? {
    guard let index = subscribers.firstIndex(where: { $0.id == id }) else { return nil }
    let removed = subscribers.remove(at: index)
    recompute()
    return removed
  }

  /// Removes everyone; returns them, to finish the streams and release everything after unlocking.
  mutating func removeAll() -> (listeners: [ListenerEntry<S>], subscribers: [StateSubscriber<S>]) {
    defer {
      let version = self.version
      self = Observers()
      self.version = version &+ 1  // Never back to a version a filter may have cached.
    }
    return (listeners, subscribers)
  }

  private mutating func dropUnsubscribed() -> [ListenerEntry<S>] {
    guard listeners.contains(where: { !$0.isSubscribed.isSet }) else { return [] }
    let dropped = listeners.filter { !$0.isSubscribed.isSet }
    listeners.removeAll { !$0.isSubscribed.isSet }
    recompute()
    return dropped
  }

  private mutating func recompute() {
    version &+= 1
    needsOldState = !listeners.isEmpty || subscribers.contains { $0.needsOldState }
  }
}

/// A committed change, delivered to its observers after the store's lock is released.
@usableFromInline
struct Commit<S: State> {
  @usableFromInline let old: S?
  @usableFromInline let new: S
  @usableFromInline let listeners: [ListenerEntry<S>]
  @usableFromInline let subscribers: [StateSubscriber<S>]

  @inlinable
  init(old: S?, new: S, listeners: [ListenerEntry<S>], subscribers: [StateSubscriber<S>]) {
    self.old = old
    self.new = new
    self.listeners = listeners
    self.subscribers = subscribers
  }

  /// Calls the listeners still subscribed, in registration order, then feeds the stream subscribers.
  @inlinable
  func deliver() {
    if let old {
      for entry in listeners where entry.isSubscribed.isSet {
        entry.listener(old, new)
      }
    }
    for subscriber in subscribers {
      subscriber.receive(old, new)
    }
  }
}
