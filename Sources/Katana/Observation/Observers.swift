/// A registered listener.
@usableFromInline
struct ListenerEntry<S: FeatureState> {
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

/// A state observer other than a listener, as the store sees it: something to hand each committed state to.
///
/// Every such observer is registered through ``StoreCore/observe(location:needsOldState:start:receive:startupState:finish:)``,
/// which starts it with ``ObserverStartup``: root streams and projections, and every observer of a scope.
///
/// One final class with closures rather than a subclass per stream kind: the closures are created where
/// the stream is requested, in code specialised for the store's state type, while a subclass's overrides
/// would run unspecialised (generic code called through a vtable).
@usableFromInline
final class StateSubscriber<S: FeatureState>: Sendable {
  @usableFromInline let id: UInt64
  /// Whether ``receive`` needs the state before the change (which costs a copy of whatever the change
  /// mutates).
  @usableFromInline let needsOldState: Bool
  /// Gets the initial state when a store that started from an async initializer becomes ready (in order with
  /// the deliveries, before any commit): streams of states and projections yield it (they began with `S()`);
  /// listeners and streams of changes only take it as the state to compare the next change with (SPEC 4.6: the
  /// initial state is not a change).
  let receiveStartupState: @Sendable (S) -> Void
  /// Called once per committed change, in commit order, while the committing dispatch holds the turn (so
  /// never concurrently with itself), outside the store's lock; deliveries that race the subscriber's first
  /// value wait for it (``deliver(old:new:)``).
  @usableFromInline let receive: @Sendable (_ old: S?, _ new: S) -> Void
  /// Ends the subscriber's stream. Shutdown calls it through ``finishAtShutdown()``, which orders it after the
  /// subscriber's first value and the deliveries queued while it started.
  @usableFromInline let finish: @Sendable () -> Void
  /// The part of the state the subscriber observes, for a scope's observer; nil for the whole state. Commits
  /// made through a scope skip subscribers whose part they cannot change (see ``ScopeCommitFilter``).
  let location: ScopeLocation?
  /// Cleared when the subscriber is removed from inside a state updater (where the store's lock is held):
  /// deliveries skip it from then on, and it is dropped at the next change of observers.
  @usableFromInline let isSubscribed = AtomicFlag(true)
  /// Orders the subscriber's first value before every delivery (see ``ObserverStartup``).
  @usableFromInline let startup = ObserverStartup<StateDelivery<S>>()

  @usableFromInline
  init(
    id: UInt64, needsOldState: Bool, location: ScopeLocation?, receive: @escaping @Sendable (S?, S) -> Void,
    receiveStartupState: @escaping @Sendable (S) -> Void, finish: @escaping @Sendable () -> Void
  ) {
    self.id = id
    self.needsOldState = needsOldState
    self.receiveStartupState = receiveStartupState
    self.location = location
    self.receive = receive
    self.finish = finish
  }

  /// Delivers a committed change: handled now once the subscriber is live (a flag read), queued until its
  /// first value is in otherwise.
  @inlinable
  func deliver(old: S?, new: S) {
    if startup.isLive {
      receive(old, new)
    } else {
      deliverWhileStarting(.commit(old: old, new: new))
    }
  }

  /// Delivers the initial state of a store that became ready after the subscriber was registered.
  func deliverStartupState(_ state: S) {
    deliverWhileStarting(.startupState(state))
  }

  /// Ends the stream because the store shut down, after whatever the subscriber was owed: a subscriber registered
  /// before shutdown whose first value is still being taken (on the subscribing thread, outside the store's lock)
  /// ends once that value and the deliveries queued meanwhile are in, not before. Finishing its buffer at once
  /// dropped them all, and the stream ended without ever yielding (an `ObservableStore` then kept the state it was
  /// created with).
  func finishAtShutdown() {
    if startup.isLive {
      finish()
    } else {
      deliverWhileStarting(.finish)
    }
  }

  @usableFromInline func deliverWhileStarting(_ delivery: StateDelivery<S>) {
    startup.deliverWhileStarting(delivery) { handle($0) }
  }

  /// Called once the subscriber's first value is in: handles what was delivered meanwhile, then goes live.
  func finishStart() {
    startup.finishStart { handle($0) }
  }

  private func handle(_ delivery: StateDelivery<S>) {
    switch delivery {
    case .commit(let old, let new): receive(old, new)
    case .startupState(let state): receiveStartupState(state)
    case .finish: finish()
    }
  }
}

/// A delivery to a ``StateSubscriber``, as ``ObserverStartup`` queues it.
@usableFromInline
enum StateDelivery<S: FeatureState>: Sendable {
  /// A committed change.
  case commit(old: S?, new: S)
  /// The initial state of a store that just became ready (not a commit).
  case startupState(S)
  /// The store shut down: the stream ends after everything delivered before.
  case finish
}

/// The last value a projection pushed to its stream.
///
/// Touched by one handler at a time: the subscriber's first value, then deliveries, which
/// ``ObserverStartup`` orders after it and which the turn serialises.
@usableFromInline
final class LastValue<Value: Equatable & Sendable>: @unchecked Sendable {
  // Sendable: see above; each hand-over between threads goes through the startup primitive's lock or flag,
  // or the store's lock.

  @usableFromInline @exclusivity(unchecked) var last: Value?

