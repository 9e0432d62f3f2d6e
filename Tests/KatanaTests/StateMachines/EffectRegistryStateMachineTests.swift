import Testing

@testable import Katana

/// The effect registry with runs under one id (one nested in another, a newer one with `cancelInFlight`),
/// a cancellation by id, throttled calls in `latest` mode with their window, a test waiting for the count to
/// reach zero, and a shutdown, in every order.
///
/// Program order: a run or a throttled call may belong to a sent item, which enters the mailbox at some point
/// before the call; a cancellation of an id marks the items that entered before it, as the registry does
/// (``SentItemOrigin``), and every run-starting transition gets that item's marks (``EffectProgramOrder``).
/// A run whose item was marked before it started must never be registered (nor released from a throttle
/// window), and a run is refused for program order only if its item was marked. Debounce, timers and
/// `forEach` start their runs through `reserve` (debounce with `cancelInFlight`), as the runs here do.
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

  /// A sent item: whether it has entered the mailbox, and the ids whose cancellation reached it since.
  struct Item: Equatable {
    var arrived = false
    var marks: Set<EffectID> = []
  }

  var machine = Machine()
  var items: [Item] = []
  /// The item each top-level run belongs to (nested runs belong to their root's).
  var runItems: [Int?] = []
  /// The item each throttled call belongs to.
  var throttleItems: [Int?] = []
  var cancelThrottlePending = false
  /// Whether something that should cancel each throttled call's run happened while it ran.
  var throttleShouldBeCancelled: [Bool] = []
  /// Whether something that should drop each held throttled call happened while it was held.
  var throttleMustBeDropped: [Bool] = []
  let runID = EffectID("run")
  let throttleID = EffectID("throttle")
  var runs: [RunActor]
  var cancelPending: Bool
  var shutdownPending: Bool
  var throttleCalls: [ThrottleCall]
  var throttleTokens: [UInt64]
  /// The window tasks that have not finished, by token: a window closed by a cancellation keeps its task
  /// until it wakes, while a later call may open a new one.
  var windowTokens: [UInt64] = []
  /// Whether each throttled call was released by its window (its run registered), before it resumes.
  var released: [Bool] = []
  var throttleResumed: [[String]]
  /// How often each throttle call's hand-off to the window was ended by the machine's actions.
  var endedHandOffs: [Int] = []
  /// Whether each throttle call was ever held.
  var wasHeld: [Bool] = []
  var countWaiter: (id: UInt64, suspended: Bool)?
  var countWaitPending: Bool
  var countResumed = 0
  var errors: [String] = []

  /// - Parameters:
  ///   - sentRuns: The top-level runs that belong to a sent item (each its own).
  ///   - sentThrottleCalls: The throttled calls that belong to a sent item (each its own).
  ///   - cancelThrottle: Whether a cancellation of the throttled calls' id happens.
  init(
    runs: [(parent: Int?, cancelInFlight: Bool)], throttleCalls: Int, cancel: Bool, shutdown: Bool, countWait: Bool,
    sentRuns: Set<Int> = [], sentThrottleCalls: Set<Int> = [], cancelThrottle: Bool = false
  ) {
    runItems = runs.indices.map { sentRuns.contains($0) ? $0 : nil }
    throttleItems = (0..<throttleCalls).map { sentThrottleCalls.contains($0) ? runs.count + $0 : nil }
    items = Array(repeating: Item(), count: runs.count + throttleCalls)
    cancelThrottlePending = cancelThrottle
    throttleShouldBeCancelled = Array(repeating: false, count: throttleCalls)
    throttleMustBeDropped = Array(repeating: false, count: throttleCalls)
    released = Array(repeating: false, count: throttleCalls)
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

  /// The item run `index` belongs to: its root's (a nested run runs in its parent's task).
  func item(ofRun index: Int) -> Int? {
    var root = index
    while let parent = runs[root].parent { root = parent }
    return runItems[root]
  }

  func isMarked(_ item: Int?, _ id: EffectID) -> Bool {
    item.map { items[$0].marks.contains(id) } ?? false
  }

  /// What the registry reads from the item under its lock.
  func order(of item: Int?) -> EffectProgramOrder {
    item.map { EffectProgramOrder(cancelledIDs: items[$0].marks) } ?? .unsent
  }

  /// A cancellation of `id`, as the registry does it: marks the items that entered the mailbox before it, then
  /// cancels everything under `id`.
  mutating func cancel(_ id: EffectID) {
    for item in items.indices where items[item].arrived {
      items[item].marks.insert(id)
    }
    var actions = Machine.Actions()
    machine.cancelAll(id, actions: &actions)
    perform(actions)
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
      if throttleMustBeDropped[call] { errors.append("throttle \(call) released after a cancellation dropped it") }
      throttleResumed[call].append("released")
      throttleCalls[call] = .running(throttleTokens[call])
    case .failure:
      throttleResumed[call].append("dropped")
      throttleCalls[call] = .done
    }
  }

  /// Marks the throttled calls that a cancellation of their id cancels (running) or drops (held).
  mutating func markThrottleCallsCancelled() {
    for call in throttleCalls.indices {
      switch throttleCalls[call] {
      case .running: throttleShouldBeCancelled[call] = true
      case .holding:
        // Released by its window, a call's run is registered already, and cancelled with the others.
        if released[call] { throttleShouldBeCancelled[call] = true } else { throttleMustBeDropped[call] = true }
      case .notCalled, .done: break
      }
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
    for item in items.indices where !items[item].arrived {
      if runItems.contains(item) || throttleItems.contains(item) {
        events.append(ModelEvent(name: "item \(item) enters the mailbox") { model in model.items[item].arrived = true })
      }
    }
    for index in runs.indices {
      let run = runs[index]
      if run.token == nil, !run.refused {
        // A nested run starts while its parent runs; a sent item's run after the item entered the mailbox.
        if let parent = run.parent, runs[parent].token == nil || runs[parent].finished { continue }
        if let item = runItems[index], !items[item].arrived { continue }
        events.append(
          ModelEvent(name: "run \(index) reserves") { model in
            let ancestors = model.ancestors(of: index)
            let tokens = Set(ancestors.compactMap { model.runs[$0].token })
            let item = model.item(ofRun: index)
            let marked = model.isMarked(item, model.runID)
            var actions = Machine.Actions()
            let reservation = model.machine.reserve(
              model.runID, cancelInFlight: run.cancelInFlight, ancestors: tokens, order: model.order(of: item),
              actions: &actions)
            if case .reserved = reservation, run.cancelInFlight { model.markCancelled(except: ancestors) }
            model.perform(actions)
            switch reservation {
            case .reserved(let token):
              if marked {
                model.errors.append("run \(index) registered although a cancellation reached its item first")
              }
              model.runs[index].token = token
            case .cancelled:
              if !marked { model.errors.append("run \(index) refused for program order without a cancellation") }
              model.runs[index].refused = true
            case .storeShutDown:
              model.runs[index].refused = true
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
          model.cancel(model.runID)
        })
    }
    if cancelThrottlePending {
      events.append(
        ModelEvent(name: "cancel the throttle id") { model in
          model.cancelThrottlePending = false
          model.markThrottleCallsCancelled()
          model.cancel(model.throttleID)
        })
    }
    if shutdownPending {
      events.append(
        ModelEvent(name: "shutdown") { model in
          model.shutdownPending = false
          model.markCancelled(except: [])
          model.markThrottleCallsCancelled()
          var actions = Machine.Actions()
          model.machine.shutDown(actions: &actions)
          model.perform(actions)
        })
    }
    for call in throttleCalls.indices {
      switch throttleCalls[call] {
      case .notCalled:
        if let item = throttleItems[call], !items[item].arrived { continue }
        events.append(
          ModelEvent(name: "throttle \(call) called") { model in
            let item = model.throttleItems[call]
            let marked = model.isMarked(item, model.throttleID)
            var actions = Machine.Actions()
            let decision = model.machine.throttle(
              model.throttleID, latest: true, token: model.throttleTokens[call], order: model.order(of: item),
              caller: Self.caller(of: call), actions: &actions)
            switch decision {
            case .runNow(let windowToken):
              model.throttleCalls[call] = .running(model.throttleTokens[call])
              model.windowTokens.append(windowToken)
            case .hold(let waiter, _):
              model.throttleCalls[call] = .holding(waiter: waiter, suspended: false)
              model.wasHeld[call] = true
            case .cancelled:
              if !marked { model.errors.append("throttle \(call) refused for program order without a cancellation") }
              model.throttleCalls[call] = .done
            case .drop, .storeShutDown: model.throttleCalls[call] = .done
            }
            switch decision {
            case .runNow, .hold:
              if marked {
                model.errors.append("throttle \(call) let in although a cancellation reached its item first")
              }
            case .cancelled, .drop, .storeShutDown: break
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
            let cancelled = model.machine.finish(token, actions: &actions)
            if cancelled != model.throttleShouldBeCancelled[call] {
              model.errors.append(
                "throttle \(call) reported cancelled: \(cancelled), expected \(model.throttleShouldBeCancelled[call])")
            }
            model.perform(actions)
          })
      case .done:
        break
      }
    }
    for (index, window) in windowTokens.enumerated() {
      events.append(
        ModelEvent(name: index == 0 ? "window elapses" : "window \(index) elapses") { model in
          let held = model.throttleCalls.indices.first { call in
            guard case .holding(let waiter, _) = model.throttleCalls[call] else { return false }
            return model.machine.isHeld(model.throttleID, waiter: waiter)
          }
          var actions = Machine.Actions()
          let step = model.machine.windowElapsed(model.throttleID, window, actions: &actions)
          model.perform(actions)
          if step == .keepOpen, let call = held {
            model.released[call] = true
            if model.isMarked(model.throttleItems[call], model.throttleID) {
              model.errors.append("throttle \(call) released although a cancellation reached its item first")
            }
          }
          if step == .closed {
            model.windowTokens.removeAll { $0 == window }
            var finishActions = Machine.Actions()
            _ = model.machine.finish(window, actions: &finishActions)
            model.perform(finishActions)
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

  // MARK: - Program order

  /// A sent item's run, and a run nested in it with `cancelInFlight` (as debounce starts its runs), with a
  /// cancellation by id before, between or after them: once the cancellation has reached the item, neither
  /// starts, nor cancels anything.
  @Test func sentItemsRuns_cancelByID_programOrder_everyOrder() async {
    let summary = await exploreEveryOrder(
      EffectRegistryModel(
        runs: [(nil, false), (0, true)], throttleCalls: 0, cancel: true, shutdown: false, countWait: true,
        sentRuns: [0]))
    #expect(summary.orders > 100)
  }

  /// An unsent run and a sent item's run with `cancelInFlight`, a cancellation by id and a shutdown.
  @Test func sentAndUnsentRuns_cancelByID_andShutdown_programOrder_everyOrder() async {
    let summary = await exploreEveryOrder(
      EffectRegistryModel(
        runs: [(nil, false), (nil, true)], throttleCalls: 0, cancel: true, shutdown: true, countWait: false,
        sentRuns: [1]))
    #expect(summary.orders > 100)
  }

  /// Two sent items' throttled calls in `latest` mode (one may be held, and released when the window ends), a
  /// cancellation of their id, and a test waiting for the count to reach zero: a call whose item the
  /// cancellation reached is never let in, held or released.
  @Test func sentThrottledCalls_cancelByID_programOrder_everyOrder() async {
    let summary = await exploreEveryOrder(
      EffectRegistryModel(
        runs: [], throttleCalls: 2, cancel: false, shutdown: false, countWait: true, sentThrottleCalls: [0, 1],
        cancelThrottle: true))
    #expect(summary.orders > 100)
  }

  /// A sent item's throttled call and an unsent one, a cancellation of their id and a shutdown.
  @Test func sentAndUnsentThrottledCalls_cancelByID_andShutdown_programOrder_everyOrder() async {
    let summary = await exploreEveryOrder(
      EffectRegistryModel(
        runs: [], throttleCalls: 2, cancel: false, shutdown: true, countWait: false, sentThrottleCalls: [1],
        cancelThrottle: true))
    #expect(summary.orders > 100)
  }

  /// A sent run and a sent throttled call, each id cancelled once.
  @Test func sentRunAndThrottledCall_bothIDsCancelled_programOrder_everyOrder() async {
    let summary = await exploreEveryOrder(
      EffectRegistryModel(
        runs: [(nil, false)], throttleCalls: 1, cancel: true, shutdown: false, countWait: false, sentRuns: [0],
        sentThrottleCalls: [0], cancelThrottle: true))
    #expect(summary.orders > 100)
  }

  /// A run and a throttled call under other ids, and a shutdown.
  @Test func runAndThrottledCall_withShutdown_everyOrder() async {
    let summary = await exploreEveryOrder(
      EffectRegistryModel(runs: [(nil, false)], throttleCalls: 1, cancel: true, shutdown: true, countWait: false))
    #expect(summary.orders > 100)
  }
}
