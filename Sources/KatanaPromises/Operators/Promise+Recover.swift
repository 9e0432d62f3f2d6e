extension Promise {
  /// Replaces a rejection with another attempt: on failure, returns a promise that settles like the one
  /// `body` returns for the error.
  ///
  /// `body` runs on `context` (default ``Context/background``) if this promise rejects; if it throws, the
  /// returned promise rejects with that error. A value or a cancellation passes on unchanged.
  ///
  /// ```swift
  /// loadFromNetwork().recover { _ in loadFromCache() }
  /// ```
  @discardableResult
  public func recover(in context: Context? = nil, _ body: @escaping @Sendable (any Error) throws -> Promise<Value>)
    -> Promise<Value>
  {
    let context = context ?? .background
    return derive(in: context) { outcome, resolver in
      guard case .rejected(let error) = outcome else {
        return resolver.complete(outcome)
      }
      context.schedule {
        do {
          try body(error).subscribe(resolver.complete)
        } catch {
          resolver.reject(error)
        }
      }
    }
  }
}
