import Katana

/// Katana 6's `AnyStore`: a store of any state and dependencies, for code that only dispatches and
/// listens.
///
/// ``Katana/Store`` and ``PartialStore`` conform. The typed `dispatch` overloads come from
/// ``anySend(_:)``, so they check the item's types when it is handled; like the store's, their promises
/// start the dispatch at once, and `retry` dispatches again. A promise does not keep the store alive:
/// `retry` after the store is released rejects with `StoreError.storeShutDown`.
public protocol AnyStore: AnyObject, Sendable {
  /// The store's latest committed state.
  var anyState: any State { get }

  /// Dispatches any item and returns a promise of its outcome; see
  /// ``Katana/Store/anyDispatch(_:)``.
  @discardableResult
  func anyDispatch(_ dispatchable: any Dispatchable) -> Promise<any Sendable>

  /// Hands any item to the store now and returns its handle; see `Store.anySend(_:)`.
  @discardableResult
  func anySend(_ dispatchable: any Dispatchable) -> DispatchHandle<any Sendable>

  /// Adds a listener that gets the states as `any State`; see `Store.addAnyListener(_:)`.
  @discardableResult
  func addAnyListener(_ listener: @escaping AnyStoreListener) -> StoreUnsubscribe
}

extension AnyStore {
  /// Dispatches a state updater; see ``Katana/Store/dispatch(_:)-(U)``.
  @discardableResult
  public func dispatch<U: AnyStateUpdater>(_ dispatchable: U) -> Promise<Void> {
    noteHeldTurn(Promise.dispatching({ [send = sendIfAlive] in send(dispatchable) }, transform: { _ in () }))
  }

  /// Dispatches a side effect; see ``Katana/Store/dispatch(_:)-(E)``.
  @discardableResult
  public func dispatch<E: AnySideEffect>(_ dispatchable: E) -> Promise<Void> {
    noteHeldTurn(Promise.dispatching({ [send = sendIfAlive] in send(dispatchable) }, transform: { _ in () }))
  }

  /// Dispatches a returning side effect and returns a promise of its value; see
  /// ``Katana/Store/dispatch(_:)-(R)``.
  @discardableResult
  public func dispatch<R: ReturningSideEffect>(_ dispatchable: R) -> Promise<R.ReturnValue> {
    noteHeldTurn(
      Promise.dispatching(
        { [send = sendIfAlive] in send(dispatchable) }, transform: { try returnValue($0, of: R.self) }))
  }
}

extension AnyStore {
  /// Records `promise` for ``HeldTurn`` if the caller is an interceptor holding the turn of the store behind
  /// this one; returns it.
  func noteHeldTurn<T>(_ promise: Promise<T>) -> Promise<T> {
    HeldTurn.noteDispatch(promise, to: (self as? any HeldTurnTokenProviding)?.heldTurnToken)
    return promise
  }

  /// `anySend`, for promise bodies (which `retry` runs again): does not keep the store alive.
  var sendIfAlive: @Sendable (any Dispatchable) -> DispatchHandle<any Sendable>? {
    if let partial = self as? any StoreWrapper { return partial.sendToStoreIfAlive }
    return { [weak self] in self?.anySend($0) }
  }
}

/// A store, or a wrapper around one, that knows its store's ``HeldTurn`` token (nil once the store is gone).
protocol HeldTurnTokenProviding {
  var heldTurnToken: HeldTurn.StoreToken? { get }
}

/// A wrapper around a store, such as ``PartialStore``: promise bodies hold the store weakly, not the wrapper.
protocol StoreWrapper {
  /// Sends to the wrapped store, or returns nil once it is gone.
  var sendToStoreIfAlive: @Sendable (any Dispatchable) -> DispatchHandle<any Sendable>? { get }
}

extension Store: HeldTurnTokenProviding {
  nonisolated var heldTurnToken: HeldTurn.StoreToken? {
    attachment(HeldTurn.StoreToken.self) { HeldTurn.StoreToken() }
  }
}

extension Store: AnyStore {
  /// The store's latest committed state, as `any State`.
  public nonisolated var anyState: any State { state }
}

/// Katana 6's `PartialStore`: a store whose state type is known and whose dependencies are not, to hand to
/// code that reads the state, listens and dispatches.
///
/// In Katana 6 `Store` was a subclass of `PartialStore`; an actor cannot be, so wrap it:
///
/// ```swift
/// let partial = PartialStore(store)   // Katana 6: let partial: PartialStore<AppState> = store
/// partial.dispatch(AddTodo(title: "eggs"))
/// ```
public final class PartialStore<S: State>: AnyStore, StoreWrapper, HeldTurnTokenProviding {
  private let getState: @Sendable () -> S
  private let sendAny: @Sendable (any Dispatchable) -> DispatchHandle<any Sendable>
  /// `sendAny` for promise bodies, which `retry` runs again: it does not keep the store alive.
  let sendToStoreIfAlive: @Sendable (any Dispatchable) -> DispatchHandle<any Sendable>?
  private let listen: @Sendable (@escaping StoreListener<S>) -> StoreUnsubscribe
  private let tokenOfStore: @Sendable () -> HeldTurn.StoreToken?

  /// Wraps `store`. The wrapper keeps the store alive.
  public init<D: SideEffectDependencyContainer>(_ store: Store<S, D>) {
    getState = { store.state }
    sendAny = { store.anySend($0) }
    sendToStoreIfAlive = { [weak store] in store?.anySend($0) }
    listen = { store.addListener($0) }
    tokenOfStore = { [weak store] in store?.heldTurnToken }
  }

  var heldTurnToken: HeldTurn.StoreToken? { tokenOfStore() }

  /// The store's latest committed state (`S()` until the store is ready).
  public var state: S { getState() }

  /// The store's latest committed state, as `any State`.
  public var anyState: any State { getState() }

  /// Dispatches any item; see ``Katana/Store/anyDispatch(_:)``.
  @discardableResult
  public func anyDispatch(_ dispatchable: any Dispatchable) -> Promise<any Sendable> {
    noteHeldTurn(Promise.dispatching { [send = sendToStoreIfAlive] in send(dispatchable) })
  }

  /// Hands any item to the store now; see `Store.anySend(_:)`.
  @discardableResult
  public func anySend(_ dispatchable: any Dispatchable) -> DispatchHandle<any Sendable> {
    sendAny(dispatchable)
  }

  /// Adds a listener; see `Store.addListener(_:)`.
  @discardableResult
  public func addListener(_ listener: @escaping StoreListener<S>) -> StoreUnsubscribe {
    listen(listener)
  }

  /// Adds a listener that gets the states as `any State`; see `Store.addAnyListener(_:)`.
  @discardableResult
  public func addAnyListener(_ listener: @escaping AnyStoreListener) -> StoreUnsubscribe {
    listen { old, new in listener(old, new) }
  }
}
