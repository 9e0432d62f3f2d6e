import KatanaTestSupport
import Testing

@testable import Katana

@Suite("Listeners", .timeLimit(.failsafeMinutes(3)))
struct ListenerTests {
  @Test func listener_getsOldAndNew_inCommitOrder_neverTheInitialState() async throws {
    let store = try await makeReadyStore(CounterState(counter: 10))
    let changes = Recorder<String>()
    store.addListener { old, new in changes.append("\(old.counter)->\(new.counter)") }
    #expect(changes.values.isEmpty)
    try await store.dispatch(Increment())
    try await store.dispatch(Increment(by: 5))
    store.send(SetCounter(value: 0))
    try await store.dispatch(IncrementTwice())
    #expect(changes.values == ["10->11", "11->16", "16->0", "0->1", "1->2"])
  }

  @Test func afterAwaitedDispatch_everyListenerHasSeenTheChange() async throws {
    let store = try await makeReadyStore()
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    store.addListener { _, new in first.append(new.counter) }
    store.addAnyListener { _, new in second.append((new as? CounterState)?.counter ?? -1) }
    for expected in 1...20 {
      try await store.dispatch(Increment())
      #expect(first.values.last == expected)
      #expect(second.values.last == expected)
    }
  }

  @Test func listener_isNotCalledForBlockedOrFailedDispatches() async throws {
    let blocking: StoreInterceptor = { _ in
      { next in
        { item in
          if item is SetCounter { throw TestError(code: 1) }
          if item is Log { return }
          try await next(item)
        }
      }
    }
    let store = try await makeReadyStore(interceptors: [blocking])
    let calls = Recorder<Int>()
    store.addListener { _, new in calls.append(new.counter) }
    await #expect(throws: TestError.self) { try await store.dispatch(SetCounter(value: 5)) }
    try await store.dispatch(Log(tag: "dropped"))
    await #expect(throws: TestError.self) { try await store.dispatch(Fail(code: 1)) }
    #expect(calls.values.isEmpty)
  }

  @Test func unsubscribe_isIdempotent_andStopsFurtherCalls() async throws {
    let store = try await makeReadyStore()
    let calls = Recorder<Int>()
    let unsubscribe = store.addListener { _, new in calls.append(new.counter) }
    try await store.dispatch(Increment())
    unsubscribe()
    unsubscribe()
    try await store.dispatch(Increment())
    #expect(calls.values == [1])
    #expect(store.core.observerCount == 0)
  }

  @Test func unsubscribe_racingWithFourDispatchingTasks_noCallForLaterCommits() async throws {
    let store = try await makeReadyStore()
    let received = Recorder<Int>()
    let unsubscribe = store.addListener { _, new in received.append(new.counter) }
    let halfway = EventCounter()
    let dispatchers = Task {
      await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<4 {
          group.addTask {
            for _ in 0..<200 {
              try await store.dispatch(Increment())
              halfway.increment()
            }
          }
        }
      }
    }
    await halfway.wait(for: 400)
    unsubscribe()
    let counterAtUnsubscribe = store.state.counter
    await dispatchers.value
    #expect(store.state.counter == 800)
    #expect(received.values.allSatisfy { $0 <= counterAtUnsubscribe })
    #expect(received.values.count >= 400)
  }

  @Test func listeners_areCalledOneAtATime_evenWithConcurrentDispatchers() async throws {
    let store = try await makeReadyStore()
    let inside = LockedValue((current: 0, maximum: 0))
    store.addListener { _, _ in
      inside.withLock {
        $0.current += 1
        $0.maximum = max($0.maximum, $0.current)
      }
      inside.withLock { $0.current -= 1 }
    }
    await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<8 {
        group.addTask { for _ in 0..<200 { try await store.dispatch(Increment()) } }
      }
    }
    #expect(inside.current.maximum == 1)
  }

  @Test func listener_mayDispatch() async throws {
    let store = try await makeReadyStore()
    let followUps = Recorder<Bool>()
    store.addListener { [weak store] old, new in
      guard let store, new.counter == 1, old.counter == 0 else { return }
      Task {
        try await store.dispatch(Log(tag: "follow-up"))
        followUps.append(true)
      }
      store.send(Log(tag: "sent"))
    }
    try await store.dispatch(Increment())
    await followUps.wait(forCount: 1)
    #expect(Set(store.state.log) == ["follow-up", "sent"])
  }
}

