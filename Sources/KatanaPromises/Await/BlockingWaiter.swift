import Foundation
import Katana

/// One thread blocked until a promise settles, woken when it does and, on the main queue, whenever a main
/// queue job arrives.
final class BlockingWaiter: @unchecked Sendable {
  // Sendable: `finished` and `signals` are only touched with `condition` locked.
  private let condition = NSCondition()
  private var finished = false
  private var signals = 0
  /// Whether the waiter sleeps in the main run loop, which a finishing promise must wake.
  private var sleepsInRunLoop = false

  /// Marks the wait as over and wakes the waiter.
  func finish() {
    condition.lock()
    finished = true
    signals += 1
    let wakeRunLoop = sleepsInRunLoop
    condition.broadcast()
    condition.unlock()
    if wakeRunLoop {
      // Any block on the main queue makes the run loop return from `run(mode:before:)`.
      DispatchQueue.main.async {}
    }
  }

  /// Wakes the waiter without ending the wait (a main-queue job arrived).
  func signal() {
    condition.lock()
    signals += 1
    condition.broadcast()
    condition.unlock()
  }

  var isFinished: Bool {
    condition.lock()
    defer { condition.unlock() }
    return finished
  }

  /// Blocks the calling thread until ``finish()``.
  func waitUntilFinished() {
    condition.lock()
    while !finished { condition.wait() }
    condition.unlock()
  }

  /// The number of wake-ups so far, to wait for the next one without missing it.
  var signalCount: Int {
    condition.lock()
    defer { condition.unlock() }
    return signals
  }

  /// Blocks until a wake-up after `count` (see ``signalCount``).
  func waitForSignal(after count: Int) {
    condition.lock()
    while signals == count { condition.wait() }
    condition.unlock()
  }

  /// Blocks for a promise while being the main queue's runner (the main thread, or a block running on the
  /// main queue): runs the promise jobs bound for the main queue meanwhile, so that callbacks the promise
  /// waits for cannot deadlock behind this thread.
  ///
  /// On the main thread it also runs the main run loop, so that other main-queue work (dispatch blocks,
  /// timers) goes on too, as in an XCTest wait. Inside a main-queue block the run loop cannot service the
  /// main queue; there, only promise jobs run, and the thread sleeps on a condition in between.
  func waitServicingMainQueue() {
    MainQueueJobs.addWaiter(self)
    defer { MainQueueJobs.removeWaiter(self) }
    var useRunLoop = Thread.isMainThread
    while true {
      let seen = signalCount
      MainQueueJobs.runPendingJobs()
      if isFinished { return }
      if useRunLoop {
        guard enterRunLoop() else { return }
        // Returns after handling one source (a main-queue block included) or at the deadline. The deadline
        // is a safety net for run loops that have sources but do not service the main queue; wake-ups come
        // from `finish()` and from the main-queue jobs themselves.
        let ran = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
        leaveRunLoop()
        // The run loop has no source at all: this is a block running on the main queue.
        if !ran { useRunLoop = false }
      } else {
        waitForSignal(after: seen)
      }
    }
  }

  /// Records that the waiter is about to sleep in the run loop; false if the wait is already over.
  private func enterRunLoop() -> Bool {
    condition.lock()
    defer { condition.unlock() }
    guard !finished else { return false }
    sleepsInRunLoop = true
    return true
  }

  private func leaveRunLoop() {
    condition.lock()
    sleepsInRunLoop = false
    condition.unlock()
  }
}
