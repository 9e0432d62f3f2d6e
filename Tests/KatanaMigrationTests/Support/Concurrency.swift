import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport

/// An error whose code tells tests which step produced it.
struct TestError: Error, Equatable {
  let code: Int
}

/// The error a watchdog rejects a promise with when a test waited too long for it.
struct WatchdogExpired: Error {}

/// Returns `promise`, rejecting it with ``WatchdogExpired`` if it is still pending after 30 seconds (times
/// `failsafeScale`): a test that blocks a thread on it (`Hydra.await`) then fails instead of hanging the test run
/// (a suite's time limit cannot unblock a thread). Never reached when the code under test works.
func failsafe<T>(_ promise: Promise<T>) -> Promise<T> {
  DispatchQueue.global().asyncAfter(deadline: .now() + 30 * failsafeScale) { [weak promise] in
    promise?.reject(WatchdogExpired())
  }
  return promise
}

/// Runs `body` on a dispatch worker thread, outside any Swift task, where `Hydra.await` may block.
func onPlainThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
  }
}

/// Whether the caller runs on the main queue. (In Swift Testing on Linux the main queue is not always
/// drained by the main thread, so `Thread.isMainThread` cannot tell.)
var isOnMainQueue: Bool {
  DispatchQueue.getSpecific(key: MainQueueMark.key) != nil
}

private enum MainQueueMark {
  static let key: DispatchSpecificKey<Void> = {
    let key = DispatchSpecificKey<Void>()
    DispatchQueue.main.setSpecific(key: key, value: ())
    return key
  }()
}
