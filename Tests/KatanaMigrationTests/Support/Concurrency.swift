import Dispatch
import Foundation
import KatanaPromises

/// A lock-protected value for test bookkeeping.
final class LockedValue<Value>: @unchecked Sendable {  // Sendable: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }

  var current: Value { withLock { $0 } }
}

/// A one-shot latch: `wait()` suspends until `open()` is called. Opening twice is harmless.
final class Gate: Sendable {
  private let state = LockedValue<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

  func open() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.isOpen = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  func wait() async {
    await withCheckedContinuation { continuation in
      let isOpen = state.withLock { state -> Bool in
        if state.isOpen { return true }
        state.waiters.append(continuation)
        return false
      }
      if isOpen { continuation.resume() }
    }
  }
}

/// Appends values from any thread, reads them back in order, and lets a test wait for a count without
/// polling.
final class Recorder<Element: Sendable>: Sendable {
  private let state = LockedValue<(values: [Element], waiters: [(Int, CheckedContinuation<Void, Never>)])>(([], []))

  func append(_ element: Element) {
    let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.values.append(element)
      let count = state.values.count
      let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
      state.waiters.removeAll { $0.0 <= count }
      return ready
    }
    for waiter in ready { waiter.resume() }
  }

  var values: [Element] { state.withLock { $0.values } }

  /// Returns once at least `count` values were recorded.
  func wait(forCount count: Int) async {
    await withCheckedContinuation { continuation in
      let reached = state.withLock { state -> Bool in
        if state.values.count >= count { return true }
        state.waiters.append((count, continuation))
        return false
      }
      if reached { continuation.resume() }
    }
  }
}

/// An error whose code tells tests which step produced it.
struct TestError: Error, Equatable {
  let code: Int
}

/// The error a watchdog rejects a promise with when a test waited too long for it.
struct WatchdogExpired: Error {}

/// Returns `promise`, rejecting it with ``WatchdogExpired`` if it is still pending after 30 seconds: a test
/// that blocks a thread on it (`Hydra.await`) then fails instead of hanging the test run (a suite's time
/// limit cannot unblock a thread). Never reached when the code under test works.
func failsafe<T>(_ promise: Promise<T>) -> Promise<T> {
  DispatchQueue.global().asyncAfter(deadline: .now() + 30) { [weak promise] in promise?.reject(WatchdogExpired()) }
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
