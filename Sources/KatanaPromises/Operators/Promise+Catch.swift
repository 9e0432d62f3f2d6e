extension Promise {
  /// Handles a rejection: runs `body` with the error and returns a promise that resolves with `()` either
  /// way (unless `body` throws, which rejects it with that error).
  ///
  /// `body` runs on `context` (default ``Context/main``) if this promise rejects. If this promise resolves,
  /// the returned promise resolves with `()` without running `body`; if it is cancelled, the returned
  /// promise is cancelled.
  ///
  /// - Important: As in Hydra, the returned promise is a `Promise<Void>`: the value does not pass through a
  ///   `catch`. Put `catch` last in a chain, or use ``recover(in:_:)`` to replace a failure with a value.
  @inlinable @discardableResult
  public func `catch`(in context: Context? = nil, _ body: @escaping @Sendable (any Error) throws -> Void)
    -> Promise<Void>
  {
    let context = context ?? .main
    return derive(in: context) { outcome, resolver in
      switch outcome {
      case .resolved:
        resolver.resolve(())
      case .cancelled:
        resolver.cancel()
      case .rejected(let error):
        context.schedule {
          do {
            try body(error)
            resolver.resolve(())
          } catch {
            resolver.reject(error)
          }
        }
      }
    }
  }
}
