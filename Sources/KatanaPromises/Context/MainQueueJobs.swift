import Dispatch
import Foundation
import Katana

/// The promise jobs bound for the main queue, in order, so that a blocking wait on the main queue can run
/// them itself.
///
/// Each job is also posted to the main queue as usual, and runs there unless a waiter took it first: a
/// `then` on ``Context/main`` keeps its place relative to other main-queue work. A thread that blocks in
/// ``Hydra/await(in:_:)-(Context?,Promise<T>)`` inside a block running on the main queue (where nothing else
/// can run the main queue) takes the pending jobs in order and runs them, so that callbacks it waits for
/// cannot deadlock behind it.
enum MainQueueJobs {
  /// One job; identity tells which main-queue block belongs to it.
  final class Job: Sendable {
    let body: @Sendable () -> Void
    /// When the job was enqueued, in `DispatchTime` nanoseconds.
    let enqueuedAt = DispatchTime.now().uptimeNanoseconds
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }

  struct State {
    var jobs = JobQueue()
    /// Waiters blocked on the main queue, to wake when a job arrives.
    var waiters: [BlockingWaiter] = []
  }

  /// The pending jobs, oldest first. Removing the oldest is O(1) (amortised): when promises are chained
  /// back to back, thousands of jobs can be pending, and shifting an array on every removal would cost
  /// microseconds per job.
  struct JobQueue {
    private var jobs: [Job?] = []
    /// The index of the oldest job that may still be pending; slots before it are empty.
    private var head = 0

    var first: Job? {
      var index = head
      while index < jobs.count {
        if let job = jobs[index] { return job }
        index += 1
      }
      return nil
    }

    mutating func append(_ job: Job) {
      jobs.append(job)
    }

    /// Removes and returns the oldest job.
    mutating func removeFirst() -> Job? {
      while head < jobs.count {
        let job = jobs[head]
        jobs[head] = nil
        head += 1
        if let job {
          compactIfNeeded()
          return job
        }
      }
      compactIfNeeded()
      return nil
    }

    /// Removes `job` if it is pending, and returns whether it was. O(1) when it is the oldest, as it almost
    /// always is (main-queue blocks run in the order they were posted).
    mutating func remove(_ job: Job) -> Bool {
      var index = head
      while index < jobs.count {
        if let candidate = jobs[index], candidate === job {
          jobs[index] = nil
          while head < jobs.count, jobs[head] == nil { head += 1 }
          compactIfNeeded()
          return true
        }
        index += 1
      }
      return false
    }

    /// Drops the empty prefix once it is at least half of the storage, so that memory stays bounded.
    private mutating func compactIfNeeded() {
      if head == jobs.count {
        jobs.removeAll(keepingCapacity: jobs.count <= 1_024)
        head = 0
      } else if head >= 64, head * 2 >= jobs.count {
        jobs.removeFirst(head)
        head = 0
      }
    }
  }

  static let state = Locked(State())

  static func enqueue(_ body: @escaping @Sendable () -> Void) {
    let job = Job(body)
    let waiters = state.withLock { state in
      state.jobs.append(job)
      return state.waiters
    }
    DispatchQueue.main.async {
      if take(job) { job.body() }
    }
    for waiter in waiters { waiter.signal() }
  }

  /// Removes `job` if no waiter ran it yet.
  private static func take(_ job: Job) -> Bool {
    state.withLock { $0.jobs.remove(job) }
  }

  /// Runs the pending jobs that have waited longer than `age` nanoseconds (all of them, by default),
  /// oldest first, on the calling thread. Only for a thread that is the main queue's current runner.
  ///
  /// - Returns: When the oldest job it ran was enqueued, in `DispatchTime` nanoseconds; nil if it ran none.
  @discardableResult
  static func runPendingJobs(waitingLongerThan age: UInt64 = 0) -> UInt64? {
    var oldestEnqueuedAt: UInt64?
    while true {
      let now = DispatchTime.now().uptimeNanoseconds
      let next = state.withLock { state -> Job? in
        guard let first = state.jobs.first, now >= first.enqueuedAt &+ age else { return nil }
        return state.jobs.removeFirst()
      }
      guard let next else { return oldestEnqueuedAt }
      if oldestEnqueuedAt == nil { oldestEnqueuedAt = next.enqueuedAt }
      next.body()
    }
  }

  /// Whether the calling thread is the one running the main queue: the main thread (whose code runs
  /// between main-queue blocks), or any thread while it runs a main-queue block (with `dispatchMain()`, the
  /// main queue is drained by a pool thread).
  static var isMainQueueRunner: Bool {
    Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey.key) != nil
  }

  /// Whether `queue` is the main queue. (Identity cannot tell: on Linux, every `DispatchQueue.main` is a new
  /// wrapper around the same queue.)
  static func isMainQueue(_ queue: DispatchQueue) -> Bool {
    queue.getSpecific(key: mainQueueKey.key) != nil
  }

  /// Set on the main queue once, on first use.
  private static let mainQueueKey: SpecificKey = {
    let key = SpecificKey()
    DispatchQueue.main.setSpecific(key: key.key, value: ())
    return key
  }()

  static func addWaiter(_ waiter: BlockingWaiter) {
    state.withLock { $0.waiters.append(waiter) }
  }

  static func removeWaiter(_ waiter: BlockingWaiter) {
    state.withLock { state in state.waiters.removeAll { $0 === waiter } }
  }
}
