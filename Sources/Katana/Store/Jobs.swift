/// An item handed to the store with `send`, waiting in the mailbox or running.
///
/// Not generic on purpose: the pump runs jobs of every type through this one class, and generic code
/// reached that way would run unspecialised. The work itself is a closure created where `send` was
/// called, which the compiler specialises for the store's types.
@usableFromInline
final class MailboxJob: JobControl, @unchecked Sendable {
  // Sendable: immutable fields; the closure and the handle are Sendable.

  /// The mailbox entry identifier, also used for the job's store-owned task.
  @usableFromInline let id: UInt64
  /// Whether the job applies a state updater (the pump runs it holding the turn) or runs a side effect
  /// (in a store-owned task of its own).
  @usableFromInline let isUpdater: Bool
  /// Runs the item and completes the handle.
  @usableFromInline let work: Work
  @usableFromInline let handle: any HandleCompletion
  @usableFromInline let store: any JobStore
  /// Whether the store counts this job as in-flight work until it finishes.
  @usableFromInline let tracksActivity: Bool

  /// What running the job takes.
  @usableFromInline
  enum Work: Sendable {
    /// A state updater with no interceptor to go through: commit and complete, no suspension.
    case synchronous(@Sendable () -> Void)
    /// Anything that may suspend: an interceptor chain, a side effect.
    case asynchronous(@Sendable () async -> Void)
  }

  @inlinable
  init(
    id: UInt64, isUpdater: Bool, store: any JobStore, handle: any HandleCompletion, work: Work, tracksActivity: Bool
  ) {
    self.id = id
    self.isUpdater = isUpdater
    self.store = store
    self.handle = handle
    self.work = work
    self.tracksActivity = tracksActivity
  }

  /// Runs the item and completes the handle; a job cancelled before it starts is withdrawn instead.
  @inlinable
  func run() async {
    guard handle.markStarted() else {
      if tracksActivity { store.endActivity() }
      return
    }
    switch work {
    case .synchronous(let body): body()
    case .asynchronous(let body): await body()
    }
    if tracksActivity { store.endActivity() }
  }

  /// Completes the handle with `error` without running the item.
  @inlinable
  func fail(_ error: any Error) {
    handle.fail(error)
    if tracksActivity { store.endActivity() }
  }

  @usableFromInline
  func cancel() {
    store.cancelJob(id)
  }

  @usableFromInline
  func deadlockIfWaited(started: Bool) -> (any Error)? {
    store.deadlockIfWaiting(forJob: id, isUpdaterNotStarted: isUpdater && !started)
  }
}

/// What a job needs from its store, whatever the store's types.
@usableFromInline
protocol JobStore: AnyObject, Sendable {
  func cancelJob(_ id: UInt64)
  func deadlockIfWaiting(forJob id: UInt64, isUpdaterNotStarted: Bool) -> StoreError?
  /// Marks one unit of tracked work finished.
  func endActivity()
}
