/// The errors the promise operators produce themselves.
///
/// Errors from your bodies and closures reach the chain unchanged; these are only added by the operators.
/// A cancelled promise is not an error of this type: awaiting it (``Promise/value``,
/// ``Hydra/await(in:_:)-(Context?,Promise<T>)``) throws `CancellationError`.
public enum PromiseError: Error, Sendable, CustomStringConvertible {
  /// ``Promise/timeout(in:timeout:error:)`` expired before the source settled, and no other error was given.
  case timeout
  /// ``Promise/validate(in:_:)``'s closure returned false.
  case rejected
  /// An argument was out of range: `retry` or `retryWhen` with fewer than one attempt, `any` of no
  /// promises, or a time interval that is not a number.
  case invalidInput
  /// ``Hydra/await(in:_:)-(Context?,Promise<T>)`` was called where blocking would hang: with the main
  /// context, or inside a Swift task (on the cooperative pool or an actor).
  case invalidContext
  /// Kept for source compatibility with Hydra, which declared but never threw it. Never thrown.
  case attemptsFailed

  /// What happened and what to do about it.
  public var description: String {
    switch self {
    case .timeout:
      "PromiseError.timeout: the promise did not settle in time. Pass `error:` to `timeout` for your own error."
    case .rejected:
      "PromiseError.rejected: a `validate` closure returned false."
    case .invalidInput:
      "PromiseError.invalidInput: `retry`/`retryWhen` need at least one attempt, `any` at least one promise, "
        + "and time intervals must be numbers."
    case .invalidContext:
      "PromiseError.invalidContext: Hydra.await cannot block here. It throws when given the main context, and "
        + "inside a Swift task, where blocking could starve the cooperative thread pool or an actor. In async "
        + "code, write `try await promise.value` instead."
    case .attemptsFailed:
      "PromiseError.attemptsFailed"
    }
  }
}
