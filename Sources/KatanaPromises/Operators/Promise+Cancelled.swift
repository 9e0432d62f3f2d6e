extension Promise {
  /// Runs `body` if this promise is cancelled, and returns a promise that is then cancelled too.
  ///
  /// `body` runs on `context` (default ``Context/main``). If this promise resolves, the returned promise
  /// resolves with `()`; if it rejects, the returned promise rejects with the same error.
  @discardableResult
  public func cancelled(in context: Context? = nil, _ body: @escaping @Sendable () -> Void) -> Promise<Void> {
    let context = context ?? .main
    return derive(in: context) { outcome, resolver in
      switch outcome {
      case .resolved:
        resolver.resolve(())
      case .rejected(let error):
        resolver.reject(error)
      case .cancelled:
        context.schedule {
          body()
          resolver.cancel()
        }
      }
    }
  }
}
