import Foundation

/// Dispatches items in reaction to the store starting, to state changes, to dispatches of given types, and
/// to notifications: Katana 6's observer interceptor, with its triggering rules.
///
/// ```swift
/// let store = Store<AppState, AppDependencies>(interceptors: [
///   ObserverInterceptor.observe([
///     .onStart([LoadSettings.self]),
///     .onDispatch(Logout.self, [ClearCache.self]),
///     .onStateChange(.typedStateChange { (old: AppState, new: AppState) in old.user != new.user }, [SyncUser.self]),
///     .onNotification(UIApplication.didBecomeActiveNotification, [Refresh.self]),
///   ])
/// ])
/// ```
///
/// ## When each kind of entry dispatches
/// - ``ObserverType/onStart(_:)``: once, at start-up. The items run after every item dispatched before the
///   store was ready.
/// - ``ObserverType/onStateChange(_:_:)``: after **every** state updater (never after a side effect) that
///   this interceptor handed on without an error, if the entry's closure returns true for the states before
///   and after it. The closure runs even when the updater changed nothing.
/// - ``ObserverType/onDispatch(_:_:)``: after every item of **exactly** the given type (no subclass or
///   protocol matching), side effects included, handed on without an error.
/// - ``ObserverType/onNotification(_:_:)``: each time the notification is posted, from the end of the
///   store's state initializer until the store shuts down.
///
/// An item type whose failable initializer returns nil dispatches nothing. Entries act independently: two
/// entries that match the same dispatch both dispatch their items. Items are dispatched in the order of
/// the entries, then of the types in each entry.
///
/// ## How the items are dispatched
/// The interceptor hands its items to the store with ``AnySideEffectContext/anySend(_:)``, synchronously,
/// right after the observed item was handled (for a state updater, while that updater still holds its
/// turn), so they enter the store's mailbox behind whatever is already waiting there. Nobody awaits them:
/// their errors are not reported, as in Katana 6. Dispatch a side effect that handles its own errors when
/// the outcome matters.
///
/// - Important: Notifications posted before start-up reaches the interceptors (the store initialises them
///   once its state initializer has returned) are not observed, as in Katana 6. Notifications posted after
///   that, while the store is still starting, are observed: their items wait in the mailbox behind the
///   items dispatched before, and behind the ``ObserverType/onStart(_:)`` items. Once `waitUntilReady()`
///   has returned, every post is observed.
///
/// - Important: The notification observers are removed when the store shuts down or is released; they do
///   not keep the store alive. Items an observer dispatches while the store shuts down are dropped (their
///   dispatch fails with ``StoreError/storeShutDown``, which nobody awaits).
///
/// - Important: The items an observer dispatches go through the store's interceptors too, this one
///   included. An entry that its own items trigger again (an ``ObserverType/onDispatch(_:_:)`` entry that
///   observes the type it dispatches, an ``ObserverType/onStateChange(_:_:)`` closure that stays true)
///   dispatches forever.
///
/// - Important: An ``ObserverType/onStateChange(_:_:)`` entry keeps the state from before each state
///   updater until the updater has been handled, so the updater's mutation copies the storage it touches,
///   as with a listener.
public enum ObserverInterceptor {
  /// One thing to observe, and the types of the items to dispatch when it happens.
  public enum ObserverType: Sendable {
    /// Decides, from the states before and after a state updater, whether to dispatch.
    public typealias StateChangeObserver = @Sendable (_ prev: any State, _ current: any State) -> Bool

    /// A ``StateChangeObserver`` for a known state type; see ``typedStateChange(_:)``.
    public typealias TypedStateChangeObserver<S: State> = @Sendable (_ prev: S, _ current: S) -> Bool

    /// After each state updater handed on without an error, if `observer` returns true for the states
    /// before and after it, dispatches an instance of each type in `dispatchable`.
    ///
    /// `observer` runs for every state updater, even one that changed nothing, and never for side effects.
    case onStateChange(_ observer: StateChangeObserver, _ dispatchable: [any StateObserverDispatchable.Type])

    /// Each time `notification` is posted to the observer interceptor's notification center, dispatches an
    /// instance of each type in `dispatchable`.
    case onNotification(_ notification: Notification.Name, _ dispatchable: [any NotificationObserverDispatchable.Type])

    /// After each item of exactly type `dispatchable` (state updater or side effect) handed on without an
    /// error, dispatches an instance of each type in `dispatchables`.
    case onDispatch(_ dispatchable: any Dispatchable.Type, _ dispatchables: [any DispatchObserverDispatchable.Type])

    /// When the store starts, dispatches an instance of each type in `dispatchable`. These items run after
    /// every item dispatched before the store was ready.
    case onStart(_ dispatchable: [any OnStartObserverDispatchable.Type])

    /// Turns a closure over the store's state type into a ``StateChangeObserver``.
    ///
    /// ```swift
    /// .onStateChange(.typedStateChange { (old: AppState, new: AppState) in old.user != new.user }, [SyncUser.self])
    /// ```
    ///
    /// The resulting observer returns false when either state is not an `S`.
    public static func typedStateChange<S: State>(_ closure: @escaping TypedStateChangeObserver<S>)
      -> StateChangeObserver
    {
      { prev, current in
        guard let prev = prev as? S, let current = current as? S else { return false }
        return closure(prev, current)
      }
    }
  }

