import Foundation
import KatanaTestSupport
import Testing

@testable import Katana

/// Records what observers see as lines: "will Increment", "did Increment", "did Fail failed 7".
private func recordingObserver(into recorder: Recorder<String>) -> DispatchObserver {
  DispatchObserver(
    willHandle: { item in recorder.append("will \(shortName(item))") },
    didHandle: { item, outcome in
      switch outcome {
      case .completed: recorder.append("did \(shortName(item))")
      case .failed(let error as TestError): recorder.append("did \(shortName(item)) failed \(error.code)")
      case .failed(let error): recorder.append("did \(shortName(item)) failed \(type(of: error))")
      }
    })
}

private func shortName(_ item: any Dispatchable) -> String {
  String(describing: type(of: item))
}

private func makeObservedStore(
  _ observers: [DispatchObserver], interceptors: [StoreInterceptor] = [],
  startup: Gate? = nil
) -> TestStore {
  TestStore(
    interceptors: interceptors,
    stateInitializer: {
      await startup?.wait()
      return CounterState()
    },
    dependenciesInitializer: { dispatch, getState in TestDependencies(dispatch: dispatch, getState: getState) },
    configuration: StoreConfiguration(dispatchObservers: observers))
}

/// A side effect that dispatches one updater and then, if asked, fails.
private struct AddThenMaybeFail: SideEffect {
  let value: Int
  let fails: Bool
  func sideEffect(_ context: SideEffectContext<CounterState, TestDependencies>) async throws {
    try await context.dispatch(AppendItem(value: value))
    if fails { throw TestError(code: value) }
  }
}

/// A feature's side effect that runs a closure.
private struct FeatCartScript: SideEffect {
  let body: @Sendable (SideEffectContext<FeatCartState, FeatCartDependencies>) async throws -> Void
  func sideEffect(_ context: SideEffectContext<FeatCartState, FeatCartDependencies>) async throws {
    try await body(context)
  }
}

/// A state updater that sends another item to its own store, which the store refuses (it runs under its lock).
private struct SendFromInside: StateUpdater {
  let store: TestStore
  let handle: LockedValue<DispatchHandle<Void>?>
  func updateState(_ state: inout CounterState) {
    handle.withLock { $0 = store.send(Increment()) }
  }
}

@Suite("Dispatch observers: one call before and one after every item", .timeLimit(.failsafeMinutes(3)))
struct DispatchObserverTests {
  @Test func awaitedDispatches_areObservedBeforeAndAfter_withTheirOutcome_inArrayOrder() async throws {
    let first = Recorder<String>()
    let second = Recorder<String>()
    let store = makeObservedStore([recordingObserver(into: first), recordingObserver(into: second)])
    try await store.waitUntilReady()
    try await store.dispatch(Increment())
    try await store.dispatch(IncrementTwice())
    #expect(try await store.dispatch(AddAndRead(by: 1)) == 4)
    await #expect(throws: TestError(code: 7)) { try await store.dispatch(Fail(code: 7)) }
    _ = try await store.anyDispatch(Log(tag: "erased"))
    let expected = [
      "will Increment", "did Increment",
      // A side effect's own dispatches are items of their own, observed inside it.
      "will IncrementTwice", "will Increment", "did Increment", "will Increment", "did Increment",
      "did IncrementTwice",
      "will AddAndRead", "will Increment", "did Increment", "did AddAndRead",
      "will Fail", "did Fail failed 7",
      "will Log", "did Log",
    ]
    #expect(first.values == expected)
    #expect(second.values == expected)
    #expect(store.state.counter == 4)
  }

  @Test func anUpdaterSentToAnIdleStore_isObservedBeforeSendReturns() async throws {
    let seen = Recorder<String>()
    let store = makeObservedStore([recordingObserver(into: seen)])
    try await store.waitUntilReady()
    store.send(Increment())
    #expect(seen.values == ["will Increment", "did Increment"])
  }

