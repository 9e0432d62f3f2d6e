/// Where a store is in its life. Every entry point decides what it does in each phase.
@usableFromInline
enum StorePhase {
  /// The state initializer has not finished: dispatches wait in the mailbox.
  case starting
  /// Dispatches run.
  case ready
  /// The state initializer threw: every dispatch fails with ``StoreError/startupFailed(_:)``.
  case failed(any Error)
  /// ``Store/shutdown()`` ran or the store was released: every dispatch fails with
  /// ``StoreError/storeShutDown``.
  case shutDown

  @inlinable
  var isReady: Bool {
    if case .ready = self { return true }
    return false
  }

  /// The error a new dispatch gets in this phase, or nil if it may proceed (possibly after waiting).
  @inlinable
  var dispatchError: StoreError? {
    switch self {
    case .starting, .ready: nil
    case .failed(let error): .startupFailed(error)
    case .shutDown: .storeShutDown
    }
  }
}

/// Identity of a task, kept only to compare with (deadlock detection). Never used to reach the task.
///
/// It holds the task's address without retaining it. That is sound because the store only keeps an
/// identity while its task is alive: while the task holds the turn, waits in the mailbox, or runs the
/// state initializer.
@usableFromInline
struct TaskIdentity: Equatable, @unchecked Sendable {  // Sendable: only compared, never dereferenced.
  @usableFromInline let address: UnsafeRawPointer

  @inlinable
  init(_ task: UnsafeCurrentTask) {
    // `UnsafeCurrentTask` is a single reference to the task object.
    address = unsafeBitCast(task, to: UnsafeRawPointer.self)
  }

  /// The identity of the calling task, or nil outside of any task.
  @inlinable
  static var current: TaskIdentity? {
    withUnsafeCurrentTask { task in task.map(TaskIdentity.init) }
  }
}

/// One place in the mailbox, in arrival order.
@usableFromInline
enum MailboxEntry {
  /// An awaited updater dispatch. Resuming the continuation hands the turn to the waiting task.
  case updater(id: UInt64, task: TaskIdentity?, continuation: UnsafeContinuation<Void, any Error>)
  /// An awaited side effect dispatched before start-up completed. Resuming lets it start.
  case sideEffect(id: UInt64, continuation: UnsafeContinuation<Void, any Error>)
  /// An item from `send`.
  case job(MailboxJob)
  /// An entry whose dispatcher was cancelled; skipped.
  case withdrawn

  @inlinable
  var id: UInt64? {
    switch self {
    case .updater(let id, _, _), .sideEffect(let id, _): id
    case .job(let job): job.id
    case .withdrawn: nil
    }
  }

  /// Fails the entry's dispatcher with `error`.
  @inlinable
  func fail(_ error: any Error) {
    switch self {
    case .updater(_, _, let continuation), .sideEffect(_, let continuation): continuation.resume(throwing: error)
    case .job(let job): job.fail(error)
    case .withdrawn: break
    }
  }
}

/// What to do, outside the lock, after a mailbox transition.
@usableFromInline
struct MailboxActions {
  /// Waiters to resume: updater waiters now hold the turn, side-effect waiters may start.
  @usableFromInline var resumptions: [UnsafeContinuation<Void, any Error>] = []
  /// An updater job that now holds the turn and needs a new pump task.
  @usableFromInline var startPump: MailboxJob?
  /// Updater jobs that now hold the turn, in mailbox order, handed back to the pump that released it.
  @usableFromInline var continuePump: [MailboxJob] = []
  /// Side-effect jobs that may start, each in its own store-owned task.
  @usableFromInline var startSideEffects: [MailboxJob] = []

  @inlinable
  init() {}

  @inlinable
  var isEmpty: Bool {
    resumptions.isEmpty && startPump == nil && continuePump.isEmpty && startSideEffects.isEmpty
  }
}