  @inlinable init() {}

  /// Pushes `value` to `buffer` unless it equals the last value pushed.
  @inlinable func push(_ value: Value, to buffer: StreamBuffer<Value>) {
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
struct Observers<S: FeatureState> {
  @usableFromInline private(set) var listeners: [ListenerEntry<S>] = []
  @usableFromInline private(set) var subscribers: [StateSubscriber<S>] = []
  /// Whether a commit must keep a copy of the state before the change.
  @usableFromInline private(set) var needsOldState = false
  /// Changes whenever a listener or subscriber is added or removed: what ``ScopeCommitFilter``'s cache
  /// is checked against.
  @usableFromInline private(set) var version: UInt64 = 0

  /// Observers taken out, to release after unlocking.
  typealias Dropped = (listeners: [ListenerEntry<S>], subscribers: [StateSubscriber<S>])

  @inlinable
  init() {}

  @inlinable
  var isEmpty: Bool { listeners.isEmpty && subscribers.isEmpty }

  /// Whether a commit made through the scope of `filter` concerns no observer at all (no listener, and no stream
  /// subscriber at the scope's place).
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

  /// Adds a listener; returns the observers unsubscribed meanwhile from inside an updater, to release.
  mutating func add(_ listener: ListenerEntry<S>) -> Dropped {
    let dropped = dropUnsubscribed()
    listeners.append(listener)
    needsOldState = true
    version &+= 1
    return dropped
  }

  /// Removes a listener; returns what was removed, to release.
  mutating func removeListener(_ id: UInt64) -> Dropped {
    var removed = dropUnsubscribed()
    if let index = listeners.firstIndex(where: { $0.id == id }) {
      removed.listeners.append(listeners.remove(at: index))
    }
    recompute()
    return removed
  }

  /// Adds a subscriber; returns the observers unsubscribed meanwhile from inside an updater, to release.
  mutating func add(_ subscriber: StateSubscriber<S>) -> Dropped {
    let dropped = dropUnsubscribed()
    subscribers.append(subscriber)
    needsOldState = needsOldState || subscriber.needsOldState
    version &+= 1
    return dropped
  }

  /// Removes a subscriber; returns what was removed, to release.
  mutating func removeSubscriber(_ id: UInt64) -> Dropped {
    var removed = dropUnsubscribed()
    if let index = subscribers.firstIndex(where: { $0.id == id }) {
      removed.subscribers.append(subscribers.remove(at: index))
    }
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

  /// Drops the observers unsubscribed from inside a state updater; returns them, to release.
  private mutating func dropUnsubscribed() -> (listeners: [ListenerEntry<S>], subscribers: [StateSubscriber<S>]) {
    let hasListeners = listeners.contains { !$0.isSubscribed.isSet }
    let hasSubscribers = subscribers.contains { !$0.isSubscribed.isSet }
    guard hasListeners || hasSubscribers else { return ([], []) }
    let dropped = (listeners.filter { !$0.isSubscribed.isSet }, subscribers.filter { !$0.isSubscribed.isSet })
    listeners.removeAll { !$0.isSubscribed.isSet }
    subscribers.removeAll { !$0.isSubscribed.isSet }
    recompute()
    return dropped
  }

  private mutating func recompute() {
    version &+= 1
    needsOldState = !listeners.isEmpty || subscribers.contains { $0.needsOldState }
  }
}

/// A committed change, delivered after the store's lock is released, while the committing dispatch holds the
/// turn: to the listeners, then to the stream subscribers. Made by ``CoreState/commit(_:touching:delivering:_:)``
/// only. (Recorders' logs and undo histories are not delivered anything: the commit transition hands them the commit
/// in its own critical section.)
@usableFromInline
struct Commit<S: FeatureState> {
  @usableFromInline let old: S?
  @usableFromInline let new: S
  @usableFromInline let listeners: [ListenerEntry<S>]
  @usableFromInline let subscribers: [StateSubscriber<S>]
  /// What the recorders' logs and the undo histories let go in this commit: user values (updaters, states),
  /// released with the commit, after the store's lock.
  @usableFromInline let released: [CommitLogState<S>.Dropped]?

  @inlinable
  init(
    old: S?, new: S, listeners: [ListenerEntry<S>], subscribers: [StateSubscriber<S>],
    released: [CommitLogState<S>.Dropped]? = nil
  ) {
    self.old = old
    self.new = new
    self.listeners = listeners
    self.subscribers = subscribers
    self.released = released
  }

  /// The commit of a change through a scope that reached beyond the scope's place (an element renamed through its
  /// own scope) and concerns nobody else: `state`, the state after it, for every stream subscriber, `subscribers`,
  /// read in the commit's critical section.
  @inlinable
  static func widened(_ state: S, to subscribers: [StateSubscriber<S>]) -> Commit {
    Commit(old: nil, new: state, listeners: [], subscribers: subscribers)
  }

  /// Calls the listeners still subscribed, in registration order, then feeds the stream subscribers.
  @inlinable
  func deliver() {
    if let old {
      for entry in listeners where entry.isSubscribed.isSet {
        entry.listener(old, new)
      }
    }
    for subscriber in subscribers where subscriber.isSubscribed.isSet {
      subscriber.deliver(old: old, new: new)
    }
  }
}
