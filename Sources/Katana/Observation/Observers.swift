/// A registered listener.
struct ListenerEntry<S: State> {
  let id: UInt64
  let listener: StoreListener<S>
}

/// A stream subscriber, as the store sees it: something to hand each committed state to.
class StateSubscriber<S: State>: @unchecked Sendable {  // Sendable: see each subclass.
  let id: UInt64

  init(id: UInt64) {
    self.id = id
  }

  /// Whether ``receive(old:new:)`` needs the state before the change (which costs a copy of whatever the
  /// change mutates).
  var needsOldState: Bool { false }

  /// Called once per committed change, in commit order, while the committing dispatch holds the turn (so
  /// never concurrently with itself), outside the store's lock.
  func receive(old: S?, new: S) {}

  /// Ends the subscriber's stream (store shutdown).
  func finish() {}
}

/// Subscriber of ``Store/states(buffering:)``.
final class StateStreamSubscriber<S: State>: StateSubscriber<S>, @unchecked Sendable {
  // Sendable: only immutable fields.
  let buffer: StreamBuffer<S>

  init(id: UInt64, buffer: StreamBuffer<S>) {
    self.buffer = buffer
    super.init(id: id)
  }

  override func receive(old: S?, new: S) {
    buffer.push(new)
  }

  override func finish() {
    buffer.finish()
  }
}

/// Subscriber of ``Store/changes(buffering:)``.
final class ChangeStreamSubscriber<S: State>: StateSubscriber<S>, @unchecked Sendable {
  // Sendable: only immutable fields.
  let buffer: StreamBuffer<StateChange<S>>

  init(id: UInt64, buffer: StreamBuffer<StateChange<S>>) {
    self.buffer = buffer
    super.init(id: id)
  }

  override var needsOldState: Bool { true }

  override func receive(old: S?, new: S) {
    // Internal invariant: the store captures the old state whenever a subscriber needs it.
    guard let old else { preconditionFailure("Katana internal error: change delivered without old state") }
    buffer.push(StateChange(old: old, new: new))
  }

  override func finish() {
    buffer.finish()
  }
}

/// Subscriber of ``Store/values(of:buffering:)``: keeps only the projected value, so that the store's state
/// is not retained between changes.
final class ProjectionSubscriber<S: State, Value: Equatable & Sendable>: StateSubscriber<S>, @unchecked Sendable {
  // Sendable: `last` is only touched by `receive`, which the store never runs concurrently with itself.
  private let keyPath: any KeyPath<S, Value> & Sendable
  private var last: Value
  let buffer: StreamBuffer<Value>

  init(id: UInt64, keyPath: any KeyPath<S, Value> & Sendable, initial: Value, buffer: StreamBuffer<Value>) {
    self.keyPath = keyPath
    self.last = initial
    self.buffer = buffer
    super.init(id: id)
  }

  override func receive(old: S?, new: S) {
    let value = new[keyPath: keyPath]
    guard value != last else { return }
    last = value
    buffer.push(value)
  }

  override func finish() {
    buffer.finish()
  }
}

/// Everyone who observes a store's changes. Lives inside the store's locked state.
struct Observers<S: State> {
  private(set) var listeners: [ListenerEntry<S>] = []
  private(set) var subscribers: [StateSubscriber<S>] = []
  /// Whether a commit must keep a copy of the state before the change.
  private(set) var needsOldState = false

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
struct Commit<S: State> {
  let old: S?
  let new: S
  let listeners: [ListenerEntry<S>]
  let subscribers: [StateSubscriber<S>]

  /// Calls the listeners in registration order, then feeds the stream subscribers.
  func deliver() {
    if let old {
      for entry in listeners {
        entry.listener(old, new)
      }
    }
    for subscriber in subscribers {
      subscriber.receive(old: old, new: new)
    }
  }
}
