/// What the effect toolkit reports about misuse.
///
/// Work that the toolkit cancels or drops (``AnySideEffectContext/cancel(id:)``, `cancelInFlight`, a newer
/// debounced call, a throttled call, store shutdown) throws `CancellationError`, not one of these; calling a
/// tool after the store has shut down throws ``StoreError/storeShutDown``.
public enum EffectError: Error, Sendable, Equatable, CustomStringConvertible {
  /// A tool that needs a store (running under an id, debounce, throttle, timers, sequences) was called on a
  /// context that no ``Store`` created, such as a hand-written ``AnySideEffectContext`` in a unit test.
  ///
  /// The associated value is the context's type. Dispatch the side effect to a store instead; in tests,
  /// give that store a manual clock (`TestClock` in `KatanaTesting`).
  case contextWithoutStore(String)

  /// A duration the tool cannot use: a negative debounce, or a throttle or timer interval that is not
  /// positive. The associated value says which.
  case invalidDuration(String)

  /// The callback API that ``withCallback(_:)`` started released its completion callback without ever
  /// calling it, so no value could come. The associated value is the expected value's type.
  ///
  /// Make every path of the API call the callback once, or return a cancellation handler that keeps the
  /// request alive.
  case callbackDropped(String)

  /// What happened and what to do about it.
  public var description: String {
    switch self {
    case .contextWithoutStore(let type):
      "\(type) was not created by a Store, so it cannot run effects under an id, debounce, throttle or tick a "
        + "timer. Dispatch the side effect to a store (with a TestClock in tests)."
    case .invalidDuration(let detail):
      "Invalid duration: \(detail)"
    case .callbackDropped(let type):
      "The callback API released its completion callback without calling it, so no \(type) can arrive. "
        + "Make every path call the callback exactly once."
    }
  }
}
