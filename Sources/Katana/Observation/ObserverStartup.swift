/// How an observer starts: the one primitive behind every observer whose first value is computed after it is
/// registered (a scope's listeners and streams, projections at the root and in scopes).
///
/// An observer is registered under the store's lock, so that it gets every commit after that point; but its
/// first value may run user code (a key path's getter, a projection), which never runs under the lock, so it is
/// computed afterwards, on the subscribing thread, while a commit may already be delivering to the observer on
/// another. The machine keeps the two in order: deliveries that arrive before the observer has started are
/// queued; the subscriber handles its first value, then drains the queue; once the queue is empty the observer
/// is live and deliveries are handled where they arrive. So the observer handles its first value first, then
/// every delivery exactly once, in delivery order, and never two at a time (deliveries themselves never
/// overlap: each is made while its commit holds the store's turn).
///
/// Pure: the caller keeps it under a lock and handles what it returns after unlocking. `ObserverStartupStateMachineTests`
/// checks it over every order of a subscriber's steps and a few deliveries.
struct ObserverStartupMachine<Event> {
  enum Phase {
    /// The subscriber has not handled its first value and the deliveries queued since.
    case starting([Event])
    /// Deliveries are handled where they arrive.
    case live
  }

  private(set) var phase = Phase.starting([])

  init() {}

  var isLive: Bool {
    if case .live = phase { return true }
    return false
  }

  /// A delivery arrives. Returns it if the caller handles it now (the observer is live); nil if it was queued
  /// for the subscriber.
  mutating func deliver(_ event: Event) -> Event? {
    switch phase {
    case .live:
      return event
    case .starting(var queue):
      phase = .starting([])  // Keeps `queue` uniquely referenced while it grows.
      queue.append(event)
      phase = .starting(queue)
      return nil
    }
  }

  /// The subscriber has handled its first value and every delivery this returned before: returns the deliveries
  /// queued since, for it to handle in order before calling again; an empty array once there are none, and the
  /// observer is then live.
  mutating func takeQueued() -> [Event] {
    switch phase {
    case .live:
      return []
    case .starting(let queue):
      phase = queue.isEmpty ? .live : .starting([])
      return queue
    }
  }
}

/// ``ObserverStartupMachine`` behind a lock, with a flag that spares live deliveries the lock.
@usableFromInline
final class ObserverStartup<Event: Sendable>: Sendable {
  private let machine = Locked(ObserverStartupMachine<Event>())
  /// Set (release) when the machine goes live; a delivery that reads it set (acquire) handles its event at once.
  @usableFromInline let live = AtomicFlag()

  @usableFromInline init() {}

  /// Whether deliveries are handled where they arrive: the hot path, one flag read. Otherwise, deliver with
  /// ``deliverWhileStarting(_:_:)``.
  @inlinable var isLive: Bool { live.isSet }

  /// Handles `event` with `handle` now if the observer has gone live meanwhile; queues it for the subscriber
  /// otherwise.
  @usableFromInline func deliverWhileStarting(_ event: Event, _ handle: (Event) -> Void) {
    if let now = machine.withLock({ $0.deliver(event) }) {
      handle(now)
    }
  }

  /// Called by the subscriber once it has handled its first value: handles the deliveries that came meanwhile,
  /// in order, then makes the observer live.
  @usableFromInline func finishStart(_ handle: (Event) -> Void) {
    while true {
      let queued = machine.withLock { machine -> [Event] in
        let queued = machine.takeQueued()
        if machine.isLive { live.set(true) }
        return queued
      }
      if queued.isEmpty { return }
      for event in queued {
        handle(event)
      }
    }
  }
}

/// How an observer takes its first value, given the state at registration.
@usableFromInline
enum ObserverStart<S: FeatureState> {
  /// In the critical section that registers the observer: for a first value that runs no user code (pushing
  /// the state into a new stream, keeping it for later). The observer is live at once, so every delivery is
  /// handled by the commit that makes it, while that commit holds the store's turn: listeners stay one call at
  /// a time across the whole store.
  case underLock((S) -> Void)
  /// Outside the lock, after registration: for a first value that runs user code (a key path's getter, a
  /// projection). Deliveries that race it wait, and the subscribing thread handles them after it, in order
  /// (``ObserverStartup``): fit for streams, whose consumers run on their own.
  case afterRegistration((S) -> Void)
}
