import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport

/// An error whose code tells tests which attempt or step produced it.
struct TestError: Error, Equatable {
  let code: Int
}

/// Runs `body` on a dispatch worker thread, outside any Swift task, and returns what it returns.
func onPlainThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
  }
}

/// Runs `body` on a thread of its own, neither a Dispatch worker nor a task's, and returns what it returns.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
  }
}

/// Runs `body` in a block on the main queue and returns what it returns.
func onMainQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    DispatchQueue.main.async { continuation.resume(with: Result { try body() }) }
  }
}

@_silgen_name("dispatch_queue_get_label")
private func dispatchQueueGetLabel(_ queue: OpaquePointer?) -> UnsafePointer<CChar>?

/// The label of the dispatch queue running the caller (libdispatch's `DISPATCH_CURRENT_QUEUE_LABEL`):
/// "com.apple.main-thread" on the main queue, the global queues' labels for their quality of service.
var currentQueueLabel: String {
  dispatchQueueGetLabel(nil).map { String(cString: $0) } ?? ""
}

extension Context {
  /// The label that ``currentQueueLabel`` reports for code running on this context.
  var label: String { queue.label }
}

/// A serial queue for tests that must know when everything scheduled on a context has run: after
/// `drain()`, every block submitted earlier has finished.
final class TestQueue: Sendable {
  let queue: DispatchQueue
  init(_ label: String = "test.queue") { queue = DispatchQueue(label: label) }
  var context: Context { .custom(queue: queue) }
  func drain() { queue.sync {} }
}

/// Returns `promise`, rejected with ``WatchdogExpired`` if it is still pending after `seconds`.
func watchdog<T>(_ promise: Promise<T>, seconds: TimeInterval) -> Promise<T> {
  Watchdog(seconds: seconds).guarding(promise)
}

/// Rejects the promises it guards with ``WatchdogExpired`` if they are still pending `seconds` after it was
/// made: one failsafe for many blocking waits.
///
/// Its timer is a thread of its own, not a Dispatch timer: tests that block Dispatch's worker threads on
/// purpose need their failsafes to fire anyway.
final class Watchdog: Sendable {
  /// The rejections to run at the deadline; nil once it has passed.
  private let guarded = LockedValue<[@Sendable () -> Void]?>([])

  init(seconds: TimeInterval) {
    let deadline = Date(timeIntervalSinceNow: seconds)
    Thread.detachNewThread { [guarded] in
      Thread.sleep(until: deadline)
      let rejections = guarded.withLock { guarded in
        defer { guarded = nil }
        return guarded ?? []
      }
      for reject in rejections { reject() }
    }
  }

  /// Returns `promise`, rejected at the deadline if it is still pending then (at once, after the deadline).
  func guarding<T>(_ promise: Promise<T>) -> Promise<T> {
    let reject: @Sendable () -> Void = { [weak promise] in promise?.reject(WatchdogExpired()) }
    let isLate = guarded.withLock { guarded in
      guarded?.append(reject)
      return guarded == nil
    }
    if isLate { reject() }
    return promise
  }
}
