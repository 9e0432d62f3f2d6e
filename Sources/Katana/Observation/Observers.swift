/// A registered listener.
@usableFromInline
struct ListenerEntry<S: State> {
  @usableFromInline let id: UInt64
  @usableFromInline let listener: StoreListener<S>

  @inlinable
  init(id: UInt64, listener: @escaping StoreListener<S>) {
    self.id = id
    self.listener = listener
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

  @inlinable
  init(
    id: UInt64, needsOldState: Bool, receive: @escaping @Sendable (S?, S) -> Void,
    finish: @escaping @Sendable () -> Void
  ) {
    self.id = id
    self.needsOldState = needsOldState
    self.receive = receive
    self.finish = finish
  }
}

/// The last value a projection delivered. Only touched by the projection's `receive`, which the store
/// never runs concurrently with itself.
@usableFromInline
final class ProjectionMemory<Value: Sendable>: @unchecked Sendable {
  // Never accessed concurrently (see above), so Swift's dynamic exclusivity checks are redundant here.
  @exclusivity(unchecked) @usableFromInline var last: Value

  @inlinable
  init(_ value: Value) {
    last = value
  }
}

/// Everyone who observes a store's changes. Lives inside the store's locked state.
@usableFromInline
struct Observers<S: State> {
  @usableFromInline private(set) var listeners: [ListenerEntry<S>] = []
  @usableFromInline private(set) var subscribers: [StateSubscriber<S>] = []
  /// Whether a commit must keep a copy of the state before the change.
  @usableFromInline private(set) var needsOldState = false

  @inlinable
  init() {}

  @inlinable
  var isEmpty: Bool { listeners.isEmpty && subscribers.isEmpty }

  mutating func add(_ listener: ListenerEntry<S>) {
    listeners.append(listener)
    needsOldState = true
  }

  mutating func removeListener(_ id: UInt64) {
    listeners.removeAll { $0.id == id }
    recompute()
  }

  mutating func add(_ subscriber: StateSubscriber<S>) {
    subscribers.append(subscriber)
    needsOldState = needsOldState || subscriber.needsOldState
  }

  mutating func removeSubscriber(_ id: UInt64) {
    subscribers.removeAll { $0.id == id }
    recompute()
  }

  /// Removes everyone, returning the subscribers so that their streams can be finished outside the lock.
  mutating func removeAll() -> [StateSubscriber<S>] {
    defer { self = Observers() }
    return subscribers
  }

  private mutating func recompute() {
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

  /// Calls the listeners in registration order, then feeds the stream subscribers.
  @inlinable
  func deliver() {
    if let old {
      for entry in listeners {
        entry.listener(old, new)
      }
    }
    for subscriber in subscribers {
      subscriber.receive(old, new)
    }
  }
}
