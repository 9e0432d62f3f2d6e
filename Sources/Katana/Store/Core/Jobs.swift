/// An item handed to the store with `send`, waiting in the mailbox or running.
///
/// Not generic on purpose: the pump runs jobs of every type through this one class, and generic code
/// reached that way would run unspecialised. The work itself is a closure created where `send` was
/// called, which the compiler specialises for the store's types.
@usableFromInline
final class MailboxJob: JobControl, MailboxItem, @unchecked Sendable {
  // Sendable: `position` and `origin` are set once, under the store's lock, before the job is shared, and
  // only read under that lock afterwards; the other fields are immutable, and the closure and the handle are
  // Sendable.

  /// The job's identifier, also used for its store-owned task.
  let id: UInt64
  /// Whether the job applies a state updater (the pump runs it holding the turn) or runs a side effect
  /// (in a store-owned task of its own).
  @usableFromInline let isUpdater: Bool
  /// Runs the item and completes the handle.
  let work: Work
  let handle: any HandleCompletion
  let store: any JobStore
  /// Whether the store counts this job as in-flight work until it finishes.
  let tracksActivity: Bool
  /// The job's position in the mailbox, if it was queued.
  var position: UInt64?
  /// For a side effect, what cancellations by id need to know about it (see ``SentItemOrigin``).
  var origin: SentItemOrigin?

  /// What running the job takes.
  @usableFromInline
  enum Work: Sendable {
    /// A state updater with no interceptor to go through: commit and complete, no suspension.
    case synchronous(@Sendable () -> Void)
    /// Anything that may suspend: an interceptor chain, a side effect.
    case asynchronous(@Sendable () async -> Void)
  }

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
  func run() async {
    guard handle.markStarted() else {
      finished()
      return
    }
    switch work {
    case .synchronous(let body): body()
    case .asynchronous(let body): await body()
    }
    finished()
  }

  /// Completes the handle with `error` without running the item.
  func fail(_ error: any Error) {
    handle.fail(error)
    finished()
  }

  func finished() {
    if tracksActivity || origin != nil { store.jobFinished(self) }
  }

  @usableFromInline func cancel() {
    store.cancelJob(self)
  }

  @usableFromInline func deadlockIfWaited(started: Bool) -> (any Error)? {
    store.deadlockIfWaiting(for: self, isUpdaterNotStarted: isUpdater && !started)
  }
}

/// What a job needs from its store, whatever the store's types.
@usableFromInline
protocol JobStore: AnyObject, Sendable {
  func cancelJob(_ job: MailboxJob)
  func deadlockIfWaiting(for job: MailboxJob, isUpdaterNotStarted: Bool) -> StoreError?
  /// The job has finished (or was withdrawn or failed without running).
  func jobFinished(_ job: MailboxJob)
}

/// A side effect handed over with `send`, as cancellations by id see it: its rank among the items sent to its
/// store, the sent item whose work sent it, and the ids cancelled after it entered the mailbox.
///
/// The store-owned task that runs the item binds it to ``current``, so the work the item does, and the tasks
/// it starts, carry it. A cancellation by id marks every live item that entered the mailbox before it: from
/// outside, every live item; from a sent item's work, the items that entered before that item and the items
/// that item sent itself (sent before the cancellation, in its program order). A run that a marked item's
/// work registers under that id later is cancelled before its operation starts (``EffectRegistry``).
@usableFromInline
package final class SentItemOrigin: @unchecked Sendable {
  // Sendable: `cancelledIDs` is only touched under the store's effect registry lock; `sender` is set before
  // the origin is shared.

  /// The item whose work runs in the current task, if it was handed over with `send`.
  @TaskLocal static var current: SentItemOrigin?

  /// The item's rank among the items sent to its store.
  let arrival: UInt64
  /// The sent item whose work sent this one, if any (weak: a chain of items sending the next must not keep
  /// them all alive; the sender is alive while its work can cancel).
  private(set) weak var sender: SentItemOrigin?
  /// Ids cancelled by id after the item entered the mailbox.
  var cancelledIDs: Set<EffectID> = []

  init(arrival: UInt64, sender: SentItemOrigin?) {
    self.arrival = arrival
    self.sender = sender
  }
}
