import Dispatch
import Foundation
import KatanaPromises

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

/// The error a watchdog rejects a promise with when a test waited too long for it.
struct WatchdogExpired: Error {}

/// Returns `promise`, rejecting it with ``WatchdogExpired`` if it is still pending after 30 seconds: a test
/// that blocks a thread on it then fails instead of hanging the test run (a suite's time limit cannot
/// unblock a thread).
func failsafe<T>(_ promise: Promise<T>) -> Promise<T> {
  DispatchQueue.global().asyncAfter(deadline: .now() + 30) { [weak promise] in promise?.reject(WatchdogExpired()) }
  return promise
}
