extension Store {
  /// Dispatches a state updater and returns once its change is committed.
  ///
  /// When this returns, ``state`` includes the change and every listener registered at commit time has been
  /// called with it. The updater takes its place in the mailbox when this call arrives, and waits there if
  /// other updaters are ahead of it.
  ///
  /// - Throws: An interceptor's error (the updater is then not applied, unless the interceptor threw after
  ///   calling `next`); `CancellationError` if the calling task is cancelled before the updater's turn comes
  ///   (the updater is then withdrawn, never applied); ``StoreError/deadlock(_:)`` if called, and awaited,
  ///   from an interceptor that is running for another state updater of this store;
  ///   ``StoreError/storeShutDown`` or ``StoreError/startupFailed(_:)``.
  ///
  /// - Important: Once an updater has its turn it is applied even if the caller is cancelled; interceptors
  ///   see the cancellation (`Task.isCancelled`) and may reject it by throwing.
  @inlinable @inline(__always)
  public nonisolated(nonsending) func dispatch<U: StateUpdater>(_ dispatchable: U) async throws
  where U.StateType == S {
    try await core.dispatch(dispatchable)
  }

  /// Dispatches a returning state updater and returns the value it computed from the state it produced, once its
  /// change is committed.
  ///
  /// ```swift
  /// let wentNegative = try await store.dispatch(Decrement())   // Decrement: ReturningStateUpdater
  /// ```
  ///
  /// The value comes from the updater's own commit, so no other item can land between the change and the value.
  /// Otherwise behaves like ``dispatch(_:)-(U)``. (To dispatch it as a plain updater, without its value, write
  /// `try await store.dispatch(updater) as Void`.)
  ///
  /// - Throws: What ``dispatch(_:)-(U)`` throws; ``StoreError/returnValueUnavailable(_:)`` if the dispatch returned
  ///   normally without committing the updater: an interceptor returned without calling `next`, handed it an item of
  ///   another type, or caught the error of its commit.
  @inlinable @inline(__always)
  public nonisolated(nonsending) func dispatch<Updater: ReturningStateUpdater>(_ dispatchable: Updater) async throws
    -> Updater.ReturnValue where Updater.StateType == S
  {
    try await core.dispatchReturning(dispatchable)
  }

  /// Dispatches a side effect, runs its body in the calling task, and returns when the body returns.
  ///
  /// The side effect starts at once, concurrently with other side effects and updaters (before the store
  /// is ready, it first waits for start-up and for everything dispatched earlier).
  ///
  /// - Throws: The body's error, unchanged, through any depth of nested dispatches; an interceptor's error;
  ///   ``StoreError/storeShutDown`` or ``StoreError/startupFailed(_:)``.
  ///
  /// - Important: Cancelling the calling task cancels the body, cooperatively: the body sees
  ///   `Task.isCancelled`, and the updaters it then dispatches are withdrawn with `CancellationError`.
  @inlinable @inline(__always)
  public nonisolated(nonsending) func dispatch<E: SideEffect>(_ dispatchable: E) async throws
  where E.StateType == S, E.Dependencies == D {
    try await core.dispatch(dispatchable, context: SideEffectContext(core: core, dependencies: dependencies))
  }

  /// Dispatches a returning side effect in the calling task and returns its value.
  ///
  /// Behaves like ``dispatch(_:)-(E)``.
  ///
  /// - Throws: What the side effect throws; ``StoreError/returnValueUnavailable(_:)`` if an interceptor did
  ///   not hand it on (or replaced it with a state updater);
  ///   ``StoreError/returnValueTypeMismatch(expected:actual:)`` if an interceptor replaced it with a side
  ///   effect that returns another type.
  @inlinable @inline(__always)
  public nonisolated(nonsending) func dispatch<R: ReturningSideEffect>(_ dispatchable: R) async throws
    -> R.ReturnValue
  {
    try await core.dispatch(dispatchable, context: SideEffectContext(core: core, dependencies: dependencies))
  }

  /// Dispatches any item, checking at run time what it is and that its types match the store.
  ///
  /// Returns the item's outcome: `()` for state updaters and for side effects that return nothing, the
  /// value of a ``ReturningSideEffect``. Otherwise behaves like the typed `dispatch` for the item's kind.
  ///
  /// - Throws: ``StoreError/ambiguousDispatchable(_:)``, ``StoreError/unsupportedDispatchable(_:)``,
  ///   ``StoreError/wrongStateType(expected:actual:)``, ``StoreError/wrongContextType(expected:actual:)``,
  ///   and what the typed dispatch throws.
  @discardableResult
  public nonisolated(nonsending) func anyDispatch(_ dispatchable: any Dispatchable) async throws -> any Sendable {
    try await core.anyDispatch(dispatchable)
  }

  /// Hands a state updater to the store now, from synchronous code, and returns its handle.
  ///
  /// The updater's place in the mailbox is fixed by this call: successive `send`s from one thread apply in
  /// call order, and before any later `dispatch`. The store applies it whether or not the handle is
  /// awaited: right here, before `send` returns (listeners included), if the store is idle and has no
  /// interceptors; otherwise later, in a task it owns.
  ///
  /// Calling it from inside a state updater returns a handle that has failed with
  /// ``StoreError/dispatchFromStateUpdater(_:)``.
  @inlinable @discardableResult
  public nonisolated func send<U: StateUpdater>(_ dispatchable: U) -> DispatchHandle<Void> where U.StateType == S {
    core.send(dispatchable)
  }

  /// Hands a side effect to the store now and returns its handle.
  ///
  /// The side effect starts, in a task the store owns, once every item that entered the mailbox before it
  /// has started and every state updater among them is committed: fire-and-forget code keeps its order.
  /// Cancelling the handle cancels the side effect; shutdown cancels it too.
  @inlinable @discardableResult
  public nonisolated func send<E: SideEffect>(_ dispatchable: E) -> DispatchHandle<Void>
  where E.StateType == S, E.Dependencies == D {
    core.send(dispatchable, context: SideEffectContext(core: core, dependencies: dependencies))
  }

  /// Hands a returning side effect to the store now and returns its handle, which yields the value.
  ///
  /// See ``send(_:)-(E)``.
  @inlinable @discardableResult
  public nonisolated func send<R: ReturningSideEffect>(_ dispatchable: R) -> DispatchHandle<R.ReturnValue> {
    core.send(dispatchable, context: SideEffectContext(core: core, dependencies: dependencies))
  }

  /// Hands any item to the store now, checking what it is at run time, and returns its handle.
  ///
  /// See ``send(_:)-(U)`` and ``anyDispatch(_:)``; an item of neither or both kinds gives a
  /// handle that has already failed.
  @discardableResult
  public nonisolated func anySend(_ dispatchable: any Dispatchable) -> DispatchHandle<any Sendable> {
    core.anySend(dispatchable)
  }
}
