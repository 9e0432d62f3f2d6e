import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport

/// An error whose code tells tests which step produced it.
struct TestError: Error, Equatable {
  let code: Int
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
