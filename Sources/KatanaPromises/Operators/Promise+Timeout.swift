extension Promise {
  /// Returns a promise that settles like this one, or rejects with `error` (default
  /// ``PromiseError/timeout``) if this one has not settled after `timeout` seconds.
  ///
  /// The timer fires on `context` (default ``Context/background``); none of your code runs there.
  ///
  /// - Important: As in Hydra, the timeout does not cancel this promise: its work goes on, and it can still
  ///   settle later (for anyone else observing it). Call ``cancel()`` on it if the work should stop.
  @discardableResult
  public func timeout(in context: Context? = nil, timeout: Double, error: (any Error)? = nil) -> Promise<Value> {
    guard !timeout.isNaN else { return Promise(rejected: PromiseError.invalidInput) }
    let context = context ?? .background
    let timedOut = derive(in: context) { outcome, resolver in resolver.complete(outcome) }
    context.schedule(after: timeout) { [weak timedOut] in
      timedOut?.reject(error ?? PromiseError.timeout)
    }
    return timedOut
  }
}
