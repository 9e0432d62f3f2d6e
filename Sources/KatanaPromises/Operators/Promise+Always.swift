extension Promise {
  /// Runs `body` when this promise resolves or rejects, and passes the outcome on (unless `body` throws,
  /// which rejects the returned promise with that error).
  ///
  /// `body` runs on `context` (default ``Context/background``).
  ///
  /// - Important: As in Hydra, `body` does not run when the promise is cancelled: the returned promise is
  ///   cancelled too. Use ``cancelled(in:_:)`` for that case.
  @inlinable @discardableResult
  public func always(in context: Context? = nil, body: @escaping @Sendable () throws -> Void) -> Promise<Value> {
    let context = context ?? .background
    return derive(in: context) { outcome, resolver in
      if case .cancelled = outcome {
        return resolver.cancel()
      }
      context.schedule {
        do {
          try body()
          resolver.complete(outcome)
        } catch {
          resolver.reject(error)
        }
      }
    }
  }
}
