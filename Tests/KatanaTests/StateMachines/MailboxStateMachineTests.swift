import Testing

@testable import Katana

/// A job double: which sent item it is.
struct FakeJob: MailboxItem {
  let index: Int
  let isUpdater: Bool
}

/// The mailbox with awaited updater dispatches (arrive, suspend, hold the turn, release it), sent items (a
/// pump runs updaters holding the turn; side effects run on their own), a cancellation, the store becoming
/// ready and shutting down, in every order.
struct MailboxModel: ExplorableModel {
  typealias Box = Mailbox<FakeContinuation<Void>, FakeJob>

  enum Dispatcher: Equatable {
    case idle
    case waiting(waiter: UInt64, position: UInt64, suspended: Bool)
    case holding
    case done
  }

  enum JobPhase: Equatable {
    case notSent
    case queued(position: UInt64)
    /// Started: an updater in the pump's batch, or a side effect running.
    case running
    case done
    case failed
  }

  var mailbox = Box()
  var dispatchers: [Dispatcher]
  /// Per dispatcher, its arrival rank, and how it was resumed.
  var dispatcherArrival: [Int?]
  var resumed: [[Outcome]]
  /// The dispatcher a canceller cancels while it waits, and whether it has.
  var cancelTarget: Int?
  var jobs: [FakeJob]
  var jobPhases: [JobPhase]
  var jobArrival: [Int?]
  /// The job whose handle a canceller cancels while it is queued.
  var jobCancelTarget: Int?
  /// The updater jobs the pump holds the turn for.
  var pumpBatch: [Int]?
  var opened = false
  var closeEnabled: Bool
  var closed = false
  var arrivals = 0
  /// Arrival ranks in the order the entries started (were granted the turn, or started running).
  var starts: [Int] = []
  var errors: [String] = []

  init(dispatchers: Int, cancel: Int? = nil, jobs: [Bool] = [], cancelJob: Int? = nil, close: Bool) {
    self.dispatchers = Array(repeating: .idle, count: dispatchers)
    dispatcherArrival = Array(repeating: nil, count: dispatchers)
    resumed = Array(repeating: [], count: dispatchers)
    cancelTarget = cancel
    self.jobs = jobs.enumerated().map { FakeJob(index: $0.offset, isUpdater: $0.element) }
    jobPhases = Array(repeating: .notSent, count: jobs.count)
    jobArrival = Array(repeating: nil, count: jobs.count)
    jobCancelTarget = cancelJob
    closeEnabled = close
  }

  /// Dispatchers holding the turn, counting those granted it before they suspended, and the pump.
  var holders: Int {
    let granted = dispatchers.filter { dispatcher in
      guard case .waiting(let waiter, _, false) = dispatcher, case .success? = mailbox.waiters.decision(of: waiter)
      else { return false }
      return true
    }
    return dispatchers.filter { $0 == .holding }.count + granted.count + (pumpBatch == nil ? 0 : 1)
  }

  mutating func start(dispatcher: Int) {
    dispatchers[dispatcher] = .holding
    if let arrival = dispatcherArrival[dispatcher] { starts.append(arrival) }
  }

  mutating func start(job: Int) {
    jobPhases[job] = .running
    if let arrival = jobArrival[job] { starts.append(arrival) }
  }

  mutating func perform(_ actions: Box.Actions) {
    for wakeup in actions.wakeups {
      switch wakeup {
      case .resume(let resumption): resume(resumption)
      case .startSideEffect(let job): start(job: job.index)
      }
    }
    if let job = actions.startPump {
      if pumpBatch != nil { errors.append("a second pump started") }
      pumpBatch = [job.index]
      start(job: job.index)
    }
    for job in actions.continuePump {
      errors.append("pump batch \(job.index) handed to a transition not made by the pump")
    }
    for job in actions.failedJobs {
      if jobPhases[job.index] == .failed || jobPhases[job.index] == .done {
        errors.append("job \(job.index) failed twice")
      }
      jobPhases[job.index] = .failed
    }
  }

