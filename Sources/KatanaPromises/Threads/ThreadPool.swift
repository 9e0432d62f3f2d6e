import Foundation

/// Threads of the package's own, outside Swift's cooperative pool and outside Dispatch, for work that must not
/// wait for either: Katana 6 code that blocks (``blocking``), and a `.katana6` store's own tasks
/// (``LegacyTaskExecutor``).
///
/// On Linux, Swift tasks and `DispatchQueue.global()` share libdispatch's worker threads: one per core for each
/// quality of service, which libdispatch grows by one thread a second once all are blocked, and by no more
/// than 255 threads in all. Katana 6 code blocking those threads in `Hydra.await` could then wait for work that
/// waits for a thread: for seconds, or, above 255, for ever.
///
/// A pool runs each closure on an idle thread of its own, or starts a new thread while it has fewer than its
/// limit; a closure that finds no thread waits for the next thread that finishes. Threads that stay idle for a
/// while (5 s by default) end.
///
/// Threads get stacks of ``defaultStackSize`` (8 MiB) unless told otherwise: a thread started without a size
/// gets 8 MiB on Linux (the usual `ulimit -s`) but 512 KiB on Apple platforms, where deep synchronous recursion
/// in a Katana 6 side effect that passes its tests on Linux would overflow.
final class ThreadPool: @unchecked Sendable {
  // Sendable: every mutable property is only touched with `condition` locked.

  /// The pool for code that may block until other code in the pool has run: no limit, so that every closure
  /// starts at once, however many block.
  static let blocking = ThreadPool(name: "katana.legacy", limit: nil)

  /// The stack size of the threads a pool starts unless told otherwise, in bytes: 8 MiB, the main thread's on
  /// Apple platforms and the default for new threads on most Linux systems. Only touched pages take memory.
  static let defaultStackSize = 8 << 20

  private let name: String
  private let limit: Int?
  /// The stack size of each thread, in bytes.
  private let stackSize: Int
  /// How long an idle thread waits for work before it ends.
  private let idleTimeout: TimeInterval
  private let condition = NSCondition()
  /// Work not yet taken, oldest first from `head`.
  private var queue: [(@Sendable () -> Void)?] = []
  private var head = 0
  private var threadCount = 0
  /// Threads waiting for work that no closure has claimed yet.
  private var idleCount = 0
  /// Claims on waiting threads not yet taken up: each one wakes one waiting thread.
  private var wakeups = 0

  /// - Parameters:
  ///   - name: The threads' name, for debuggers.
  ///   - limit: At most this many threads; nil for no limit.
  ///   - idleTimeout: How long an idle thread waits for work before it ends.
  ///   - stackSize: The stack size of each thread, in bytes (a multiple of the page size).
  init(name: String, limit: Int?, idleTimeout: TimeInterval = 5, stackSize: Int = ThreadPool.defaultStackSize) {
    self.name = name
    self.limit = limit
    self.idleTimeout = idleTimeout
    self.stackSize = stackSize
  }

  /// Runs `work` on a thread of the pool.
  func execute(_ work: @escaping @Sendable () -> Void) {
    condition.lock()
    queue.append(work)
    let startsThread: Bool
    if idleCount > 0 {
      idleCount -= 1
      wakeups += 1
      condition.signal()
      startsThread = false
    } else if limit.map({ threadCount < $0 }) ?? true {
      threadCount += 1
      startsThread = true
    } else {
      // Every thread is busy and the pool is full: a thread takes it when it finishes.
      startsThread = false
    }
    condition.unlock()
    if startsThread {
      let thread = Thread { [self] in runWorker() }
      thread.name = name
      #if canImport(Darwin)
        thread.stackSize = stackSize
      #else
        // Linux gives a thread started without a size the process's default (8 MiB with the usual `ulimit -s`),
        // reusing cached stacks; an explicit size made every thread map a stack of its own (2.3x the time of the
        // .katana6 blocking benchmark), so only a size other than the default is set.
        if stackSize != ThreadPool.defaultStackSize { thread.stackSize = stackSize }
      #endif
      thread.start()
    }
  }

  /// The number of threads the pool has now, busy or idle (for tests).
  var threads: Int {
    condition.lock()
    defer { condition.unlock() }
    return threadCount
  }

  /// A worker thread: runs work until it has waited `idleTimeout` for more.
  private func runWorker() {
    // Each closure is released at the end of its iteration, before `nextWork` takes the lock again: what it
    // captured may run code of its own when it is released.
    while let work = nextWork() {
      work()
    }
  }

  /// The oldest work, waiting for some while the thread is idle; nil once it has been idle for `idleTimeout`
  /// (the thread then ends).
  private func nextWork() -> (@Sendable () -> Void)? {
    condition.lock()
    defer { condition.unlock() }
    while true {
      if let work = takeWork() { return work }
      idleCount += 1
      let deadline = Date(timeIntervalSinceNow: idleTimeout)
      while true {
        let signalled = condition.wait(until: deadline)
        if wakeups > 0 {
          // Claimed by `execute` (which took this thread out of `idleCount`), possibly as the wait timed out.
          wakeups -= 1
          break
        }
        if !signalled {
          idleCount -= 1
          threadCount -= 1
          return nil
        }
        // A spurious wake-up: keep waiting.
      }
    }
  }

  /// The oldest work, if any. Called with `condition` locked.
  private func takeWork() -> (@Sendable () -> Void)? {
    guard head < queue.count, let work = queue[head] else { return nil }
    queue[head] = nil
    head += 1
    if head == queue.count {
      queue.removeAll(keepingCapacity: queue.count <= 1_024)
      head = 0
    } else if head >= 1_024, head * 2 >= queue.count {
      queue.removeFirst(head)
      head = 0
    }
    return work
  }
}

/// Runs closures one at a time, in order, on threads of a ``ThreadPool``: a serial queue whose work never
/// waits for Dispatch.
final class ThreadPoolSerialQueue: Executor, @unchecked Sendable {
  // Sendable: `pending`, `head` and `isScheduled` are only touched with `lock` held.
  private let pool: ThreadPool
  private let lock = NSLock()
  private var pending: [(@Sendable () -> Void)?] = []
  private var head = 0
  /// Whether a thread of the pool is running, or about to run, the pending closures.
  private var isScheduled = false

  init(pool: ThreadPool = .blocking) {
    self.pool = pool
  }

  func execute(_ closure: @escaping @Sendable () -> Void) {
    lock.lock()
    pending.append(closure)
    let schedules = !isScheduled
    isScheduled = true
    lock.unlock()
    if schedules {
      pool.execute { [self] in drain() }
    }
  }

  /// Runs the pending closures until there are none.
  private func drain() {
    while true {
      lock.lock()
      guard head < pending.count else {
        pending.removeAll(keepingCapacity: true)
        head = 0
        isScheduled = false
        lock.unlock()
        return
      }
      let closure = pending[head]
      pending[head] = nil
      head += 1
      lock.unlock()
      closure?()
    }
  }
}
