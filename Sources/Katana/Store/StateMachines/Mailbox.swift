/// What the mailbox needs to know about an item handed over with `send`.
@usableFromInline
protocol MailboxItem {
  /// Whether the item is a state updater (it needs the turn) or a side effect.
  var isUpdater: Bool { get }
}

/// The mailbox: the order in which updaters get their turn, as a pure state machine.
///
/// Updaters run one at a time: whoever holds the *turn* may run an updater and its interceptor chain, and
/// everything that arrives meanwhile queues behind it. When the turn is released, the entries at the head are
/// started in order: side-effect entries start and the scan continues; the first updater entry gets the turn
/// and the scan stops.
///
/// ``StoreCore`` keeps it inside its lock, calls a transition, and performs what it returns after unlocking.
/// Awaited dispatches wait as ``Waiters`` kept here, so that handing over the turn, cancellation and shutdown
/// decide each waiter's outcome exactly once. Each entry has a position (its rank among every entry ever
/// enqueued), so that withdrawing one is O(1). Generic over the continuation and job types so that the tests
/// can explore it exhaustively with doubles (`MailboxStateMachineTests`).
@usableFromInline
struct Mailbox<C: Resumable, Job: MailboxItem> where C.Value == Void {
  /// One place in the mailbox, in arrival order.
  @usableFromInline
  enum Entry {
    /// An awaited updater dispatch. Resolving its waiter hands the turn to the waiting task.
    case updater(waiter: UInt64, holder: TaskIdentity?)
    /// An awaited side effect dispatched before start-up completed. Resolving its waiter lets it start.
    case sideEffect(waiter: UInt64)
    /// An item from `send`.
    case job(Job)
    /// An entry whose dispatcher was cancelled; skipped.
    case withdrawn
  }

  /// Whether the mailbox runs what arrives.
  @usableFromInline
  enum Status {
    /// The store is starting: entries wait.
    case starting
    /// The store is ready.
    case open
    /// Start-up failed or the store shut down: arrivals fail with this error.
    case closed(StoreError)
  }

  /// What an awaited dispatch does on arrival.
  @usableFromInline
  enum Arrival {
    /// Go on now (for an updater: holding the turn).
    case proceed
    /// Wait as this waiter; the entry is at this position.
    case wait(waiter: UInt64, position: UInt64)
    /// Fail with this error (the mailbox is closed).
    case fail(StoreError)
    /// Waiting could never end: the caller holds the turn (``Deadlock/holdsTurn``) or runs the state
    /// initializer (``Deadlock/runsStartup``).
    case deadlock(Deadlock)
  }

  /// Why waiting would never end.
  @usableFromInline
  enum Deadlock {
    case holdsTurn
    case runsStartup
  }

  /// What `send` does with a new job.
  @usableFromInline
  enum JobArrival {
    /// Queued at this position.
    case queued(position: UInt64, waitingCount: Int)
    /// An updater that now holds the turn: start a pump with it.
    case startPump
    /// A side effect that may start now.
    case startSideEffect
    /// The mailbox is closed.
    case fail(StoreError)
  }

  /// One thing to start, outside the lock.
  @usableFromInline
  enum Wakeup {
    /// Resume a waiter: an updater waiter now holds the turn, a side-effect waiter may start (or, when the
    /// mailbox closes, it fails).
    case resume(Resumption<C>)
    /// Start a sent side effect, in a store-owned task of its own.
    case startSideEffect(Job)
  }

  /// What to do, outside the lock, after a transition.
  @usableFromInline
  struct Actions {
    /// Waiters to resume and side effects to start, in mailbox order (an updater waiter that now holds the
    /// turn comes last).
    @usableFromInline var wakeups: [Wakeup] = []
    /// An updater job that now holds the turn and needs a new pump task; started after ``wakeups``.
    @usableFromInline var startPump: Job?
    /// Updater jobs that now hold the turn, in mailbox order, handed back to the pump that released it.
    @usableFromInline var continuePump: [Job] = []
    /// Jobs to fail with ``failure`` (the mailbox closed).
    @usableFromInline var failedJobs: [Job] = []
    var failure: StoreError?

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool {
      wakeups.isEmpty && startPump == nil && continuePump.isEmpty && failedJobs.isEmpty
    }
  }

