import Foundation

/// A value guarded by a lock, for the backend's records and the activity log, which tasks share.
/// (`Mutex` from the Synchronization module would need macOS 15 / iOS 18; the example keeps the library's floor.)
final class Locked<Value>: @unchecked Sendable {
  // Sendable: `value` is only touched while holding `lock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) {
    self.value = value
  }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
