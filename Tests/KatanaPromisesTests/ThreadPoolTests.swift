import Foundation
import KatanaTestSupport
import Testing

@testable import KatanaPromises

// The threads behind `.katana6` stores: a pool that starts a thread whenever none is idle (for blocking legacy
// code), the same pool with a limit (for the store's own tasks), and serial queues on top. Seeded schedules;
// every wait has a failsafe.

@Suite("ThreadPool and ThreadPoolSerialQueue", .timeLimit(.failsafeMinutes(3)))
struct ThreadPoolTests {
  /// 30 seconds, times `failsafeScale` (CI's thread-sanitizer pass: 120).
  static let failsafe: TimeInterval = 30 * failsafeScale

  @Test(arguments: [1, 2, 3] as [UInt64])
  func unlimitedPool_closuresEachBlockedOnOneSubmittedLater_allRunAtOnce(seed: UInt64) async throws {
    // Closure i blocks until closure i + 1 has started: all 1,000 must run at the same time, whatever the
    // order they were submitted in. A pool with a thread limit below 1,000 (Dispatch's is 255) deadlocks.
    let count = 1_000
    var generator = SeededGenerator(seed: seed)
    let started = (0..<count).map { _ in ThreadLatch() }
    let finished = CompletionCounter(target: count)
    let pool = ThreadPool(name: "test.unlimited", limit: nil, idleTimeout: 0.5)
    for index in (0..<count).shuffled(using: &generator) {
      pool.execute {
        started[index].open()
        if index + 1 < count { try? started[index + 1].wait() }
        finished.increment()
      }
    }
    #expect(try await finished.wait(seconds: Self.failsafe), "seed \(seed): not every closure ran")
  }

  @Test(arguments: [1, 2, 3] as [UInt64])
  func limitedPool_runsEverything_neverMoreAtOnceThanItsLimit(seed: UInt64) async throws {
    let limit = 2
    let submitters = 4
    let perSubmitter = 2_000
    let pool = ThreadPool(name: "test.limited", limit: limit, idleTimeout: 0.5)
    let running = LockedValue((now: 0, peak: 0, threadsPeak: 0))
    let finished = CompletionCounter(target: submitters * perSubmitter)
    for submitter in 0..<submitters {
      var generator = SeededGenerator(seed: seed &+ UInt64(submitter))
      let spins = (0..<perSubmitter).map { _ in Int.random(in: 0..<200, using: &generator) }
      Thread.detachNewThread {
        for spin in spins {
          pool.execute {
            running.withLock { running in
              running.now += 1
              running.peak = max(running.peak, running.now)
              running.threadsPeak = max(running.threadsPeak, pool.threads)
            }
            var work = 0
            for step in 0..<spin { work &+= step }
            blackHole(work)
            running.withLock { $0.now -= 1 }
            finished.increment()
          }
        }
      }
    }
    #expect(try await finished.wait(seconds: Self.failsafe), "seed \(seed): not every closure ran")
    #expect(running.current.peak <= limit, "seed \(seed)")
    #expect(running.current.threadsPeak <= limit, "seed \(seed)")
  }

  @Test func closure_isReleasedOutsideThePoolsLock_soThatWhatItCapturedMaySubmitMore() async throws {
    // Releasing a closure may run code of its own (a deinit of what it captured), which may use the pool.
    let pool = ThreadPool(name: "test.release", limit: 1, idleTimeout: 0.5)
    let finished = CompletionCounter(target: 1)
    pool.execute(closureOwning(SubmitsWhenReleased(pool: pool) { finished.increment() }))
    #expect(try await finished.wait(seconds: Self.failsafe))
  }

  @Test(arguments: [1 << 20, 16 << 20])
  func threads_haveTheStackSizeThePoolGivesThem(stackSize: Int) async throws {
    // Read back from inside a thread of the pool, as the system reports it. Sizes other than Linux's usual
    // 8 MiB default, so that a pool that did not set the size fails here too, not only on Apple platforms.
    let pool = ThreadPool(name: "test.stack", limit: 1, idleTimeout: 0.5, stackSize: stackSize)
    let reported = await onPool(pool) { currentThreadStackSize() }
    #expect(reported == stackSize)
  }

