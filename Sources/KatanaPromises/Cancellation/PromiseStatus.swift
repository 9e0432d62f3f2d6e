/// What a promise body gets to cooperate with cancellation: whether its token was invalidated, and a way
/// to cancel the promise.
///
/// ```swift
/// Promise<Data>(token: token) { resolve, reject, status in
///   for chunk in chunks {
///     if status.isCancelled { status.cancel(); return }
///     ...
///   }
/// }
/// ```
public struct PromiseStatus: Sendable {
  /// Cancels the promise the body belongs to (if it has not settled).
  public let cancel: @Sendable () -> Void
  @usableFromInline let token: InvalidationToken?

  @usableFromInline
  init(token: InvalidationToken?, cancel: @escaping @Sendable () -> Void) {
    self.token = token
    self.cancel = cancel
  }

  /// Whether the promise's ``InvalidationToken`` was invalidated (false without a token).
  public var isCancelled: Bool {
    token?.isCancelled ?? false
  }
}
