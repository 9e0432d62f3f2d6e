import Testing

@testable import Katana

/// The effect registry with runs under one id (one nested in another, a newer one with `cancelInFlight`),
/// a cancellation by id, throttled calls in `latest` mode with their window, a test waiting for the count to
/// reach zero, and a shutdown, in every order.
struct EffectRegistryModel: ExplorableModel {
  typealias Machine = EffectRegistryState<FakeContinuation<ThrottleTurn>, FakeContinuation<Void>>

  /// A run under the id: its token once reserved, and how it ended.
  struct RunActor: Equatable {
    /// The run it is nested in (an index into `runs`), which must be running when it starts.
    let parent: Int?
    let cancelInFlight: Bool
    var token: UInt64?
    var attached = false
    var finished = false
    var refused = false
    /// Whether it had been cancelled when it finished, as the machine reported.
    var reportedCancelled: Bool?
    /// Whether something that should cancel it happened while it ran.
    var shouldBeCancelled = false
  }

  enum ThrottleCall: Equatable {
    case notCalled
    case holding(waiter: UInt64, suspended: Bool)
    /// Running as this run token (registered), until it finishes.
    case running(UInt64)
    case done
  }

  var machine = Machine()
  let runID = EffectID("run")
  let throttleID = EffectID("throttle")
  var runs: [RunActor]
  var cancelPending: Bool
  var shutdownPending: Bool
  var throttleCalls: [ThrottleCall]
  var throttleTokens: [UInt64]
  /// The window task: its token while the window is open.
  var windowToken: UInt64?
  var throttleResumed: [[String]]
  /// How often each throttle call's hand-off to the window was ended by the machine's actions.
  var endedHandOffs: [Int] = []
  /// Whether each throttle call was ever held.
  var wasHeld: [Bool] = []
  var countWaiter: (id: UInt64, suspended: Bool)?
  var countWaitPending: Bool
  var countResumed = 0
  var errors: [String] = []

  init(runs: [(parent: Int?, cancelInFlight: Bool)], throttleCalls: Int, cancel: Bool, shutdown: Bool, countWait: Bool)
  {
    self.endedHandOffs = Array(repeating: 0, count: throttleCalls)
    self.wasHeld = Array(repeating: false, count: throttleCalls)
    self.runs = runs.map { RunActor(parent: $0.parent, cancelInFlight: $0.cancelInFlight) }
    cancelPending = cancel
    shutdownPending = shutdown
    self.throttleCalls = Array(repeating: .notCalled, count: throttleCalls)
    throttleTokens = []
    throttleResumed = Array(repeating: [], count: throttleCalls)
    countWaitPending = countWait
    for _ in 0..<throttleCalls { throttleTokens.append(machine.makeToken()) }
  }

  var runningRuns: [Int] {
    runs.indices.filter { runs[$0].token != nil && !runs[$0].finished }
  }

  mutating func perform(_ actions: Machine.Actions) {
    // Hand-offs end before anything resumes.
    for caller in actions.endedHandOffs {
      guard let call = (0..<throttleCalls.count).first(where: { Self.caller(of: $0) == caller }) else {
        errors.append("a hand-off of an unknown task ended")
        continue
      }
      if case .holding = throttleCalls[call] {
      } else {
        errors.append("throttle \(call)'s hand-off ended while \(throttleCalls[call])")
      }
      endedHandOffs[call] += 1
    }
    for resumption in actions.turnResumptions { resumeThrottle(resumption) }
    countResumed += actions.countResumptions.count
  }

  /// The task identity standing for throttle call `call` (only compared).
  static func caller(of call: Int) -> TaskIdentity {
    TaskIdentity(address: 0x1000 + UInt(call))
  }

  mutating func resumeThrottle(_ resumption: Resumption<FakeContinuation<ThrottleTurn>>) {
    let call = resumption.continuation.owner
    guard case .holding(_, true) = throttleCalls[call] else {
      errors.append("throttle \(call) resumed while \(throttleCalls[call])")
      return
    }
    switch resumption.result {
    case .success:
      throttleResumed[call].append("released")
      throttleCalls[call] = .running(throttleTokens[call])
    case .failure:
      throttleResumed[call].append("dropped")
      throttleCalls[call] = .done
    }
  }