  @Test func sharedPools_give8MiBStacks_evenWhereThePlatformsThreadsGetLess() async throws {
    // Apple platforms give a new thread 512 KiB; the pools that run Katana 6 code and a `.katana6` store's own
    // tasks set 8 MiB, as Linux gives. The store's pool is reached through a task that prefers its executor.
    #expect(ThreadPool.defaultStackSize == 8 << 20)
    #expect(await onPool(.blocking) { currentThreadStackSize() } == ThreadPool.defaultStackSize)
    if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
      let storeThread = await Task.detached(executorPreference: LegacyTaskExecutor.shared) {
        currentThreadStackSize()
      }.value
      #expect(storeThread == ThreadPool.defaultStackSize)
    }
  }

  @Test(arguments: [1, 2, 3] as [UInt64])
  func serialQueue_closuresFromManyThreads_runOneAtATime_eachThreadsInItsOrder(seed: UInt64) async throws {
    let submitters = 4
    let perSubmitter = 500
    let queue = ThreadPoolSerialQueue(pool: ThreadPool(name: "test.serial", limit: nil, idleTimeout: 0.5))
    let log = LockedValue((inside: false, overlaps: 0, order: [[Int]](repeating: [], count: submitters)))
    let finished = CompletionCounter(target: submitters * perSubmitter)
    for submitter in 0..<submitters {
      var generator = SeededGenerator(seed: seed &+ UInt64(submitter))
      let pauses = (0..<perSubmitter).map { _ in Int.random(in: 0..<4, using: &generator) == 0 }
      Thread.detachNewThread {
        for (sequence, pauses) in pauses.enumerated() {
          queue.execute {
            log.withLock { log in
              if log.inside { log.overlaps += 1 }
              log.inside = true
            }
            // Some closures yield the processor while "inside", so that an overlap would show.
            if pauses { sched_yield() }
            log.withLock { log in
              log.inside = false
              log.order[submitter].append(sequence)
            }
            finished.increment()
          }
        }
      }
    }
    #expect(try await finished.wait(seconds: Self.failsafe), "seed \(seed): not every closure ran")
    #expect(log.current.overlaps == 0, "seed \(seed)")
    #expect(log.current.order.allSatisfy { $0 == Array(0..<perSubmitter) }, "seed \(seed)")
  }
}

/// Submits `work` to `pool` when it is released.
private final class SubmitsWhenReleased: Sendable {
  let pool: ThreadPool
  let work: @Sendable () -> Void

  init(pool: ThreadPool, work: @escaping @Sendable () -> Void) {
    self.pool = pool
    self.work = work
  }

  deinit { pool.execute(work) }
}

/// Runs `body` on a thread of `pool` and returns what it returns.
private func onPool<T: Sendable>(_ pool: ThreadPool, _ body: @escaping @Sendable () -> T) async -> T {
  await withCheckedContinuation { continuation in
    pool.execute { continuation.resume(returning: body()) }
  }
}

/// A closure that is the only owner of a ``SubmitsWhenReleased``.
private func closureOwning(_ object: SubmitsWhenReleased) -> @Sendable () -> Void {
  { withExtendedLifetime(object) {} }
}

/// Counts completions from any thread; a task waits for `target` on a thread of its own, outside every pool.
private final class CompletionCounter: @unchecked Sendable {
  // Sendable: `count` is only touched with `condition` locked.
  private let condition = NSCondition()
  private var count = 0
  private let target: Int

  init(target: Int) { self.target = target }

  func increment() {
    condition.lock()
    count += 1
    if count == target { condition.broadcast() }
    condition.unlock()
  }

  /// Whether `target` was reached within `seconds`.
  func wait(seconds: TimeInterval) async throws -> Bool {
    try await onOwnThread { [self] in
      let deadline = Date(timeIntervalSinceNow: seconds)
      condition.lock()
      defer { condition.unlock() }
      while count < target {
        if !condition.wait(until: deadline) { return count >= target }
      }
      return true
    }
  }
}

@inline(never)
private func blackHole(_ value: Int) {
  withExtendedLifetime(value) {}
}
