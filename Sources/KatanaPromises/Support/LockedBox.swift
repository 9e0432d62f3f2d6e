import Katana

/// A value behind a lock, for the mutable state that `@Sendable` closures share: a counter a listener bumps,
/// the values a test collects from promise callbacks.
///
/// Swift 6 rejects a captured `var` that such a closure changes or reads ("mutation of captured var 'count' in
/// concurrently-executing code"). Keep the value in a box instead, and touch it through the lock:
///
/// ```swift
/// // Katana 6
/// var changes: [Int] = []
/// store.addListener { _, newState in changes.append(newState.counter) }
///
/// // now
/// let changes = LockedBox<[Int]>([])
/// store.addListener { _, newState in changes.withLock { $0.append(newState.counter) } }
/// print(changes.value)
/// ```
///
/// It works on every platform the package supports; Swift's `Mutex` needs macOS 15 or iOS 18.
///
/// - Important: Keep the closure given to ``withLock(_:)`` short, and do not call code in it that takes the
///   same box's lock (that deadlocks) or that waits for other threads.
public final class LockedBox<Value: Sendable>: Sendable {
  private let storage: Locked<Value>

  /// Creates a box holding `value`.
  public init(_ value: Value) {
    storage = Locked(value)
  }

  /// Runs `body` with exclusive access to the value, and returns what it returns.
  ///
  /// ```swift
  /// let count = LockedBox(0)
  /// let next = count.withLock { count in
  ///   count += 1
  ///   return count
  /// }
  /// ```
  public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try storage.withLock(body)
  }

  /// A copy of the value, read under the lock.
  public var value: Value {
    storage.withLock { $0 }
  }
}
