extension Promise {
  /// Transforms the value: returns a promise of what `body` returns.
  ///
  /// `body` runs on `context` (default ``Context/main``) once this promise resolves; if it throws, the
  /// returned promise rejects with that error. A rejection or cancellation passes on unchanged, without
  /// running `body`.
  ///
  /// - Important: As in Hydra, the default context is the main queue: something must service it (see
  ///   ``Context``). Pass `in: .background` from servers and command-line tools.
  @inlinable @discardableResult
  public func then<N>(in context: Context? = nil, _ body: @escaping @Sendable (Value) throws -> N) -> Promise<N> {
    let context = context ?? .main
    return derive(in: context) { outcome, resolver in
      guard let value = outcome.valueOrForward(to: resolver) else { return }
      context.schedule {
        do {
          resolver.resolve(try body(value))
        } catch {
          resolver.reject(error)
        }
      }
    }
  }

  /// Chains another asynchronous step: returns a promise that settles like the promise `body` returns.
  ///
  /// `body` runs on `context` (default ``Context/main``) once this promise resolves, and the promise it
  /// returns is observed (so its body starts). If `body` throws, the returned promise rejects with that
  /// error. A rejection or cancellation of this promise passes on unchanged.
  @inlinable @discardableResult
  public func then<N>(in context: Context? = nil, _ body: @escaping @Sendable (Value) throws -> Promise<N>)
    -> Promise<N>
  {
    let context = context ?? .main
    return derive(in: context) { outcome, resolver in
      guard let value = outcome.valueOrForward(to: resolver) else { return }
      context.schedule {
        do {
          try body(value).subscribe(resolver.complete)
        } catch {
          resolver.reject(error)
        }
      }
    }
  }

  /// Runs `body` with the value and passes the value on: a side step that can still reject the chain by
  /// throwing.
  ///
  /// `body` runs on `context` (default ``Context/main``) once this promise resolves. A rejection or
  /// cancellation passes on unchanged.
  @inlinable @discardableResult
  public func then(in context: Context? = nil, _ body: @escaping @Sendable (Value) throws -> Void) -> Promise<Value> {
    let context = context ?? .main
    return derive(in: context) { outcome, resolver in
      guard let value = outcome.valueOrForward(to: resolver) else { return }
      context.schedule {
        do {
          try body(value)
          resolver.resolve(value)
        } catch {
          resolver.reject(error)
        }
      }
    }
  }
}
