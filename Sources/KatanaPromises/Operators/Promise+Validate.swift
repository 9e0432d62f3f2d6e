extension Promise {
  /// Checks the value: passes it on if `validate` returns true, rejects with ``PromiseError/rejected`` if it
  /// returns false, and with its error if it throws.
  ///
  /// `validate` runs on `context` (default ``Context/background``). A rejection or cancellation passes on
  /// unchanged.
  @discardableResult
  public func validate(in context: Context? = nil, _ validate: @escaping @Sendable (Value) throws -> Bool)
    -> Promise<Value>
  {
    then(in: context ?? .background) { (value: Value) -> Value in
      guard try validate(value) else { throw PromiseError.rejected }
      return value
    }
  }
}
