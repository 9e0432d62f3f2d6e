import Dispatch
import Katana

/// Runs a task's jobs through an ``Executor``, one at a time: lets async code (a state initializer, a
/// side-effect body) run where a Katana 6 app expects it, such as the main queue or a thread that may
/// block.
final class ExecutorBackedSerialExecutor: SerialExecutor, @unchecked Sendable {
  // Sendable: both properties are immutable and Sendable themselves; the class is only unchecked because
  // `SerialExecutor` requires a class here.
  private let executor: any Executor
  /// Whether code running these jobs may block in `Hydra.await` (see `LegacyBlocking`).
  private let allowsBlocking: Bool

  init(executor: any Executor, allowsBlocking: Bool) {
    self.executor = executor
    self.allowsBlocking = allowsBlocking
  }

  func enqueue(_ job: UnownedJob) {
    let target = asUnownedSerialExecutor()
    if allowsBlocking {
      executor.execute { LegacyBlocking.allowingBlocking { job.runSynchronously(on: target) } }
    } else {
      executor.execute { job.runSynchronously(on: target) }
    }
  }

  func asUnownedSerialExecutor() -> UnownedSerialExecutor {
    UnownedSerialExecutor(ordinary: self)
  }
}

/// An actor on an ``ExecutorBackedSerialExecutor``: code isolated to it runs on that executor.
actor ExecutorIsland {
  private let executor: ExecutorBackedSerialExecutor
  /// Touched on entry, so that the optimizer cannot skip the switch to this actor's executor: a function
  /// that does not use its isolated parameter's state may run where its caller is.
  private var entries = 0

  init(executor: any Executor, allowsBlocking: Bool) {
    self.executor = ExecutorBackedSerialExecutor(executor: executor, allowsBlocking: allowsBlocking)
  }

  nonisolated var unownedExecutor: UnownedSerialExecutor {
    executor.asUnownedSerialExecutor()
  }

  /// Runs `body` on `island`'s executor and returns its value. `body` is `nonisolated(nonsending)`, so it
  /// stays there, across its own suspensions, until it returns.
  static func run<T: Sendable>(on island: isolated ExecutorIsland, _ body: nonisolated(nonsending) () async throws -> T)
    async throws -> T
  {
    island.entries &+= 1
    return try await body()
  }
}

/// Runs each side-effect body of a Katana 6-style store on a thread of its own that may block, so that
/// synchronous side effects waiting in `Hydra.await` never block the cooperative pool, and never wait for a
/// thread from Dispatch (which stops at 255 on Linux).
struct LegacySideEffectRunner: SideEffectRunner {
  /// Whether the store was created while ``TaskExecutorFallbacks/areForced`` was true: then no task prefers
  /// ``BlockingTaskExecutor``, and every body goes to a thread of its own, as on the Apple versions without
  /// task executors.
  let forcesFallbacks: Bool

  nonisolated(nonsending) func run<T: Sendable>(_ body: sending nonisolated(nonsending) () async throws -> T)
    async throws
    -> T
  {
    // The task of a sent side effect already runs on `ThreadPool.blocking`, where blocking is allowed
    // (`BlockingTaskExecutor`): the body runs right there, without two hand-offs between threads. That holds
    // only for a nonisolated caller. The body runs, and resumes after each suspension, on its caller's actor,
    // whatever the task prefers: on the main actor that is the main thread and on an actor with an executor
    // of its own that executor's threads, where `Hydra.await` throws; a default actor does run on the
    // preferred executor, but the body would hold the actor while it blocks, and a promise that needs the
    // actor would never settle. From any actor, the body goes to a thread of its own, as from other tasks.
    // (`#isolation` is bound first: `#isolation == nil` in one expression crashes Swift 6.3's code generation.)
    let callerIsolation = #isolation
    if !forcesFallbacks, #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *),
      callerIsolation == nil, BlockingTaskExecutor.isPreferredByCurrentTask
    {
      return try await body()
    }
    // Otherwise one serial queue per run: the body and its continuations run there, one at a time, on a
    // thread of `ThreadPool.blocking`, which starts one whenever none is idle.
    let island = ExecutorIsland(executor: ThreadPoolSerialQueue(), allowsBlocking: true)
    return try await ExecutorIsland.run(on: island, body)
  }
}

/// Runs a store's state initializer on the executor a Katana 6 configuration names.
struct ExecutorRunner: SideEffectRunner {
  let executor: any Executor

  nonisolated(nonsending) func run<T: Sendable>(_ body: sending nonisolated(nonsending) () async throws -> T)
    async throws
    -> T
  {
    try await ExecutorIsland.run(on: ExecutorIsland(executor: executor, allowsBlocking: false), body)
  }
}