  @usableFromInline private(set) var entries = RingBuffer<Entry>()
  /// The position of `entries.first`.
  @usableFromInline private(set) var headPosition: UInt64 = 0
  @usableFromInline private(set) var waiters = Waiters<C>()
  @usableFromInline private(set) var status = Status.starting
  /// Whether some dispatch currently holds the turn.
  @usableFromInline private(set) var turnHeld = false
  /// The task that holds the turn while running an interceptor chain, for deadlock detection.
  @usableFromInline var turnHolder: TaskIdentity?
  /// The number of items handed over with `send` so far: each job's arrival number, in mailbox order.
  private(set) var sentCount: UInt64 = 0

  /// The most sent updaters the pump takes from the mailbox at once.
  @usableFromInline static var pumpBatchLimit: Int { 256 }

  @inlinable
  init() {}

  /// Whether a newly arrived updater may take the turn right away.
  @inlinable
  var canTakeTurnNow: Bool {
    if case .open = status { return !turnHeld && entries.isEmpty }
    return false
  }

  /// The number of entries waiting (withdrawn ones included until they reach the head).
  @usableFromInline var waitingCount: Int { entries.count }

  // MARK: - Arrivals

  /// Takes the turn for a dispatch that found the mailbox idle (``canTakeTurnNow``).
  @inlinable
  mutating func takeTurn(holder: TaskIdentity?) {
    // Internal invariant: callers check `canTakeTurnNow` first.
    precondition(!turnHeld, "Katana internal error: turn taken twice")
    turnHeld = true
    turnHolder = holder
  }

  /// An awaited updater dispatch arrives from task `holder`; `runsStartup` tells whether that task runs the
  /// state initializer.
  @inlinable
  mutating func arriveUpdater(holder: TaskIdentity?, runsStartup: Bool) -> Arrival {
    switch status {
    case .closed(let error):
      return .fail(error)
    case .open where canTakeTurnNow:
      takeTurn(holder: holder)
      return .proceed
    case .open, .starting:
      if let holder, holder == turnHolder { return .deadlock(.holdsTurn) }
      if runsStartup { return .deadlock(.runsStartup) }
      let waiter = waiters.add()
      return .wait(waiter: waiter, position: enqueue(.updater(waiter: waiter, holder: holder)))
    }
  }

  /// An awaited side effect arrives: it starts at once once the store is ready, and before that waits behind
  /// what arrived earlier.
  mutating func arriveSideEffect(runsStartup: Bool) -> Arrival {
    switch status {
    case .closed(let error):
      return .fail(error)
    case .open:
      return .proceed
    case .starting:
      if runsStartup { return .deadlock(.runsStartup) }
      let waiter = waiters.add()
      return .wait(waiter: waiter, position: enqueue(.sideEffect(waiter: waiter)))
    }
  }

  /// Waiter `id`'s task has suspended; returns the resumption if its outcome is already decided.
  mutating func suspend(_ waiter: UInt64, on continuation: C) -> Resumption<C>? {
    waiters.suspend(waiter, on: continuation)
  }

  /// The task of waiter `id`, queued at `position`, is cancelled: withdraws its entry if it is still queued
  /// and fails it with `CancellationError`. Returns nil if it already had its turn (it then goes on).
  mutating func cancelWaiter(_ waiter: UInt64, at position: UInt64) -> Resumption<C>? {
    if let offset = offset(of: position) {
      switch entries[offset] {
      case .updater(let id, _) where id == waiter, .sideEffect(let id) where id == waiter:
        entries[offset] = .withdrawn
      default:
        break
      }
    }
    return waiters.resolve(waiter, with: .failure(CancellationError()))
  }

  /// A job handed over with `send` arrives; returns its arrival number and what to do with it.
  mutating func arriveJob(_ job: Job) -> (arrival: UInt64, decision: JobArrival) {
    sentCount &+= 1
    switch status {
    case .closed(let error):
      return (sentCount, .fail(error))
    case .open where canTakeTurnNow:
      if job.isUpdater {
        takeTurn(holder: nil)
        return (sentCount, .startPump)
      }
      return (sentCount, .startSideEffect)
    case .open, .starting:
      let position = enqueue(.job(job))
      return (sentCount, .queued(position: position, waitingCount: entries.count))
    }
  }

  /// Withdraws the job queued at `position`, if it has not started; returns it.
  mutating func withdrawJob(at position: UInt64) -> Job? {
    guard let offset = offset(of: position), case .job(let job) = entries[offset] else { return nil }
    entries[offset] = .withdrawn
    return job
  }

