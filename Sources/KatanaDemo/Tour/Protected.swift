import Foundation

/// A value guarded by a lock, for the bits of bookkeeping the tour shares between tasks (the fake API's
/// records, a log sink). The library's own lock is internal to Katana, so the demo brings its own.
final class Protected<Value>: @unchecked Sendable {
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

  var current: Value {
    withLock { $0 }
  }
}
