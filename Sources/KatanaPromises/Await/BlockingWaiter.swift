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
  /// main queue), without deadlocking the promise callbacks bound for the main queue.
  ///
  /// On the main thread, between main-queue blocks (an XCTest method), it runs the main run loop, as an
  /// XCTest wait does: every main-queue block, the promise callbacks included, runs in its order. Inside a
  /// main-queue block the run loop cannot service the main queue: there it runs the pending promise
  /// callbacks itself, in their order, and sleeps on a condition in between (other main-queue blocks wait
  /// until the caller returns, as they would anyway).
  ///
  /// It cannot ask which of the two it is in, so on the main thread it starts with the run loop, and switches
  /// to running the callbacks itself, for the rest of the wait, on proof that the run loop does not service
  /// the main queue: the run loop has no source at all, or a callback went stale (see ``staleJobNanoseconds``)
  /// although a run of the run loop began after it arrived. In an app, whose main run loop always has
  /// sources, only the latter happens: the first callback waits that long, the next ones run as they arrive.
  func waitServicingMainQueue() {
    MainQueueJobs.addWaiter(self)
    defer { MainQueueJobs.removeWaiter(self) }
    var useRunLoop = Thread.isMainThread
    // When the latest run of the run loop began, in `DispatchTime` nanoseconds.
    var lastRunLoopStart: UInt64?
    while true {
      let seen = signalCount
      // While the run loop runs, it runs the jobs in the main queue's order. A job still waiting after a
      // while means the run loop does not service the main queue here (a main-queue block, with run-loop
      // sources of its own, called us): then run it directly.
      let staleJobEnqueuedAt = MainQueueJobs.runPendingJobs(
        waitingLongerThan: useRunLoop ? Self.staleJobNanoseconds : 0)
      if isFinished { return }
      if useRunLoop, let staleJobEnqueuedAt, let lastRunLoopStart, staleJobEnqueuedAt < lastRunLoopStart {
        // The job had waited past the bound, and the latest run of the run loop, which began after it arrived,
        // did not run it: proof. (A job that went stale before this wait, or that arrived while a long
        // main-queue block ran inside the run loop, is not.) From now on run the jobs as they arrive; look
        // again at once, for those that were not stale yet and whose arrival `seen` already counts.
        useRunLoop = false
        continue
      }
      if useRunLoop {
        guard enterRunLoop() else { return }
        lastRunLoopStart = DispatchTime.now().uptimeNanoseconds
        // Returns after handling one source (a main-queue block included), when `finish()` wakes it, or at
        // the deadline, so that stale jobs are looked at again.
        let ran = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
        leaveRunLoop()
        // The run loop has no source at all: this is a block running on the main queue.
        if !ran { useRunLoop = false }
      } else {
        waitForSignal(after: seen)
      }
    }
  }

  /// How long a main-queue job may wait while this thread runs the run loop before the thread runs it
  /// directly: far longer than the run loop takes to reach it when it services the main queue.
  static let staleJobNanoseconds: UInt64 = 100_000_000

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
