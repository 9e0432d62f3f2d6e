import Katana

/// Something that can tell whether the work it belongs to was cancelled.
public protocol InvalidatableProtocol {
  /// Whether the work was cancelled.
  var isCancelled: Bool { get }
}

/// A flag that you raise to tell promise bodies to stop: pass it to ``Promise/init(in:token:_:)``, read it
/// in the body through `status.isCancelled`.
///
/// Promises made from a promise with a token (`then`, `catch`, `retry`, ...) share the token.
///
/// - Important: As in Hydra, cancellation is cooperative: invalidating the token changes nothing by itself.
///   A body checks `status.isCancelled` and calls `status.cancel()` (or settles) when it sees it. To cancel
///   a promise directly, call ``Promise/cancel()``.
open class InvalidationToken: InvalidatableProtocol, @unchecked Sendable {
  // Sendable: the flag is only touched under its lock.
  private let flag = Locked(false)

  /// Creates a token that is not cancelled.
  public init() {}

  /// Whether ``invalidate()`` was called (or the flag was set).
  public var isCancelled: Bool {
    get { flag.withLock { $0 } }
    set { flag.withLock { $0 = newValue } }
  }

  /// Raises the flag.
  open func invalidate() {
    isCancelled = true
  }
}
