#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A reference that code running on the current thread can see, set for the duration of a call.
///
/// Not retained: whoever calls ``with(_:_:)`` keeps the object alive for the call.
struct ThreadLocalReference<Object: AnyObject>: @unchecked Sendable {
  // Sendable: the key is set once, and a pthread key may be used from any thread.
  private let key: pthread_key_t

  init() {
    var key = pthread_key_t()
    let result = pthread_key_create(&key, nil)
    // Internal invariant: a process has room for hundreds of keys; this module creates a handful.
    precondition(result == 0, "pthread_key_create failed: \(result)")
    self.key = key
  }

  /// The object set by the innermost ``with(_:_:)`` running on this thread, if any.
  var current: Object? {
    pthread_getspecific(key).map { Unmanaged<Object>.fromOpaque($0).takeUnretainedValue() }
  }

  /// Runs `body` with ``current`` set to `object` (unchanged if `object` is nil).
  func with<Result>(_ object: Object?, _ body: () throws -> Result) rethrows -> Result {
    guard let object else { return try body() }
    let previous = pthread_getspecific(key)
    pthread_setspecific(key, Unmanaged.passUnretained(object).toOpaque())
    defer { pthread_setspecific(key, previous) }
    return try body()
  }
}
