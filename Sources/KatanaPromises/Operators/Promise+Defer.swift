extension Promise {
  /// Returns a promise that resolves with this promise's value `seconds` after it resolves.
  ///
  /// The delayed resolution happens on `context` (default ``Context/background``). A rejection or
  /// cancellation passes on at once, without delay. With `seconds <= 0` this promise itself is returned.
  @discardableResult
  public func `defer`(in context: Context? = nil, _ seconds: Double) -> Promise<Value> {
    guard !seconds.isNaN else { return Promise(rejected: PromiseError.invalidInput) }
    guard seconds > 0 else { return self }
    let context = context ?? .background
    return derive(in: context) { outcome, resolver in
      guard let value = outcome.valueOrForward(to: resolver) else { return }
      context.schedule(after: seconds) { resolver.resolve(value) }
    }
  }
}
