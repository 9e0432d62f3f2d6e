import KatanaTestSupport
import KatanaTesting
import Testing

/// Many test stores at once, under Swift Testing's default parallelism. Every store checks that it saw
/// exactly its own items, with the right origins, in an order consistent with its own commits: any state
/// shared between test stores (a global recorder, a global claim, a global cancellation table) would mix
/// them up.
@Suite("TestStore: parallel test stores", .timeLimit(.failsafeMinutes(3)))
struct TestStoreParallelTests {
  @Test(arguments: 0..<48)
  func manyTestStores_inParallel_seeOnlyTheirOwnItems(index: Int) async throws {
    let store = makeStore(recordsDispatches: true)
    let tag = "store \(index)"

    try await store.dispatch(SetCount(value: index)) { $0.count = index }
    try await store.dispatch(LogAll(tags: ["\(tag) a", "\(tag) b"]))
    await store.receive(Log(tag: "\(tag) a")) { $0.log = ["\(tag) a"] }
    await store.receive(Log(tag: "\(tag) b")) { $0.log = ["\(tag) a", "\(tag) b"] }

    // A long-running side effect: only this test's cancellation may stop it.
    let started = Gate()
    let longRunning = store.send(
      Script { _ in
        started.open()
        try await waitForCancellation()
      })
    await started.wait()

    // Three side effects at once, interleaving their updaters in whatever order the scheduler picks.
    let effects = (0..<3).map { effect in
      store.send(LogAll(tags: (0..<4).map { "\(tag) e\(effect) #\($0)" }))
    }
    for effect in effects {
      try await effect.value
    }
    let received = store.dispatchLog.filter { $0.origin == .received }.compactMap { ($0.item as? Log)?.tag }
    let concurrent = Array(received.dropFirst(2))
    #expect(concurrent.count == 12)
    for effect in 0..<3 {
      #expect(concurrent.filter { $0.hasPrefix("\(tag) e\(effect) ") } == (0..<4).map { "\(tag) e\(effect) #\($0)" })
    }
    // Received in the order they were applied, each with its own change.
    var log = ["\(tag) a", "\(tag) b"]
    for item in concurrent {
      log.append(item)
      await store.receive(Log(tag: item)) { [log] in $0.log = log }
    }

    longRunning.cancel()
    await #expect(throws: CancellationError.self) { try await longRunning.value }
    await store.finish()
    #expect(store.state == CounterState(count: index, log: log))
    #expect(store.dispatchLog.filter { $0.origin == .test }.count == 6)
    #expect(store.dispatchLog.filter { $0.origin == .received }.count == 14)
  }

  @Test func finishingOneTestStore_doesNotCancelAnothersWork() async throws {
    let first = makeStore()
    let second = makeStore()
    let gate = Gate()
    let started = Gate()
    second.send(WaitForGate(gate: gate, started: started))
    await started.wait()
    await first.finish()
    gate.open()
    await second.receive(Log.self) { $0.log = ["after gate"] }
    await second.finish()
  }

  @Test func sideEffectOfOneTestStore_dispatchingToAnother_isReceivedThere() async throws {
    let first = makeStore()
    let second = makeStore()
    let target = second.store
    try await first.dispatch(
      Script { context in
        try await target.dispatch(Log(tag: "to the second store"))
        try await context.dispatch(Log(tag: "in the first store"))
      })
    await second.receive(Log(tag: "to the second store")) { $0.log = ["to the second store"] }
    await first.receive(Log(tag: "in the first store")) { $0.log = ["in the first store"] }
    await first.finish()
    await second.finish()
  }
}
