import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import Testing

// On Linux, Swift's global executor runs tasks on libdispatch's global queues: the same few worker threads
// per quality of service (one per core) that `DispatchQueue.global()` and `OperationQueue` use. When legacy
// code blocks all of them in `Hydra.await`, libdispatch adds one worker a second, so a task started then waits
// behind every block queued before it. A `.katana6` store's own work (the task that applies sent updaters,
// the tasks that run sent side effects) must not wait there: it would delay, by seconds, the dispatches the
// blocked code waits for.
//
// Not run with the pre-macOS 15 fallbacks forced (KATANA_TASK_EXECUTOR_FALLBACKS): they start the store's tasks
// on Swift's cooperative pool, which on Apple platforms does not share Dispatch's worker threads, but on Linux
// is those threads, so forcing them here would test a combination that no platform has.
//
// The failsafes are far longer than the store needs (milliseconds) and far shorter than libdispatch needs to
// reach the store's work behind the blocked blocks (one second per block): a regression fails, never hangs.

@Suite(
  "Legacy code blocking Dispatch's worker threads never delays a .katana6 store",
  .serialized, .timeLimit(.failsafeMinutes(3)))
struct BlockedDispatchWorkersTests {
  /// How many blocks wait behind the blocked workers: libdispatch would need about as many seconds to reach
  /// work queued after them.
  static let queuedBlocks = 64
  /// 15 seconds, times `failsafeScale` (CI's thread-sanitizer pass: 60).
  static let failsafe: TimeInterval = 15 * failsafeScale

  @Test func storeWork_whileEveryDispatchWorkerIsBlocked_runsAtOnce() async throws {
    let store = makeStore(interceptors: [asyncPassThrough])
    try await store.waitUntilReady()
    let watchdog = Watchdog(seconds: Self.failsafe)
    try await Self.whileEveryDispatchWorkerIsBlocked {
      // A side effect runs in a task the store starts; an updater, with an interceptor, in the task that
      // applies sent updaters.
      try Hydra.await(watchdog.guarding(store.dispatch(LogEffect(entry: "side effect"))))
      try Hydra.await(watchdog.guarding(store.dispatch(AddLog(entry: "updater"))))
    }
    #expect(store.state.log == ["side effect", "updater"])
  }

  @Test func containerDispatch_whileEveryDispatchWorkerIsBlocked_runsAtOnce() async throws {
    // A dependency container's `promiseDispatch` runs each dispatch in a task of its own.
    let store = makeStore()
    try await store.waitUntilReady()
    let watchdog = Watchdog(seconds: Self.failsafe)
    try await Self.whileEveryDispatchWorkerIsBlocked {
      _ = try Hydra.await(watchdog.guarding(store.dependencies.dispatch(AddLog(entry: "from the container"))))
    }
    #expect(store.state.log == ["from the container"])
  }

  /// Runs `legacyCode` on a Dispatch worker thread (of the default quality of service, where tasks without a
  /// priority run too) while every other worker of that pool is blocked and more blocks wait behind them.
  static func whileEveryDispatchWorkerIsBlocked(_ legacyCode: @escaping @Sendable () throws -> Void) async throws {
    let flooded = ThreadLatch()
    let release = ThreadLatch()
    // The tests' own tasks run on those workers too: this one waits until the legacy code has released them.
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
      // The legacy code takes a worker first; then the workers it shares are blocked and more blocks queue
      // behind them.
      DispatchQueue.global().async {
        let outcome = Result {
          try flooded.wait()
          try legacyCode()
        }
        release.open()
        continuation.resume(with: outcome)
      }
      for _ in 0..<queuedBlocks {
        DispatchQueue.global().async { try? release.wait() }
      }
      flooded.open()
    }
  }

  @Test func operationQueue_operationsBlockingOnDispatches_allApplied() async throws {
    // The reported scenario: operations on an `OperationQueue` (Dispatch's worker threads) each block on a
    // dispatch to a `.katana6` store with a Katana 6 interceptor; all start before any dispatches.
    let store = makeStore(interceptors: [recordingInterceptor(Recorder())])
    try await store.waitUntilReady()
    let count = Self.queuedBlocks
    let start = ThreadLatch()
    let watchdog = Watchdog(seconds: Self.failsafe)
    let failures = LockedValue<[any Error]>([])
    let queue = OperationQueue()
    for index in 0..<count {
      queue.addOperation {
        do {
          try start.wait()
          try Hydra.await(in: .background, watchdog.guarding(store.dispatch(AddLog(entry: "\(index)"))))
        } catch {
          failures.withLock { $0.append(error) }
        }
      }
    }
    start.open()
    try await onOwnThread { queue.waitUntilAllOperationsAreFinished() }
    #expect(failures.withLock { $0 }.isEmpty)
    #expect(Set(store.state.log) == Set((0..<count).map { "\($0)" }))
  }
}

/// An async interceptor that hands every item on: with it, sent updaters are applied by a task the store
/// starts.
let asyncPassThrough: StoreInterceptor = { _ in { next in { item in try await next(item) } } }
