import Dispatch
import Katana
import KatanaTestSupport
import Testing

@Suite("Ordering", .timeLimit(.failsafeMinutes(3)))
struct OrderingTests {
  /// N tasks × M dispatches lose no update: the total has a closed form.
  @Test(arguments: [1, 2, 8, 64])
  func concurrentDispatches_loseNoUpdate(tasks: Int) async throws {
    let store = try await makeReadyStore()
    let perTask = 100
    await withThrowingTaskGroup(of: Void.self) { group in
      for task in 1...tasks {
        group.addTask {
          for _ in 0..<perTask { try await store.dispatch(Add(by: task)) }
        }
      }
    }
    #expect(store.state.other == tasks * perTask)
    #expect(store.state.counter == perTask * tasks * (tasks + 1) / 2)
  }

  /// The same with a listener and with interceptors that suspend, which forces the mailbox's slow paths.
  @Test func concurrentDispatches_throughSuspendingInterceptorsAndListener_loseNoUpdate() async throws {
    let yielding: StoreInterceptor = { _ in
      { next in
        { item in
          await Task.yield()
          try await next(item)
        }
      }
    }
    let store = try await makeReadyStore(interceptors: [yielding])
    let changes = LockedValue(0)
    store.addListener { _, _ in changes.withLock { $0 += 1 } }
    let tasks = 16
    let perTask = 50
    await withThrowingTaskGroup(of: Void.self) { group in
      for task in 1...tasks {
        group.addTask {
          for _ in 0..<perTask { try await store.dispatch(Add(by: task)) }
        }
      }
    }
    #expect(store.state.other == tasks * perTask)
    #expect(store.state.counter == perTask * tasks * (tasks + 1) / 2)
    #expect(changes.current == tasks * perTask)
  }

  /// Each dispatcher's updaters apply in its order, even when interceptors suspend a (seeded) random
  /// number of times while holding the turn.
  @Test(arguments: [UInt64(1), 7, 42])
  func perDispatcherFIFO_throughRandomlySuspendingInterceptors(seed: UInt64) async throws {
    let suspending: StoreInterceptor = { _ in
      { next in
        { item in
          if let log = item as? Log {
            // The tag's bytes, not its `hashValue` (seeded afresh in every process): the schedule replays.
            let tagBits = log.tag.utf8.reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) }
            var generator = SeededGenerator(seed: seed ^ tagBits)
            for _ in 0..<Int(generator.next() % 4) { await Task.yield() }
          }
          try await next(item)
        }
      }
    }
    let store = try await makeReadyStore(interceptors: [suspending, suspending])
    let dispatchers = 8
    let perDispatcher = 40
    await withThrowingTaskGroup(of: Void.self) { group in
      for dispatcher in 0..<dispatchers {
        group.addTask {
          do {
            for sequence in 0..<perDispatcher { try await store.dispatch(Log(tag: "\(dispatcher):\(sequence)")) }
          } catch {
            Issue.record("dispatcher \(dispatcher) failed: \(error)")
          }
        }
      }
    }
    let log = store.state.log
    #expect(log.count == dispatchers * perDispatcher)
    for dispatcher in 0..<dispatchers {
      let sequences = log.filter { $0.hasPrefix("\(dispatcher):") }.map { Int($0.split(separator: ":")[1])! }
      #expect(sequences == Array(0..<perDispatcher))
    }
  }

  /// Successive `send` calls from one thread apply in call order.
  @Test func send_fromOneThread_keepsCallOrder() async throws {
    let store = try await makeReadyStore()
    let last: DispatchHandle<Void> = await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        var handle: DispatchHandle<Void>?
        for index in 0..<1_000 { handle = store.send(Log(tag: "\(index)")) }
        continuation.resume(returning: handle!)
      }
    }
    try await last.value
    #expect(store.state.log == (0..<1_000).map(String.init))
  }

  /// `send` fixes the position at the call: items sent before an awaited dispatch apply before it, and a
  /// sent side effect starts only once the updaters sent before it are committed.
  @Test func send_thenDispatch_keepProgramOrder() async throws {
    let gate = Gate()
    let started = Gate()
    let enqueued = EventCounter()
    let store = try await makeObservedStore(
      interceptors: [gatingInterceptor(tag: "a", gate: gate, started: started)], enqueued: enqueued)
    let seen = Recorder<[String]>()
    store.send(Log(tag: "a"))
    store.send(Script { context in seen.append(context.getState().log) })
    store.send(Log(tag: "b"))
    // The side effect and "b" both wait in the mailbox behind "a", which holds the turn.
    #expect(enqueued.count == 2)
    await started.wait()
    gate.open()
    try await store.dispatch(Log(tag: "c"))
    #expect(store.state.log == ["a", "b", "c"])
    await seen.wait(forCount: 1)
    #expect(seen.values.first?.first == "a")
  }

  /// A high-priority dispatch that arrives after a low-priority one is applied after it.
  @Test func highPriorityDispatch_doesNotOvertakeEarlierLowPriorityOne() async throws {
    let gate = Gate()
    let started = Gate()
    let enqueued = EventCounter()
    let store = try await makeObservedStore(
      interceptors: [gatingInterceptor(tag: "first", gate: gate, started: started)], enqueued: enqueued)
    let first = Task { try await store.dispatch(Log(tag: "first")) }
    await started.wait()  // "first" holds the turn.
    let low = Task(priority: .low) { try await store.dispatch(Log(tag: "low")) }
    await enqueued.wait(for: 1)  // "low" waits in the mailbox.
    let high = Task(priority: .high) { try await store.dispatch(Log(tag: "high")) }
    await enqueued.wait(for: 2)
    gate.open()
    try await first.value
    try await low.value
    try await high.value
    #expect(store.state.log == ["first", "low", "high"])
  }

  /// Updaters never run concurrently: an interceptor that holds the turn keeps later ones waiting.
  @Test func suspendingInterceptor_holdsTheTurn() async throws {
    let gate = Gate()
    let started = Gate()
    let enqueued = EventCounter()
    let store = try await makeObservedStore(
      interceptors: [gatingInterceptor(tag: "slow", gate: gate, started: started)], enqueued: enqueued)
    let slow = Task { try await store.dispatch(Log(tag: "slow")) }
    await started.wait()
    let fast = Task { try await store.dispatch(Log(tag: "fast")) }
    await enqueued.wait(for: 1)
    #expect(store.state.log == [])
    gate.open()
    try await slow.value
    try await fast.value
    #expect(store.state.log == ["slow", "fast"])
  }
}
