extension Promise {
  /// Runs this promise's body again when it rejects, up to `attempts` attempts in total (the first one
  /// included); returns a promise that settles with the first success, or with the last error.
  ///
  /// After each failure except the last, `condition(remainingAttempts, error)` decides whether to try again
  /// (returning false, or throwing, stops: the returned promise rejects with the source's error). With
  /// `delay > 0`, the next attempt starts `delay` seconds after the failure.
  ///
  /// ```swift
  /// fetchProfile().retry(3) { remaining, error in (error as? URLError)?.code == .timedOut }
  /// ```
  ///
  /// The decision and the new attempt run on this promise's context: the context of its body
  /// (``Context/background`` by default), or, for a promise returned by an operator, that operator's.
  ///
  /// - Important: Retrying re-runs *this promise's* body, as in Hydra: for a promise from
  ///   ``init(in:token:_:)`` or ``init(priority:_:)``, the body; for a promise returned by an operator
  ///   (`then`, ...), that operator's closure with the same input, not the promise it came from. A promise
  ///   without a body (``init()``) cannot run again: the returned promise rejects with its first error.
  ///   With `attempts < 1`, the returned promise rejects with ``PromiseError/invalidInput``.
  @discardableResult
  public func retry(
    _ attempts: Int = 3, delay: Double = 0,
    _ condition: @escaping @Sendable (_ remainingAttempts: Int, _ error: any Error) throws -> Bool = { _, _ in true }
  ) -> Promise<Value> {
    retrying(attempts, delay: delay) { remaining, error, decide in
      decide((try? condition(remaining, error)) ?? false)
    }
  }

  /// Like ``retry(_:delay:_:)``, with an asynchronous condition: the next attempt starts once the promise
  /// `condition` returns resolves with true. If it resolves with false, rejects, or is cancelled, the
  /// returned promise rejects with the source's error.
  @discardableResult
  public func retryWhen(
    _ attempts: Int = 3, delay: Double = 0,
    _ condition: @escaping @Sendable (_ remainingAttempts: Int, _ error: any Error) -> Promise<Bool> = { _, _ in
      Promise<Bool>(resolved: true)
    }
  ) -> Promise<Value> {
    retrying(attempts, delay: delay) { remaining, error, decide in
      condition(remaining, error).subscribe { outcome in
        if case .resolved(true) = outcome { decide(true) } else { decide(false) }
      }
    }
  }

  /// The machinery behind `retry` and `retryWhen`: `shouldRetry` is called on the body context after each
  /// failure that leaves attempts, and calls its third argument with its decision (possibly later).
  private func retrying(
    _ attempts: Int, delay: Double,
    _ shouldRetry: @escaping @Sendable (Int, any Error, @escaping @Sendable (Bool) -> Void) -> Void
  ) -> Promise<Value> {
    guard attempts >= 1, !delay.isNaN else { return Promise(rejected: PromiseError.invalidInput) }
    let retried = Promise(derivedWith: context, token: token)
    attempt(remaining: attempts, delay: delay, into: PromiseResolver(promise: retried, generation: 0), shouldRetry)
    return retried
  }

  /// Observes the current run of this promise and, on failure, decides whether to run it again.
  private func attempt(
    remaining: Int, delay: Double, into resolver: PromiseResolver<Value>,
    _ shouldRetry: @escaping @Sendable (Int, any Error, @escaping @Sendable (Bool) -> Void) -> Void
  ) {
    let context = context
    subscribe { outcome in
      guard case .rejected(let error) = outcome else { return resolver.complete(outcome) }
      let remaining = remaining - 1
      // Stop when attempts are used up, when there is no body to run again, and when someone settled (or
      // cancelled) the returned promise in the meantime.
      guard remaining >= 1, self.canRunAgain, resolver.promise.isPending else { return resolver.reject(error) }
      context.schedule {
        shouldRetry(remaining, error) { again in
          guard again else { return resolver.reject(error) }
          let runAgain: @Sendable () -> Void = {
            // Another `retry` on the same promise may have run it again already: then follow that run.
            guard self.reset() || self.isPending else { return resolver.reject(error) }
            self.attempt(remaining: remaining, delay: delay, into: resolver, shouldRetry)
          }
          if delay > 0 { context.schedule(after: delay, runAgain) } else { runAgain() }
        }
      }
    }
  }
}