  /// Whether something is still queued at `position`.
  func isQueued(at position: UInt64) -> Bool {
    guard let offset = offset(of: position) else { return false }
    if case .withdrawn = entries[offset] { return false }
    return true
  }

  // MARK: - The turn

  /// Releases the turn and starts whatever comes next.
  ///
  /// - Parameter byPump: Whether the pump task released it, in which case the next updater jobs are handed
  ///   back to that pump (``Actions/continuePump``) instead of starting a new one.
  @inlinable
  mutating func releaseTurn(byPump: Bool) -> Actions {
    // Internal invariant: only the holder releases the turn.
    precondition(turnHeld, "Katana internal error: turn released but not held")
    turnHeld = false
    turnHolder = nil
    return advance(byPump: byPump)
  }

  /// Releases the turn if nothing waits behind it, and returns true; otherwise changes nothing and returns
  /// false (the caller then calls ``releaseTurn(byPump:)``). The common case of a commit with observers,
  /// without building an empty ``Actions``.
  @inlinable
  mutating func releaseTurnIfNothingWaits() -> Bool {
    // Internal invariant: only the holder releases the turn.
    precondition(turnHeld, "Katana internal error: turn released but not held")
    guard entries.isEmpty else { return false }
    turnHeld = false
    turnHolder = nil
    return true
  }

  /// Starts the entries at the head of the mailbox, up to and including the first updater.
  @inlinable
  mutating func advance(byPump: Bool) -> Actions {
    var actions = Actions()
    guard case .open = status, !turnHeld else { return actions }
    while let entry = entries.first {
      switch entry {
      case .withdrawn:
        removeFirst()
      case .sideEffect(let waiter):
        removeFirst()
        if let resumption = waiters.resolve(waiter, with: .success(())) {
          actions.wakeups.append(.resume(resumption))
        }
      case .updater(let waiter, let holder):
        removeFirst()
        turnHeld = true
        turnHolder = holder
        if let resumption = waiters.resolve(waiter, with: .success(())) {
          actions.wakeups.append(.resume(resumption))
        }
        return actions
      case .job(let job) where job.isUpdater:
        removeFirst()
        turnHeld = true
        if byPump {
          // Hand the pump every consecutive sent updater at once: they are next in mailbox order anyway,
          // and one lock acquisition per batch keeps `send` throughput up.
          actions.continuePump.append(job)
          while actions.continuePump.count < Self.pumpBatchLimit, case .job(let next)? = entries.first,
            next.isUpdater
          {
            removeFirst()
            actions.continuePump.append(next)
          }
        } else {
          actions.startPump = job
        }
        return actions
      case .job(let job):
        removeFirst()
        actions.wakeups.append(.startSideEffect(job))
      }
    }
    return actions
  }

  // MARK: - Opening and closing

  /// The store is ready: runs what waited.
  mutating func open() -> Actions {
    guard case .starting = status else { return Actions() }
    status = .open
    return advance(byPump: false)
  }

  /// Start-up failed or the store shut down: fails every entry, and every later arrival, with `error`.
  /// Returns nil if the mailbox was closed already.
  mutating func close(_ error: StoreError) -> Actions? {
    if case .closed = status { return nil }
    status = .closed(error)
    var actions = Actions()
    actions.failure = error
    for entry in entries.removeAll() {
      switch entry {
      case .updater(let waiter, _), .sideEffect(let waiter):
        if let resumption = waiters.resolve(waiter, with: .failure(error)) {
          actions.wakeups.append(.resume(resumption))
        }
      case .job(let job):
        actions.failedJobs.append(job)
      case .withdrawn:
        break
      }
    }
    return actions
  }

  // MARK: - Positions

  @inlinable
  mutating func enqueue(_ entry: Entry) -> UInt64 {
    let position = headPosition &+ UInt64(entries.count)
    entries.append(entry)
    return position
  }

  @inlinable
  mutating func removeFirst() {
    entries.removeFirst()
    headPosition &+= 1
  }

  /// The offset in `entries` of the entry at `position`, if it is still there.
  func offset(of position: UInt64) -> Int? {
    guard position >= headPosition, position - headPosition < UInt64(entries.count) else { return nil }
    return Int(position - headPosition)
  }
}