  /// Marks the runs under the id that a cancellation reaching everything but `kept` cancels.
  mutating func markCancelled(except kept: Set<Int>) {
    for index in runningRuns where !kept.contains(index) {
      runs[index].shouldBeCancelled = true
    }
  }

  func ancestors(of index: Int) -> Set<Int> {
    var result: Set<Int> = []
    var current = runs[index].parent
    while let parent = current {
      result.insert(parent)
      current = runs[parent].parent
    }
    return result
  }

  func enabledEvents() -> [ModelEvent<Self>] {
    var events: [ModelEvent<Self>] = []
    for index in runs.indices {
      let run = runs[index]
      if run.token == nil, !run.refused {
        // A nested run starts while its parent runs.
        if let parent = run.parent, runs[parent].token == nil || runs[parent].finished { continue }
        events.append(
          ModelEvent(name: "run \(index) reserves") { model in
            let ancestors = model.ancestors(of: index)
            let tokens = Set(ancestors.compactMap { model.runs[$0].token })
            var actions = Machine.Actions()
            let reservation = model.machine.reserve(
              model.runID, cancelInFlight: run.cancelInFlight, ancestors: tokens, cancelledByOrigin: false,
              actions: &actions)
            if run.cancelInFlight { model.markCancelled(except: ancestors) }
            model.perform(actions)
            switch reservation {
            case .reserved(let token): model.runs[index].token = token
            case .cancelled, .storeShutDown: model.runs[index].refused = true
            }
          })
      } else if let token = run.token, !run.finished {
        if !run.attached {
          events.append(
            ModelEvent(name: "run \(index) attaches") { model in
              model.runs[index].attached = true
              if !model.machine.attach(token, cancel: {}), !model.runs[index].shouldBeCancelled {
                model.errors.append("run \(index) refused its task without a cancellation")
              }
            })
        } else if !runs.contains(where: { $0.parent == index && $0.token != nil && !$0.finished }) {
          // A run finishes after the runs nested in it.
          events.append(
            ModelEvent(name: "run \(index) finishes") { model in
              model.runs[index].finished = true
              var actions = Machine.Actions()
              model.runs[index].reportedCancelled = model.machine.finish(token, actions: &actions)
              model.perform(actions)
            })
        }
      }
    }
    if cancelPending {
      events.append(
        ModelEvent(name: "cancel by id") { model in
          model.cancelPending = false
          model.markCancelled(except: [])
          var actions = Machine.Actions()
          model.machine.cancelAll(model.runID, actions: &actions)
          model.perform(actions)
        })
    }
    if shutdownPending {
      events.append(
        ModelEvent(name: "shutdown") { model in
          model.shutdownPending = false
          model.markCancelled(except: [])
          var actions = Machine.Actions()
          model.machine.shutDown(actions: &actions)
          model.perform(actions)
        })
    }
    for call in throttleCalls.indices {
      switch throttleCalls[call] {
      case .notCalled:
        events.append(
          ModelEvent(name: "throttle \(call) called") { model in
            var actions = Machine.Actions()
            let decision = model.machine.throttle(
              model.throttleID, latest: true, token: model.throttleTokens[call], caller: Self.caller(of: call),
              actions: &actions)
            switch decision {
            case .runNow(let windowToken):
              model.throttleCalls[call] = .running(model.throttleTokens[call])
              model.windowToken = windowToken
            case .hold(let waiter, _):
              model.throttleCalls[call] = .holding(waiter: waiter, suspended: false)
              model.wasHeld[call] = true
            case .drop, .storeShutDown: model.throttleCalls[call] = .done
            }
            model.perform(actions)
          })
      case .holding(let waiter, let suspended):
        if !suspended {
          events.append(
            ModelEvent(name: "throttle \(call) suspends") { model in
              model.throttleCalls[call] = .holding(waiter: waiter, suspended: true)
              if let resumption = model.machine.suspendHeld(waiter, on: FakeContinuation(owner: call)) {
                model.resumeThrottle(resumption)
              }
            })
        }
      case .running(let token):
        events.append(
          ModelEvent(name: "throttle \(call) finishes") { model in
            model.throttleCalls[call] = .done
            var actions = Machine.Actions()
            _ = model.machine.finish(token, actions: &actions)
            model.perform(actions)
          })
      case .done:
        break
      }
    }
    if let window = windowToken {
      events.append(
        ModelEvent(name: "window elapses") { model in
          var actions = Machine.Actions()
          let step = model.machine.windowElapsed(model.throttleID, window, actions: &actions)
          model.perform(actions)
          if step == .closed {
            model.windowToken = nil
            _ = model.machine.finish(window, actions: &actions)
            model.perform(actions)
          }
        })
    }
    if countWaitPending {
      events.append(
        ModelEvent(name: "test waits for count 0") { model in
          model.countWaitPending = false
          if let waiter = model.machine.addCountWaiter(count: 0) {
            model.countWaiter = (waiter, false)
          } else {
            model.countResumed += 1
          }
        })
    }
    if let (waiter, suspended) = countWaiter, !suspended {
      events.append(
        ModelEvent(name: "count waiter suspends") { model in
          model.countWaiter = (waiter, true)
          if model.machine.suspendCountWaiter(waiter, on: FakeContinuation(owner: 0)) != nil {
            model.countResumed += 1
          }
        })
    }
    return events
  }

