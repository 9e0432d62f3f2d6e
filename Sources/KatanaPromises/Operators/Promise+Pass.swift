extension Promise {
  /// Runs an asynchronous side step with the value and passes the value on once the step's promise
  /// resolves; the step can reject the chain (by throwing, or by rejecting its promise).
  ///
  /// `body` runs on `context` (default ``Context/background``). A rejection or cancellation of this promise
  /// passes on unchanged.
  @discardableResult
  public func pass<A>(in context: Context? = nil, _ body: @escaping @Sendable (Value) throws -> Promise<A>)
    -> Promise<Value>
  {
    let context = context ?? .background
    return derive(in: context) { outcome, resolver in
      guard let value = outcome.valueOrForward(to: resolver) else { return }
      context.schedule {
        do {
          try body(value).subscribe { stepOutcome in
            if stepOutcome.valueOrForward(to: resolver) != nil {
              resolver.resolve(value)
            }
          }
        } catch {
          resolver.reject(error)
        }
      }
    }
  }

  /// Runs `handler` with the value and passes the value on; `handler` can reject the chain by throwing.
  ///
  /// `handler` runs on `context` (default ``Context/background``). A rejection or cancellation passes on
  /// unchanged.
  @discardableResult
  public func pass(in context: Context? = nil, _ handler: @escaping @Sendable (Value) throws -> Void) -> Promise<Value>
  {
    then(in: context ?? .background, handler)
  }
}
