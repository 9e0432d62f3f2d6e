import Testing

@testable import Katana

/// The lifecycle with start-up, two store-owned tasks (reserved, started and attached in either order,
/// finished), a cancellation of one of them, a task waiting for readiness, one waiting for idleness, one
/// waiting for the store's tasks to end (the way `shutdown()` does), and a shutdown, in every order.
struct LifecycleModel: ExplorableModel {
  typealias Machine = Lifecycle<FakeContinuation<Void>, Int>

  enum TaskPhase: Equatable {
    case notReserved
    case reserved(attached: Bool, started: Bool)
    case finished
    case refused
  }

  enum WaiterPhase: Equatable {
    case notWaiting
    case waiting(UInt64, suspended: Bool)
    case done
  }

  /// Which waiting actor a continuation belongs to.
  enum Actor: Int, CaseIterable {
    case readiness, idle, drain
  }

  var machine = Machine(tracksActivity: true)
  var startupOutcome: Bool?  // true: finish, false: fail; nil once done
  var tasks: [TaskPhase]
  /// Tasks cancelled through an action or an attach, with how many times.
  var cancelledTasks: [Int: Int] = [:]
  var cancelRequested: Set<Int> = []
  var cancelTaskPending: Bool
  var shutdownPending: Bool
  var shutDown = false
  var waiters: [WaiterPhase]
  var resumed: [[Outcome]] = Array(repeating: [], count: Actor.allCases.count)
  /// Waiting actors whose task has been cancelled.
  var cancelledWaiters: Set<Int> = []
  /// Work outside the owned tasks (an awaited dispatch), begun and ended once (2: none).
  var workPhase: Int
  /// The identity of the task that runs owned task 1 (the test's own task, alive for the whole exploration).
  let identity: TaskIdentity?
  var errors: [String] = []

  /// - Parameters:
  ///   - startup: Whether start-up finishes (true) or fails (false); nil: it already finished.
  ///   - tasks: How many store-owned tasks run.
  ///   - cancelTask: Whether task 0 is cancelled at some point.
  ///   - waiters: Which actors wait (the others do not take part).
  ///   - work: Whether an awaited dispatch counts as activity meanwhile.
  init(
    startup: Bool?, tasks: Int, cancelTask: Bool, waiters: Set<Actor>, work: Bool, shutdown: Bool,
    identity: TaskIdentity?
  ) {
    startupOutcome = startup
    self.tasks = Array(repeating: .notReserved, count: tasks)
    cancelTaskPending = cancelTask
    self.waiters = Actor.allCases.map { waiters.contains($0) ? .notWaiting : .done }
    workPhase = work ? 0 : 2
    shutdownPending = shutdown
    self.identity = identity
    if startup == nil { _ = machine.finishStartup() }
  }

  mutating func perform(_ actions: Machine.Actions) {
    for resumption in actions.resumptions {
      let actor = resumption.continuation.owner
      resumed[actor].append(Outcome(resumption.result))
      guard case .waiting(_, true) = waiters[actor] else {
        errors.append("\(Actor(rawValue: actor)!) resumed while \(waiters[actor])")
        continue
      }
      waiters[actor] = .done
    }
    for task in actions.cancellations { cancelledTasks[task, default: 0] += 1 }
  }

  mutating func wait(_ actor: Actor, _ admission: Admission<Void>) {
    switch admission {
    case .proceed: waiters[actor.rawValue] = .done
    case .fail(let error):
      resumed[actor.rawValue].append(.failed("\(error)"))
      waiters[actor.rawValue] = .done
    case .wait(let id): waiters[actor.rawValue] = .waiting(id, suspended: false)
    }
  }