  mutating func resume(_ resumption: Resumption<FakeContinuation<Void>>) {
    let owner = resumption.continuation.owner
    resumed[owner].append(Outcome(resumption.result))
    guard case .waiting = dispatchers[owner] else {
      errors.append("dispatcher \(owner) resumed while \(dispatchers[owner])")
      return
    }
    if case .success = resumption.result {
      start(dispatcher: owner)
    } else {
      dispatchers[owner] = .done
    }
  }

  func enabledEvents() -> [ModelEvent<Self>] {
    var events: [ModelEvent<Self>] = []
    if !opened {
      events.append(
        ModelEvent(name: "open") { model in
          model.opened = true
          model.perform(model.mailbox.open())
        })
    }
    if closeEnabled, !closed {
      events.append(
        ModelEvent(name: "close") { model in
          model.closed = true
          if let actions = model.mailbox.close(.storeShutDown) { model.perform(actions) }
        })
    }
    for index in dispatchers.indices {
      switch dispatchers[index] {
      case .idle:
        events.append(
          ModelEvent(name: "d\(index) arrives") { model in
            model.dispatcherArrival[index] = model.arrivals
            model.arrivals += 1
            switch model.mailbox.arriveUpdater(holder: nil, runsStartup: false) {
            case .proceed: model.start(dispatcher: index)
            case .wait(let waiter, let position):
              model.dispatchers[index] = .waiting(waiter: waiter, position: position, suspended: false)
            case .fail(let error):
              model.resumed[index].append(.failed("\(error)"))
              model.dispatchers[index] = .done
            case .deadlock: model.errors.append("deadlock without holders")
            }
          })
      case .waiting(let waiter, let position, let suspended):
        if !suspended {
          events.append(
            ModelEvent(name: "d\(index) suspends") { model in
              model.dispatchers[index] = .waiting(waiter: waiter, position: position, suspended: true)
              if let resumption = model.mailbox.suspend(waiter, on: FakeContinuation(owner: index)) {
                model.resume(resumption)
              }
            })
        }
        if cancelTarget == index {
          events.append(
            ModelEvent(name: "cancel d\(index)") { model in
              model.cancelTarget = nil
              if let resumption = model.mailbox.cancelWaiter(waiter, at: position) { model.resume(resumption) }
            })
        }
      case .holding:
        events.append(
          ModelEvent(name: "d\(index) releases") { model in
            model.dispatchers[index] = .done
            model.perform(model.mailbox.releaseTurn(byPump: false))
          })
      case .done:
        break
      }
    }
    for job in jobs {
      switch jobPhases[job.index] {
      case .notSent:
        events.append(
          ModelEvent(name: "send j\(job.index)") { model in
            model.jobArrival[job.index] = model.arrivals
            model.arrivals += 1
            switch model.mailbox.arriveJob(job).decision {
            case .queued(let position, _): model.jobPhases[job.index] = .queued(position: position)
            case .startPump:
              if model.pumpBatch != nil { model.errors.append("a second pump started") }
              model.pumpBatch = [job.index]
              model.start(job: job.index)
            case .startSideEffect: model.start(job: job.index)
            case .fail: model.jobPhases[job.index] = .failed
            }
          })
      case .queued(let position):
        if jobCancelTarget == job.index {
          events.append(
            ModelEvent(name: "cancel j\(job.index)") { model in
              model.jobCancelTarget = nil
              if let withdrawn = model.mailbox.withdrawJob(at: position) {
                if withdrawn.index != job.index {
                  model.errors.append("withdrew j\(withdrawn.index) for j\(job.index)")
                }
                model.jobPhases[job.index] = .failed
              }
            })
        }
      case .running where !job.isUpdater:
        events.append(ModelEvent(name: "j\(job.index) finishes") { $0.jobPhases[job.index] = .done })
      case .running, .done, .failed:
        break
      }
    }
    if let batch = pumpBatch {
      events.append(
        ModelEvent(name: "pump runs \(batch)") { model in
          for job in batch { model.jobPhases[job] = .done }
          var actions = model.mailbox.releaseTurn(byPump: true)
          let next = actions.continuePump
          actions.continuePump = []
          model.pumpBatch = nil
          // As the pump does: perform the other actions, then run the next batch.
          model.perform(actions)
          if !next.isEmpty {
            if model.pumpBatch != nil { model.errors.append("a second pump started") }
            model.pumpBatch = next.map(\.index)
            for job in next { model.start(job: job.index) }
          }
        })
    }
    return events
  }