  /// Returns an interceptor that dispatches items when the things in `items` happen.
  ///
  /// See ``ObserverInterceptor`` for the exact rules.
  ///
  /// - Parameters:
  ///   - items: What to observe, and what to dispatch then.
  ///   - notificationCenter: Where ``ObserverType/onNotification(_:_:)`` entries listen. Tests pass a
  ///     private `NotificationCenter()`.
  public static func observe(_ items: [ObserverType], notificationCenter: NotificationCenter = .default)
    -> StoreInterceptor
  {
    let reactions = DispatchReactions(items)
    return { context in
      let observation = NotificationObservation.start(items, center: notificationCenter, context: context)
      for case .onStart(let types) in items {
        for type in types {
          if let item = type.init() {
            context.anySend(item)
          }
        }
      }
      let keepAlive = observation.flatMap { retainUntilShutdown($0, context: context) }
      return { next in
        if reactions.isEmpty, keepAlive == nil {
          return next
        }
        return { item in
          _ = keepAlive
          try await reactions.handle(item, next: next, context: context)
        }
      }
    }
  }

  /// Arranges for `observation` to stop when the store shuts down. Returns it back if the context is not a
  /// store's (a test double): the interceptor's handler then keeps it, and it stops when the handler is
  /// released.
  private static func retainUntilShutdown(_ observation: NotificationObservation, context: any AnySideEffectContext)
    -> NotificationObservation?
  {
    guard let internals = context.storeInternals else { return observation }
    internals.addShutdownHandler { observation.stop() }
    return nil
  }
}

/// The entries that react to dispatches (``ObserverInterceptor/ObserverType/onStateChange(_:_:)`` and
/// ``ObserverInterceptor/ObserverType/onDispatch(_:_:)``), in their original order.
private struct DispatchReactions: Sendable {
  enum Reaction: Sendable {
    case stateChange(ObserverInterceptor.ObserverType.StateChangeObserver, [any StateObserverDispatchable.Type])
    case dispatch(ObjectIdentifier, [any DispatchObserverDispatchable.Type])
  }

  let reactions: [Reaction]
  let observesStateChanges: Bool
  let observedTypes: Set<ObjectIdentifier>

  init(_ items: [ObserverInterceptor.ObserverType]) {
    var reactions: [Reaction] = []
    var observedTypes = Set<ObjectIdentifier>()
    for item in items {
      switch item {
      case .onStateChange(let observer, let types):
        reactions.append(.stateChange(observer, types))
      case .onDispatch(let type, let types):
        reactions.append(.dispatch(ObjectIdentifier(type), types))
        observedTypes.insert(ObjectIdentifier(type))
      case .onNotification, .onStart:
        break
      }
    }
    self.reactions = reactions
    self.observedTypes = observedTypes
    observesStateChanges = reactions.contains {
      if case .stateChange = $0 { return true }
      return false
    }
  }

  var isEmpty: Bool { reactions.isEmpty }

  /// Hands `item` on, then dispatches what the entries call for. Items no entry can react to are handed on
  /// without reading the state.
  func handle(_ item: any Dispatchable, next: StoreInterceptorNext, context: any AnySideEffectContext)
    async throws
  {
    let itemType = ObjectIdentifier(type(of: item))
    // The cast costs about 100 ns: only pay for it when a state-change entry needs the answer.
    let isSideEffect = observesStateChanges ? item is any AnySideEffect : true
    guard (observesStateChanges && !isSideEffect) || observedTypes.contains(itemType) else {
      try await next(item)
      return
    }
    let prev = context.getAnyState()
    try await next(item)
    let current = context.getAnyState()
    for reaction in reactions {
      switch reaction {
      case .stateChange(let observer, let types):
        guard !isSideEffect, observer(prev, current) else { continue }
        for type in types {
          if let followUp = type.init(prevState: prev, currentState: current) {
            context.anySend(followUp)
          }
        }
      case .dispatch(let observed, let types):
        guard observed == itemType else { continue }
        for type in types {
          if let followUp = type.init(dispatchedItem: item, prevState: prev, currentState: current) {
            context.anySend(followUp)
          }
        }
      }
    }
  }
}

/// The notification observers one store registered; removes them once, when stopped or released.
final class NotificationObservation: @unchecked Sendable {
  // Sendable: `tokens` is only touched under its lock; the center is thread-safe.
  private let center: NotificationCenter
  private let tokens: Locked<[any NSObjectProtocol]?>

  private init(center: NotificationCenter, tokens: [any NSObjectProtocol]) {
    self.center = center
    self.tokens = Locked(tokens)
  }

  /// Registers an observer for each ``ObserverInterceptor/ObserverType/onNotification(_:_:)`` entry of
  /// `items`, dispatching through `context`. Returns nil if there is none.
  static func start(
    _ items: [ObserverInterceptor.ObserverType], center: NotificationCenter, context: any AnySideEffectContext
  ) -> NotificationObservation? {
    var tokens: [any NSObjectProtocol] = []
    for case .onNotification(let name, let types) in items {
      // `queue: nil`: the block runs synchronously on the posting thread, as in Katana 6.
      tokens.append(
        center.addObserver(forName: name, object: nil, queue: nil) { notification in
          for type in types {
            if let item = type.init(notification: notification) {
              context.anySend(item)
            }
          }
        })
    }
    return tokens.isEmpty ? nil : NotificationObservation(center: center, tokens: tokens)
  }

  /// Removes the observers; later calls do nothing.
  func stop() {
    let tokens = tokens.withLock { tokens in
      defer { tokens = nil }
      return tokens ?? []
    }
    for token in tokens {
      center.removeObserver(token)
    }
  }

  deinit {
    stop()
  }
}