  mutating func suspend(_ actor: Actor, _ id: UInt64) {
    waiters[actor.rawValue] = .waiting(id, suspended: true)
    let continuation = FakeContinuation<Void>(owner: actor.rawValue)
    let resumption: Resumption<FakeContinuation<Void>>? =
      switch actor {
      case .readiness: machine.suspendReadinessWaiter(id, on: continuation)
      case .idle: machine.suspendIdleWaiter(id, on: continuation)
      case .drain: machine.suspendDrainWaiter(id, on: continuation)
      }
    var actions = Machine.Actions()
    if let resumption { actions.resumptions = [resumption] }
    perform(actions)
  }

  func enabledEvents() -> [ModelEvent<Self>] {
    var events: [ModelEvent<Self>] = []
    if let succeeds = startupOutcome {
      events.append(
        ModelEvent(name: succeeds ? "start-up finishes" : "start-up fails") { model in
          model.startupOutcome = nil
          let actions = succeeds ? model.machine.finishStartup() : model.machine.failStartup(TestError(code: 1))
          if let actions { model.perform(actions) }
        })
    }
    if shutdownPending {
      events.append(
        ModelEvent(name: "shutdown") { model in
          model.shutdownPending = false
          model.shutDown = true
          guard let shutdown = model.machine.shutdown(caller: nil) else { return }
          model.perform(shutdown.actions)
          for task in model.tasks.indices {
            if case .reserved = model.tasks[task] { model.cancelRequested.insert(task) }
          }
        })
    }
    for task in tasks.indices {
      switch tasks[task] {
      case .notReserved:
        events.append(
          ModelEvent(name: "t\(task) reserved") { model in
            model.tasks[task] =
              model.machine.reserveTask(UInt64(task)) ? .reserved(attached: false, started: false) : .refused
          })
      case .reserved(let attached, let started):
        if !attached {
          events.append(
            ModelEvent(name: "t\(task) attached") { model in
              model.tasks[task] = .reserved(attached: true, started: started)
              if let cancel = model.machine.attachTask(UInt64(task), task) {
                model.cancelledTasks[cancel, default: 0] += 1
              }
            })
        }
        if !started {
          events.append(
            ModelEvent(name: "t\(task) starts") { model in
              model.tasks[task] = .reserved(attached: attached, started: true)
              model.machine.taskStarted(UInt64(task), identity: task == 1 ? model.identity : nil)
            })
        }
        if started, attached {
          events.append(
            ModelEvent(name: "t\(task) finishes") { model in
              model.tasks[task] = .finished
              model.perform(model.machine.taskFinished(UInt64(task)))
            })
        }
        if task == 0, cancelTaskPending {
          events.append(
            ModelEvent(name: "cancel t0") { model in
              model.cancelTaskPending = false
              model.cancelRequested.insert(0)
              if let cancel = model.machine.cancelTask(0) { model.cancelledTasks[cancel, default: 0] += 1 }
            })
        }
      case .finished, .refused:
        break
      }
    }
    for actor in Actor.allCases {
      switch waiters[actor.rawValue] {
      case .notWaiting:
        events.append(
          ModelEvent(name: "\(actor) waits") { model in
            switch actor {
            case .readiness: model.wait(actor, model.machine.waitUntilReady())
            case .idle: model.wait(actor, model.machine.waitUntilIdle())
            case .drain: model.wait(actor, model.machine.waitUntilDrained(caller: model.identity))
            }
          })
      case .waiting(let id, let suspended):
        if !suspended {
          events.append(ModelEvent(name: "\(actor) suspends") { $0.suspend(actor, id) })
        }
        if actor == .readiness || actor == .idle, !cancelledWaiters.contains(actor.rawValue) {
          events.append(
            ModelEvent(name: "\(actor) cancelled") { model in
              model.cancelledWaiters.insert(actor.rawValue)
              // Decided before it suspended, the waiter is resumed by its suspension instead.
              let resumption =
                actor == .readiness ? model.machine.cancelReadinessWaiter(id) : model.machine.cancelIdleWaiter(id)
              var actions = Machine.Actions()
              if let resumption { actions.resumptions = [resumption] }
              model.perform(actions)
            })
        }
      case .done:
        break
      }
    }
    if workPhase < 2 {
      events.append(
        ModelEvent(name: workPhase == 0 ? "work begins" : "work ends") { model in
          if model.workPhase == 0 {
            model.machine.beginActivity(.dispatch(99), carrier: model.identity)
          } else {
            model.perform(model.machine.endActivity(.dispatch(99)))
          }
          model.workPhase += 1
        })
    }
    return events
  }