/// The mailbox: the order in which updaters get their turn.
///
/// This is a pure state machine with no locking of its own: ``StoreCore`` keeps it inside its lock, calls a
/// transition, and performs the returned ``MailboxActions`` after unlocking.
///
/// Updaters run one at a time: whoever holds the *turn* may run an updater and its interceptor chain, and
/// everything that arrives meanwhile queues behind it. When the turn is released, the entries at the head
/// are started in order: side-effect entries start and the scan continues; the first updater entry gets the
/// turn and the scan stops.
@usableFromInline
struct Mailbox {
  @usableFromInline private(set) var entries = RingBuffer<MailboxEntry>()
  /// Whether some dispatch currently holds the turn.
  @usableFromInline var turnHeld = false
  /// The task that holds the turn while running an interceptor chain, for deadlock detection.
  @usableFromInline var turnHolder: TaskIdentity?

  /// The most sent updaters the pump takes from the mailbox at once.
  @usableFromInline static let pumpBatchLimit = 256

  @inlinable
  init() {}

  /// Whether a newly arrived updater may take the turn right away.
  @inlinable
  var isIdle: Bool { !turnHeld && entries.isEmpty }

  @inlinable
  mutating func enqueue(_ entry: MailboxEntry) {
    entries.append(entry)
  }

  /// Takes the turn for a dispatch that arrived while the mailbox was idle.
  @inlinable
  mutating func takeTurn(holder: TaskIdentity?) {
    // Internal invariant: callers check `isIdle` (or that they were handed the turn) first.
    precondition(!turnHeld, "Katana internal error: turn taken twice")
    turnHeld = true
    turnHolder = holder
  }

  /// Releases the turn and starts whatever comes next.
  ///
  /// - Parameter byPump: Whether the pump task released it, in which case the next updater jobs are
  ///   handed back to that pump (``MailboxActions/continuePump``) instead of starting a new one.
  @inlinable
  mutating func releaseTurn(byPump: Bool) -> MailboxActions {
    turnHeld = false
    turnHolder = nil
    return advance(byPump: byPump)
  }

  /// Starts the entries at the head of the mailbox, up to and including the first updater.
  @inlinable
  mutating func advance(byPump: Bool) -> MailboxActions {
    var actions = MailboxActions()
    guard !turnHeld else { return actions }
    while let entry = entries.first {
      switch entry {
      case .withdrawn:
        entries.removeFirst()
      case .sideEffect(_, let continuation):
        entries.removeFirst()
        actions.resumptions.append(continuation)
      case .updater(_, let task, let continuation):
        entries.removeFirst()
        turnHeld = true
        turnHolder = task
        actions.resumptions.append(continuation)
        return actions
      case .job(let job) where job.isUpdater:
        entries.removeFirst()
        turnHeld = true
        if byPump {
          // Hand the pump every consecutive sent updater at once: they are next in mailbox order anyway,
          // and one lock acquisition per batch keeps `send` throughput up.
          actions.continuePump.append(job)
          while actions.continuePump.count < Self.pumpBatchLimit, case .job(let next)? = entries.first,
            next.isUpdater
          {
            entries.removeFirst()
            actions.continuePump.append(next)
          }
        } else {
          actions.startPump = job
        }
        return actions
      case .job(let job):
        entries.removeFirst()
        actions.startSideEffects.append(job)
      }
    }
    return actions
  }

  /// Withdraws the pending entry `id`, if it has not started. Returns the withdrawn entry.
  @inlinable
  mutating func withdraw(_ id: UInt64) -> MailboxEntry? {
    entries.replaceFirst { entry in entry.id == id ? .withdrawn : nil }
  }

  /// Removes every pending entry, oldest first (start-up failure, shutdown).
  @inlinable
  mutating func removeAll() -> [MailboxEntry] {
    entries.removeAll()
  }

  /// Whether the pending updater entry `id` is still waiting.
  @inlinable
  func isPending(_ id: UInt64) -> Bool {
    entries.contains { $0.id == id }
  }
}
