import Katana

extension Promise {
  /// A dispatch promise, Katana 6 style: `send` hands the item to the store now (so that promises made one
  /// after another dispatch in that order), the handle's outcome settles the promise on the completing
  /// thread, cancelling the promise cancels the dispatch, and `retry` sends the item again.
  ///
  /// `send` returns nil once the store is gone (callers capture it weakly, so that a promise does not keep
  /// its store alive): the promise then rejects with `StoreError.storeShutDown`.
  @inlinable
  package static func dispatching(_ send: @escaping @Sendable () -> DispatchHandle<Value>?) -> Promise<Value> {
    Promise(eager: { resolver in
      guard let handle = send() else { return resolver.reject(StoreError.storeShutDown) }
      if handle.isAppliedOnSend, let done = () as? Value {
        resolver.resolve(done)
        return
      }
      handle.whenComplete(resolver.settle)
      resolver.onCancel { handle.cancel() }
    })
  }

  /// A dispatch promise whose value is the handle's, converted by `transform`; see ``dispatching(_:)``.
  @inlinable
  package static func dispatching<Sent: Sendable>(
    _ send: @escaping @Sendable () -> DispatchHandle<Sent>?,
    transform: @escaping @Sendable (Sent) throws -> Value
  ) -> Promise<Value> {
    Promise(eager: { resolver in
      guard let handle = send() else { return resolver.reject(StoreError.storeShutDown) }
      if handle.isAppliedOnSend, let done = () as? Sent {
        resolver.settle(Result { try transform(done) })
        return
      }
      handle.whenComplete { result in resolver.settle(result.flatMap { sent in Result { try transform(sent) } }) }
      resolver.onCancel { handle.cancel() }
    })
  }
}

/// The value of a returning side effect dispatched with `anySend`, as its declared type.
@inlinable
func returnValue<R: ReturningSideEffect>(_ value: any Sendable, of _: R.Type) throws -> R.ReturnValue {
  guard let typed = value as? R.ReturnValue else {
    throw StoreError.returnValueTypeMismatch(
      expected: String(reflecting: R.ReturnValue.self), actual: String(reflecting: type(of: value)))
  }
  return typed
}