  @Test func sentItems_areObservedFromTheSend_untilTheirHandleSettles() async throws {
    let seen = Recorder<String>()
    let startup = Gate()
    let store = makeObservedStore([recordingObserver(into: seen)], startup: startup)
    // Not ready yet: both items wait in the mailbox.
    let updater = store.send(Increment())
    let effect = store.send(AddThenMaybeFail(value: 5, fails: true))
    #expect(seen.values == ["will Increment", "will AddThenMaybeFail"])
    startup.open()
    try await updater.value
    await #expect(throws: TestError(code: 5)) { try await effect.value }
    await seen.wait(forCount: 6)
    let values = seen.values
    #expect(values.count == 6)
    #expect(
      Set(values[2...]) == ["did Increment", "will AppendItem", "did AppendItem", "did AddThenMaybeFail failed 5"])
    #expect(values.firstIndex(of: "did AppendItem")! < values.firstIndex(of: "did AddThenMaybeFail failed 5")!)
  }

  @Test func aSentItemWithdrawnBeforeItsTurn_endsWithCancellation() async throws {
    let seen = Recorder<String>()
    let startup = Gate()
    let store = makeObservedStore([recordingObserver(into: seen)], startup: startup)
    let handle = store.send(Increment())
    handle.cancel()
    await #expect(throws: CancellationError.self) { try await handle.value }
    await seen.wait(forCount: 2)
    #expect(seen.values == ["will Increment", "did Increment failed CancellationError"])
    startup.open()
    try await store.waitUntilReady()
    #expect(store.state.counter == 0)
  }

  @Test func aSendFromInsideAStateUpdater_isRefused_andNotObserved() async throws {
    let seen = Recorder<String>()
    let store = makeObservedStore([recordingObserver(into: seen)])
    try await store.waitUntilReady()
    let inner = LockedValue<DispatchHandle<Void>?>(nil)
    try await store.dispatch(SendFromInside(store: store, handle: inner))
    let handle = try #require(inner.current)
    await #expect(throws: StoreError.self) { try await handle.value }
    #expect(seen.values == ["will SendFromInside", "did SendFromInside"])
    #expect(store.state.counter == 0)
  }

  @Test func anItemAnInterceptorSubstitutes_isObservedAgain_asTheNewItem() async throws {
    let seen = Recorder<String>()
    // Hands a side effect on in place of each Log: it is dispatched as a new item once the chain returns.
    let swap: StoreInterceptor = { _ in
      { next in
        { item in try await next(item is Log ? IncrementTwice() : item) }
      }
    }
    let store = makeObservedStore([recordingObserver(into: seen)], interceptors: [swap])
    try await store.waitUntilReady()
    try await store.dispatch(Log(tag: "x"))
    #expect(
      seen.values == [
        "will Log", "will IncrementTwice", "will Increment", "did Increment", "will Increment", "did Increment",
        "did IncrementTwice", "did Log",
      ])
    #expect(store.state.counter == 2)
    #expect(store.state.log.isEmpty)
  }

  @Test func anItemAnInterceptorRejects_isObservedAsFailed() async throws {
    let seen = Recorder<String>()
    let reject: StoreInterceptor = { _ in { _ in { _ in throw TestError(code: 3) } } }
    let store = makeObservedStore([recordingObserver(into: seen)], interceptors: [reject])
    try await store.waitUntilReady()
    await #expect(throws: TestError(code: 3)) { try await store.dispatch(Increment()) }
    #expect(seen.values == ["will Increment", "did Increment failed 3"])
  }

  @Test func featureItems_areObservedOnce_asTheFeatureDispatchedThem() async throws {
    let seen = Recorder<String>()
    let store = Store<FeatAppState, FeatAppDependencies>(
      stateInitializer: { FeatAppState() }, dependenciesInitializer: { _, _ in FeatAppDependencies() },
      configuration: StoreConfiguration(dispatchObservers: [recordingObserver(into: seen)]))
    try await store.waitUntilReady()
    let cart = store.scope(\.cart, dependencies: \.cart)
    try await cart.dispatch(FeatAddToCart(value: 1))
    try await cart.send(FeatAddToCart(value: 2)).value
    _ = try await cart.anyDispatch(FeatCartLog(value: 3))
    _ = try await cart.anySend(FeatCartLog(value: 4)).value
    try await cart.send(FeatCartScript { context in try await context.dispatch(FeatAddToCart(value: 5)) }).value
    await seen.wait(forCount: 12)
    #expect(
      seen.values == [
        "will FeatAddToCart", "did FeatAddToCart", "will FeatAddToCart", "did FeatAddToCart",
        "will FeatCartLog", "did FeatCartLog", "will FeatCartLog", "did FeatCartLog",
        "will FeatCartScript", "will FeatAddToCart", "did FeatAddToCart", "did FeatCartScript",
      ])
    #expect(store.state.cart == FeatCartState(items: [1, 2, 5], log: [3, 4]))
  }

  @Test func measuringObservers_reportEachItem_withItsStartDurationAndOutcome() async throws {
    let events = Recorder<DispatchInstrumentation.Event>()
    let store = makeObservedStore([DispatchInstrumentation.observer { events.append($0) }])
    try await store.waitUntilReady()
    let before = ContinuousClock.now
    try await store.dispatch(Increment())
    await #expect(throws: TestError(code: 9)) { try await store.dispatch(Fail(code: 9)) }
    let after = ContinuousClock.now
    let reported = events.values
    #expect(reported.map(\.typeName) == [String(reflecting: Increment.self), String(reflecting: Fail.self)])
    #expect(reported.map(\.succeeded) == [true, false])
    for event in reported {
      #expect(event.start >= before)
      #expect(event.start + event.duration <= after)
    }
  }

  @Test func loggerObserver_logsSuccessfulItems_exceptTheBlackListed() async throws {
    let logged = Recorder<String>()
    let store = makeObservedStore([
      DispatchableLogger.observer(blackList: [Log.self]) { logged.append(DispatchableLogger.message(for: $0)) }
    ])
    try await store.waitUntilReady()
    try await store.dispatch(Increment())
    try await store.dispatch(Log(tag: "hidden"))
    await #expect(throws: TestError(code: 1)) { try await store.dispatch(Fail(code: 1)) }
    #expect(logged.values == ["[Dispatchable]: \(String(reflecting: Increment.self))"])
  }

  /// Tasks and threads dispatch and send at once, in a seeded random mix: each item gets exactly one
  /// `willHandle` and then exactly one `didHandle`, and nothing is lost.
  @Test(arguments: [1, 2, 3, 4] as [UInt64])
  func concurrentDispatchesAndSends_eachItemIsObservedOnce_willBeforeDid(seed: UInt64) async throws {
    let calls = LockedValue<[Int: [String]]>([:])
    let callCount = EventCounter()
    @Sendable func record(_ item: any Dispatchable, _ phase: String) {
      let id: Int
      switch item {
      case let item as AppendItem: id = item.value
      case let item as AddThenMaybeFail: id = item.value
      default: id = -1
      }
      calls.withLock { $0[id, default: []].append(phase) }
      callCount.increment()
    }
    let store = makeObservedStore([
      DispatchObserver(willHandle: { record($0, "will") }, didHandle: { item, _ in record(item, "did") })
    ])
    try await store.waitUntilReady()
    let perWorker = 60
    let workers = 6
    // Choices: 0 dispatch an updater, 1 send one, 2 dispatch a side effect (which dispatches an updater with the
    // same id, and fails every other time), 3 send one. Odd workers are threads, which only send.
    var plans: [[Int]] = []
    var expectedCalls: [Int: Int] = [:]
    for worker in 0..<workers {
      var random = SeededGenerator(seed: seed &* 31 &+ UInt64(worker))
      let plan = (0..<perWorker).map { _ in
        let choice = Int.random(in: 0..<4, using: &random)
        return worker.isMultiple(of: 2) ? choice : choice | 1
      }
      plans.append(plan)
      for (index, choice) in plan.enumerated() {
        expectedCalls[worker * 1_000 + index] = choice < 2 ? 2 : 4
      }
    }
    let operations = plans
    await withTaskGroup(of: Void.self) { group in
      for worker in 0..<workers {
        group.addTask {
          if worker.isMultiple(of: 2) {
            for (index, choice) in operations[worker].enumerated() {
              let id = worker * 1_000 + index
              switch choice {
              case 0: try? await store.dispatch(AppendItem(value: id))
              case 1: _ = try? await store.send(AppendItem(value: id)).value
              case 2: try? await store.dispatch(AddThenMaybeFail(value: id, fails: index.isMultiple(of: 2)))
              default: _ = try? await store.send(AddThenMaybeFail(value: id, fails: false)).value
              }
            }
            return
          }
          // A thread sends everything at once (a sent updater applies on it when the store is idle), then the
          // task waits for every handle.
          let handles = await withCheckedContinuation {
            (continuation: CheckedContinuation<[DispatchHandle<Void>], Never>) in
            Thread {
              continuation.resume(
                returning: operations[worker].enumerated().map { index, choice in
                  let id = worker * 1_000 + index
                  return choice == 1
                    ? store.send(AppendItem(value: id)) : store.send(AddThenMaybeFail(value: id, fails: false))
                })
            }.start()
          }
          for handle in handles { _ = try? await handle.value }
        }
      }
    }
    // A handle's `didHandle` may come right after its waiter resumed.
    let total = expectedCalls.values.reduce(0, +)
    let settled = await withFailsafe(seconds: 60) {
      await callCount.wait(for: total)
      return true
    }
    #expect(settled == true)
    let observed = calls.current
    #expect(observed[-1] == nil)
    #expect(observed.mapValues(\.count) == expectedCalls)
    for (id, phases) in observed {
      // A side effect's own AppendItem shares its id: its pair sits inside the side effect's.
      let expected = phases.count == 2 ? ["will", "did"] : ["will", "will", "did", "did"]
      #expect(phases == expected, "item \(id): \(phases)")
    }
    #expect(store.state.items.count == expectedCalls.count)
  }
}
