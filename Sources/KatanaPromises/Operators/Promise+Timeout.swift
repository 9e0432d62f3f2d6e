extension Promise {
  /// Returns a promise that settles like this one, or rejects with `error` (default
  /// ``PromiseError/timeout``) if this one has not settled after `timeout` seconds.
  ///
  /// The timer fires on `context` (default ``Context/background``); none of your code runs there.
  ///
  /// The returned promise stays alive until it settles, even if nothing else holds this one (a body that
  /// dropped its `resolve` and `reject`, say), so that code waiting on a later step gets the timeout rather
  /// than waiting forever. Once it has settled, the timer no longer holds it.
  ///
  /// - Important: As in Hydra, the timeout does not cancel this promise: its work goes on, and it can still
  ///   settle later (for anyone else observing it). Call ``cancel()`` on it if the work should stop.
  @discardableResult
  public func timeout(in context: Context? = nil, timeout: Double, error: (any Error)? = nil) -> Promise<Value> {
    guard !timeout.isNaN else { return Promise(rejected: PromiseError.invalidInput) }
    let context = context ?? .background
    // The timer holds the pending promise (a derived promise does not keep its source alive, so the timer may
    // be the only holder); settling lets it go.
    let pending = Locked<Promise<Value>?>(nil)
    let timedOut = derive(in: context, settlesOnlyAfterSource: false) { outcome, resolver in
      resolver.complete(outcome)
      pending.withLock { $0 = nil }
    }
    pending.withLock { $0 = timedOut }
    if !timedOut.isPending { pending.withLock { $0 = nil } }
    context.schedule(after: timeout) {
      let promise = pending.withLock { held -> Promise<Value>? in
        defer { held = nil }
        return held
      }
      promise?.reject(error ?? PromiseError.timeout)
    }
    return timedOut
  }
}