  func violations() -> [String] {
    var found = errors
    for actor in Actor.allCases where resumed[actor.rawValue].count > 1 {
      found.append("\(actor) resumed \(resumed[actor.rawValue].count) times")
    }
    if machine.activeWork < 0 { found.append("activity below zero") }
    return found
  }

  func finalViolations() -> [String] {
    var found: [String] = []
    for actor in Actor.allCases {
      switch waiters[actor.rawValue] {
      case .done, .notWaiting: break
      case .waiting(_, let suspended):
        // A cancelled waiter that never suspended was decided: its suspension would resume it at once.
        found.append("\(actor) still waits (suspended: \(suspended))")
      }
    }
    for task in tasks.indices {
      if case .reserved = tasks[task] { found.append("t\(task) never finished") }
      if cancelRequested.contains(task), tasks[task] == .finished, cancelledTasks[task] == nil {
        found.append("t\(task): cancellation requested but the task was never cancelled")
      }
    }
    if machine.ownedTaskCount != 0 { found.append("\(machine.ownedTaskCount) owned tasks left") }
    if machine.activeWork != 0 { found.append("activity \(machine.activeWork) at rest") }
    if !machine.readinessWaiters.isEmpty || !machine.idleWaiters.isEmpty || !machine.drainWaiters.isEmpty {
      found.append("waiters left in the machine")
    }
    if machine.startupTask != nil { found.append("start-up task identity kept at rest") }
    return found
  }
}

@Suite("State machines: lifecycle")
struct LifecycleStateMachineTests {
  /// Start-up finishing or failing, a task waiting for readiness (and cancelled), a store-owned task, and a
  /// shutdown.
  @Test(arguments: [true, false])
  func startup_readiness_task_andShutdown_everyOrder(startupSucceeds: Bool) async {
    let summary = await exploreEveryOrder(
      LifecycleModel(
        startup: startupSucceeds, tasks: 1, cancelTask: false, waiters: [.readiness], work: false, shutdown: true,
        identity: TaskIdentity.current))
    #expect(summary.orders > 500)
  }

  /// A task cancelled at any point of its start (reserved, attached, running), a shutdown, and a waiter for
  /// the end of the store's tasks.
  @Test func cancelledTask_shutdown_andDrain_everyOrder() async {
    let summary = await exploreEveryOrder(
      LifecycleModel(
        startup: nil, tasks: 1, cancelTask: true, waiters: [.drain], work: false, shutdown: true,
        identity: TaskIdentity.current))
    #expect(summary.orders > 100)
  }

  /// Two tasks, one of them the caller waiting for the others to end (as `shutdown()` from inside a store
  /// task does), a shutdown, and a waiter for the end of the store's tasks.
  @Test func twoTasks_shutdown_andDrainExceptTheCaller_everyOrder() async {
    let summary = await exploreEveryOrder(
      LifecycleModel(
        startup: nil, tasks: 2, cancelTask: false, waiters: [.drain], work: false, shutdown: true,
        identity: TaskIdentity.current))
    #expect(summary.orders > 1_000)
  }

  /// A store-owned task and an awaited dispatch counting as activity, and a task waiting for idleness (and
  /// cancelled).
  @Test func activity_ownedTask_andIdleWaiter_everyOrder() async {
    let summary = await exploreEveryOrder(
      LifecycleModel(
        startup: nil, tasks: 1, cancelTask: true, waiters: [.idle], work: true, shutdown: false,
        identity: TaskIdentity.current))
    #expect(summary.orders > 1_000)
  }
}