  func violations() -> [String] {
    var found = errors
    for call in throttleCalls.indices where throttleResumed[call].count > 1 {
      found.append("throttle \(call) resumed \(throttleResumed[call].count) times")
    }
    if countResumed > 1 { found.append("count waiter resumed \(countResumed) times") }
    for index in runs.indices {
      if let reported = runs[index].reportedCancelled, reported != runs[index].shouldBeCancelled {
        found.append("run \(index) reported cancelled: \(reported), expected \(runs[index].shouldBeCancelled)")
      }
    }
    return found
  }

  func finalViolations() -> [String] {
    var found: [String] = []
    // A held call's hand-off ends exactly once, whether it is released, dropped or cancelled; a call never
    // held has none.
    for call in throttleCalls.indices where endedHandOffs[call] != (wasHeld[call] ? 1 : 0) {
      found.append("throttle \(call)'s hand-off ended \(endedHandOffs[call]) times (held: \(wasHeld[call]))")
    }
    if machine.entryCount != 0 { found.append("\(machine.entryCount) entries left") }
    if !machine.windows.isEmpty { found.append("a window is left open") }
    if !machine.turnWaiters.isEmpty { found.append("throttle waiters left") }
    if countWaiter != nil, countResumed != 1 { found.append("the count waiter was not resumed") }
    return found
  }
}

@Suite("State machines: effect registry")
struct EffectRegistryStateMachineTests {
  /// A run and a run nested in it with `cancelInFlight`, which must not cancel its ancestor; a cancellation by
  /// id; a test waiting for the count to reach zero.
  @Test func nestedRunWithCancelInFlight_andCancelByID_everyOrder() async {
    let summary = await exploreEveryOrder(
      EffectRegistryModel(
        runs: [(nil, false), (0, true)], throttleCalls: 0, cancel: true, shutdown: false, countWait: true))
    #expect(summary.orders > 100)
  }

  /// A run and a newer one with `cancelInFlight`, which cancels it; a cancellation by id and a shutdown.
  @Test func replacingRun_cancelByID_andShutdown_everyOrder() async {
    let summary = await exploreEveryOrder(
      EffectRegistryModel(
        runs: [(nil, false), (nil, true)], throttleCalls: 0, cancel: true, shutdown: true, countWait: false))
    #expect(summary.orders > 100)
  }

  /// Two throttled calls in `latest` mode with the window's task, a shutdown, and a test waiting for the count
  /// to reach zero.
  @Test func throttledCalls_window_andShutdown_everyOrder() async {
    let summary = await exploreEveryOrder(
      EffectRegistryModel(runs: [], throttleCalls: 2, cancel: false, shutdown: true, countWait: true))
    #expect(summary.orders > 100)
  }

  /// Three throttled calls in `latest` mode: the second is replaced by the third.
  @Test func threeThrottledCalls_everyOrder() async {
    let summary = await exploreEveryOrder(
      EffectRegistryModel(runs: [], throttleCalls: 3, cancel: false, shutdown: false, countWait: false))
    #expect(summary.orders > 100)
  }

  /// A run and a throttled call under other ids, and a shutdown.
  @Test func runAndThrottledCall_withShutdown_everyOrder() async {
    let summary = await exploreEveryOrder(
      EffectRegistryModel(runs: [(nil, false)], throttleCalls: 1, cancel: true, shutdown: true, countWait: false))
    #expect(summary.orders > 100)
  }
}