@Suite("Streams", .timeLimit(.failsafeMinutes(3)))
struct StreamTests {
  @Test func severalSubscribers_areIndependent_andEachGetsEveryState() async throws {
    let store = try await makeReadyStore()
    let stream = store.states(buffering: .bufferingNewest(100))
    var first = stream.makeAsyncIterator()
    var second = stream.makeAsyncIterator()
    for _ in 0..<10 { try await store.dispatch(Increment()) }
    var firstValues: [Int] = []
    var secondValues: [Int] = []
    for _ in 0...10 {
      firstValues.append(try #require(await first.next()).counter)
      secondValues.append(try #require(await second.next()).counter)
    }
    #expect(firstValues == Array(0...10))
    #expect(secondValues == Array(0...10))
  }

  @Test func changes_deliverOldAndNew() async throws {
    let store = try await makeReadyStore()
    var changes = store.changes().makeAsyncIterator()
    try await store.dispatch(Increment())
    try await store.dispatch(SetCounter(value: 7))
    let first = try #require(await changes.next())
    let second = try #require(await changes.next())
    #expect([first.old.counter, first.new.counter, second.old.counter, second.new.counter] == [0, 1, 1, 7])
  }

  @Test func slowConsumer_staysWithinItsBufferBound() async throws {
    let store = try await makeReadyStore()
    var newest = store.values(of: \.counter, buffering: .bufferingNewest(5)).makeAsyncIterator()
    var oldest = store.values(of: \.counter, buffering: .bufferingOldest(5)).makeAsyncIterator()
    var latest = store.states().makeAsyncIterator()
    for _ in 0..<100 { try await store.dispatch(Increment()) }
    await store.shutdown()
    var newestValues: [Int] = []
    while let value = await newest.next() { newestValues.append(value) }
    var oldestValues: [Int] = []
    while let value = await oldest.next() { oldestValues.append(value) }
    var latestValues: [Int] = []
    while let value = await latest.next() { latestValues.append(value.counter) }
    #expect(newestValues == [96, 97, 98, 99, 100])
    #expect(oldestValues == [0, 1, 2, 3, 4])
    #expect(latestValues == [100])
  }

  @Test func projection_skipsRepeats() async throws {
    let store = try await makeReadyStore()
    var values = store.values(of: \.counter, buffering: .bufferingNewest(100)).makeAsyncIterator()
    try await store.dispatch(Log(tag: "a"))
    try await store.dispatch(Increment())
    try await store.dispatch(Log(tag: "b"))
    try await store.dispatch(SetCounter(value: 1))
    try await store.dispatch(Increment())
    await store.shutdown()
    var received: [Int] = []
    while let value = await values.next() { received.append(value) }
    #expect(received == [0, 1, 2])
  }

  @Test func cancellingTheConsumer_unregistersIt() async throws {
    let store = try await makeReadyStore()
    let baseline = store.core.observerCount
    let subscribed = Gate()
    let consumer = Task {
      var iterator = store.states().makeAsyncIterator()
      subscribed.open()
      while await iterator.next() != nil {}
    }
    await subscribed.wait()
    #expect(store.core.observerCount == baseline + 1)
    consumer.cancel()
    await consumer.value
    #expect(store.core.observerCount == baseline)
    try await store.dispatch(Increment())
  }

  @Test func leavingTheLoop_unregistersTheSubscriber() async throws {
    let store = try await makeReadyStore()
    for await state in store.states() {
      #expect(state.counter == 0)
      break
    }
    #expect(store.core.observerCount == 0)
  }

  @Test func streamConsumer_onTheMainActor_receivesValues() async throws {
    let store = try await makeReadyStore()
    let received = await Task { @MainActor in
      var iterator = store.values(of: \.counter, buffering: .bufferingNewest(10)).makeAsyncIterator()
      try await store.dispatch(Increment())
      return [await iterator.next(), await iterator.next()]
    }.result
    #expect(try received.get() == [0, 1])
  }
}
