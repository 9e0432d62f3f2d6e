import Foundation

/// Runs the tasks a `.katana6` store owns (the task that applies sent updaters, start-up; the tasks of sent
/// side effects run on ``BlockingTaskExecutor``), and those of ``promiseDispatch(_:)``, on threads of the
/// package's own, one per core: legacy code blocking Dispatch's worker threads cannot delay them.
///
/// On Linux, Swift's global executor runs tasks on libdispatch's global queues, whose worker threads
/// `DispatchQueue.global()` and `OperationQueue` share: a task started while Katana 6 code blocks all of them in
/// `Hydra.await` waits until libdispatch adds a thread, one a second, behind every block queued before it.
/// Nothing a store's own task runs blocks its thread (Katana 6's synchronous side effects and interceptors
/// run on ``ThreadPool/blocking``; `Hydra.await` in a task throws), so a fixed number of threads suffices, as
/// for Swift's cooperative pool.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class LegacyTaskExecutor: TaskExecutor {
  static let shared = LegacyTaskExecutor()

  private let pool = ThreadPool(
    name: "katana.store", limit: Swift.max(2, ProcessInfo.processInfo.activeProcessorCount))

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    pool.execute { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
  }
}

/// Starts tasks that prefer ``LegacyTaskExecutor`` where the platform has task executors (Linux; Apple
/// platforms from macOS 15 and iOS 18), and that run on Swift's cooperative pool elsewhere (on Apple
/// platforms, Dispatch's blocked worker threads do not delay that pool), or while
/// ``TaskExecutorFallbacks/areForced`` is true.
enum LegacyTasks {
  /// Starts `operation` as `Task { }` does (task-locals and priority inherited).
  static func start(
    forcingFallbacks: Bool = TaskExecutorFallbacks.areForced,
    _ operation: sending @escaping @isolated(any) () async -> Void
  ) -> Task<Void, Never> {
    if !forcingFallbacks, #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
      return Task(executorPreference: LegacyTaskExecutor.shared, operation: operation)
    }
    guard forcingFallbacks, !TaskExecutorFallbacks.areForced else { return Task(operation: operation) }
    return Task { await TaskExecutorFallbacks.$areForced.withValue(true) { await operation() } }
  }

  /// Starts `operation` as `Task.detached(priority: Task.currentPriority)` does.
  static func startDetached(
    forcingFallbacks: Bool = TaskExecutorFallbacks.areForced,
    _ operation: sending @escaping @isolated(any) () async -> Void
  ) -> Task<Void, Never> {
    if !forcingFallbacks, #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
      return Task.detached(executorPreference: LegacyTaskExecutor.shared, operation: operation)
    }
    guard forcingFallbacks else { return Task.detached(priority: Task.currentPriority, operation: operation) }
    // A detached task does not inherit task-locals: the forced fallbacks are bound again for its run.
    return Task.detached(priority: Task.currentPriority) {
      await TaskExecutorFallbacks.$areForced.withValue(true) { await operation() }
    }
  }
}

/// Runs the tasks of a `.katana6` store's sent side effects on ``ThreadPool/blocking``, with blocking allowed:
/// a Katana 6 side-effect body (which may block in `Hydra.await`) dispatched from the task's nonisolated code
/// then runs in place in its task, instead of being handed to another thread and back
/// (``LegacySideEffectRunner``; code isolated to an actor runs where the actor does). The pool starts a thread
/// whenever none is idle, so a body that blocks never holds up another.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class BlockingTaskExecutor: TaskExecutor {
  static let shared = BlockingTaskExecutor()

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    ThreadPool.blocking.execute { [self] in
      LegacyBlocking.allowingBlocking { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
  }

  /// Whether the calling code runs in a task that prefers this executor: then its nonisolated code runs here
  /// and may block, but code isolated to an actor (the main actor included) runs where the actor does.
  static var isPreferredByCurrentTask: Bool {
    let own = shared.asUnownedTaskExecutor()
    return withUnsafeCurrentTask { task in task?.unownedTaskExecutor == own }
  }

  /// Starts `operation` in a detached task that prefers this executor (as ``LegacyTasks/startDetached(_:)``
  /// does with ``LegacyTaskExecutor``). Where the platform has no task executors, `.katana6` stores start
  /// these tasks with ``LegacyTasks`` instead, and bodies run through ``LegacySideEffectRunner``'s own threads.
  static func startDetached(_ operation: sending @escaping @isolated(any) () async -> Void) -> Task<Void, Never> {
    Task.detached(executorPreference: shared, operation: operation)
  }
}
