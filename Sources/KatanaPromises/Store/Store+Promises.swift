import Katana

// Katana 6's promise-returning dispatch. In synchronous code `store.dispatch(x)` picks these; in async code
// `try await store.dispatch(x)` picks the store's own.

extension Store {
  /// Dispatches a state updater and returns a promise that resolves once its change is committed: Katana
  /// 6's `dispatch`.
  ///
  /// The dispatch starts now, whether or not anyone observes the promise; updaters dispatched one after
  /// another from a thread apply in that order. `retry` on the promise dispatches the updater again,
  /// interceptors included; cancelling the promise withdraws the updater if it has not been applied.
  /// The promise does not keep the store alive: once the store is released, `retry` rejects with
  /// `StoreError.storeShutDown`.
  ///
  /// The promise rejects with what `try await store.dispatch(updater)` throws.
  @inlinable @discardableResult
  public nonisolated func dispatch<U: StateUpdater>(_ dispatchable: U) -> Promise<Void> where U.StateType == S {
    noteHeldTurn(Promise.dispatching { [weak self] in self?.send(dispatchable) })
  }

  /// Dispatches a side effect and returns a promise that resolves when its body returns: Katana 6's
  /// `dispatch`.
  ///
  /// The side effect starts now; `retry` dispatches it again, interceptors included; cancelling the promise
  /// cancels it. The promise rejects with the body's error.
  @inlinable @discardableResult
  public nonisolated func dispatch<E: SideEffect>(_ dispatchable: E) -> Promise<Void>
  where E.StateType == S, E.Dependencies == D {
    noteHeldTurn(Promise.dispatching { [weak self] in self?.send(dispatchable) })
  }

  /// Dispatches a returning side effect and returns a promise of its value: Katana 6's `dispatch`.
  ///
  /// Behaves like ``dispatch(_:)-(E)``.
  @inlinable @discardableResult
  public nonisolated func dispatch<R: ReturningSideEffect>(_ dispatchable: R) -> Promise<R.ReturnValue> {
    noteHeldTurn(Promise.dispatching { [weak self] in self?.send(dispatchable) })
  }

  /// Dispatches any item and returns a promise of its outcome: `()` for updaters and side effects, the
  /// value of a returning side effect. Katana 6's `anyDispatch`, with `any Sendable` for `Any`.
  ///
  /// An item that is neither kind, or both, rejects with a `StoreError` (Katana 6 crashed).
  @inlinable @discardableResult
  public nonisolated func anyDispatch(_ dispatchable: any Dispatchable) -> Promise<any Sendable> {
    noteHeldTurn(Promise.dispatching { [weak self] in self?.anySend(dispatchable) })
  }
}

extension AnySideEffectContext {
  /// Dispatches a state updater from a side effect and returns a promise that resolves once it is
  /// committed: Katana 6's context `dispatch`, for synchronous side effects that block in
  /// ``Hydra/await(in:_:)-(Context?,Promise<T>)``.
  ///
  /// Like ``Katana/Store/dispatch(_:)-(U)``, the dispatch starts now, and `retry` dispatches again (in
  /// Katana 6, retrying a context's promise did not re-dispatch).
  @discardableResult
  public func dispatch<U: AnyStateUpdater>(_ dispatchable: U) -> Promise<Void> {
    noteHeldTurn(Promise.dispatching({ self.anySend(dispatchable) }, transform: { _ in () }))
  }

  /// Dispatches a side effect from a side effect and returns a promise that resolves when its body returns;
  /// see ``dispatch(_:)-(U)``.
  @discardableResult
  public func dispatch<E: AnySideEffect>(_ dispatchable: E) -> Promise<Void> {
    noteHeldTurn(Promise.dispatching({ self.anySend(dispatchable) }, transform: { _ in () }))
  }

  /// Dispatches a returning side effect from a side effect and returns a promise of its value; see
  /// ``dispatch(_:)-(U)``.
  ///
  /// The promise rejects with `StoreError.returnValueTypeMismatch(expected:actual:)` if an interceptor
  /// replaced the side effect with one returning another type (Katana 6 crashed).
  @discardableResult
  public func dispatch<R: ReturningSideEffect>(_ dispatchable: R) -> Promise<R.ReturnValue> {
    noteHeldTurn(Promise.dispatching({ self.anySend(dispatchable) }, transform: { try returnValue($0, of: R.self) }))
  }

  /// Dispatches any item from a side effect and returns a promise of its outcome; see
  /// ``Katana/Store/anyDispatch(_:)``.
  @discardableResult
  public func anyDispatch(_ dispatchable: any Dispatchable) -> Promise<any Sendable> {
    noteHeldTurn(Promise.dispatching { self.anySend(dispatchable) })
  }
}

extension Store {
  /// Records `promise` for ``HeldTurn`` if the caller is an interceptor holding this store's turn; returns it.
  @usableFromInline
  nonisolated func noteHeldTurn<T>(_ promise: Promise<T>) -> Promise<T> {
    HeldTurn.noteDispatch(promise, to: heldTurnToken)
    return promise
  }
}

extension AnySideEffectContext {
  /// Records `promise` for ``HeldTurn`` if the caller is an interceptor holding the turn of this context's
  /// store; returns it.
  func noteHeldTurn<T>(_ promise: Promise<T>) -> Promise<T> {
    HeldTurn.noteDispatch(promise, to: HeldTurn.token(of: storeInternals))
    return promise
  }
}
