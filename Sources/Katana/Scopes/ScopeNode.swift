/// A scope's place in its store, with the store's cached answer to which slice observers its commits concern.
///
/// Each scope has one (see ``ScopeCore``). The store caches, in the node, the observers of slices that a
/// commit through the scope may change (``Observers/slices(concernedBy:)``), so that a commit through one
/// scope costs the same however many observers other scopes have.
@usableFromInline
final class ScopeNode: @unchecked Sendable {
  // Sendable: `location` and `storeID` are immutable; `epoch` and `concerned` are only touched under the lock
  // of the store the node belongs to.

  @usableFromInline let location: ScopeLocation
  /// The store whose scope this is.
  @usableFromInline let storeID: ObjectIdentifier
  /// The store's ``Observers/sliceEpoch`` when ``concerned`` was computed (0: never).
  @usableFromInline var epoch: UInt64 = 0
  /// The index of the concerned observers in the store's ``Observers/issued``, or -1 if none.
  @usableFromInline var concerned = -1

  @usableFromInline
  init(location: ScopeLocation, storeID: ObjectIdentifier) {
    self.location = location
    self.storeID = storeID
  }
}

/// An observer of one scope's slice, as the root store keeps it.
@usableFromInline
struct SliceEntry<S: State> {
  @usableFromInline let location: ScopeLocation
  @usableFromInline let subscriber: StateSubscriber<S>
  /// Cleared when the observer unsubscribes: it is skipped from then on, and dropped at the next change of
  /// observers if it was unsubscribed from inside a state updater (where the lock is held).
  @usableFromInline let isSubscribed: AtomicFlag

  init(location: ScopeLocation, subscriber: StateSubscriber<S>, isSubscribed: AtomicFlag) {
    self.location = location
    self.subscriber = subscriber
    self.isSubscribed = isSubscribed
  }
}

/// The subscribers of some slice observers, shared by the commits they concern.
@usableFromInline
final class SliceList<S: State>: Sendable {
  @usableFromInline let subscribers: [StateSubscriber<S>]

  init(_ subscribers: [StateSubscriber<S>]) {
    self.subscribers = subscribers
  }
}