  func violations() -> [String] {
    var found = errors
    if holders > 1 { found.append("\(holders) holders of the turn") }
    if (holders == 1) != mailbox.turnHeld { found.append("turn held: \(mailbox.turnHeld), holders: \(holders)") }
    for index in resumed.indices where resumed[index].count > 1 {
      found.append("d\(index) resumed \(resumed[index].count) times")
    }
    if starts != starts.sorted() { found.append("started out of arrival order: \(starts)") }
    return found
  }

  func finalViolations() -> [String] {
    var found: [String] = []
    for index in dispatchers.indices where dispatchers[index] != .done {
      found.append("d\(index) never finished: \(dispatchers[index])")
    }
    for job in jobs where jobPhases[job.index] != .done && jobPhases[job.index] != .failed {
      found.append("j\(job.index) never finished: \(jobPhases[job.index])")
    }
    if !mailbox.waiters.isEmpty { found.append("\(mailbox.waiters.count) waiters left") }
    for offset in 0..<mailbox.entries.count {
      if case .withdrawn = mailbox.entries[offset] { continue }
      found.append("entry left: \(mailbox.entries[offset])")
    }
    return found
  }
}

@Suite("State machines: mailbox")
struct MailboxStateMachineTests {
  @Test func threeAwaitedUpdaters_oneCancelled_everyOrder() async {
    let summary = await exploreEveryOrder(MailboxModel(dispatchers: 3, cancel: 1, close: false))
    #expect(summary.orders > 1_000)
  }

  @Test func twoAwaitedUpdaters_oneCancelled_andShutdown_everyOrder() async {
    let summary = await exploreEveryOrder(MailboxModel(dispatchers: 2, cancel: 1, close: true))
    #expect(summary.orders > 500)
  }

  @Test func awaitedAndSentItems_withACancelledSend_everyOrder() async {
    let summary = await exploreEveryOrder(
      MailboxModel(dispatchers: 1, jobs: [true, false, true], cancelJob: 1, close: false))
    #expect(summary.orders > 500)
  }

  @Test func awaitedAndSentItems_andShutdown_everyOrder() async {
    let summary = await exploreEveryOrder(MailboxModel(dispatchers: 2, jobs: [true, false], close: true))
    #expect(summary.orders > 1_000)
  }

  /// Withdrawing by position takes the entry at that position only, and later entries keep theirs.
  @Test func withdraw_byPosition_isExact() async {
    var mailbox = MailboxModel.Box()
    var positions: [UInt64] = []
    for index in 0..<5 {
      guard case .queued(let position, _) = mailbox.arriveJob(FakeJob(index: index, isUpdater: true)).decision else {
        Issue.record("expected the job to queue while the store is starting")
        return
      }
      positions.append(position)
    }
    #expect(mailbox.withdrawJob(at: positions[2])?.index == 2)
    #expect(mailbox.withdrawJob(at: positions[2]) == nil)
    #expect(mailbox.isQueued(at: positions[3]))
    #expect(!mailbox.isQueued(at: positions[2]))
    let actions = mailbox.open()
    #expect(actions.startPump?.index == 0)
  }
}
