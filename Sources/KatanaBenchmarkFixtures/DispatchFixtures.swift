import Katana
import KatanaBenchmarkBaselines

extension BenchmarkFixture {
  /// An awaited method of an actor in another module doing the same mutation as the state updater.
  public static let actorCall = BenchmarkFixture(
    name: "baseline: bare actor call", isBaseline: true,
    explanation: "An awaited method of an actor in another module doing the same mutation as the state "
      + "updater: the floor SPEC 7 measures dispatch against."
  ) { operations in
    let actor = BaselineActor()
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { await actor.increment(by: 1) }
      blackHole(await actor.counter)
    }
  }

  /// The same mutation behind a lock.
  public static let lockedMutation = BenchmarkFixture(
    name: "baseline: lock-protected mutation", isBaseline: true,
    explanation: "The same mutation behind an NSLock, from one task: the floor for a thread-safe mutation."
  ) { operations in
    let locked = LockedBaseline()
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { locked.increment(by: 1) }
      blackHole(locked.counter)
    }
  }

  /// `try await store.dispatch(Increment())`, no interceptor, no listener.
  public static let updaterDispatch = BenchmarkFixture(
    name: "dispatch: state updater",
    explanation: "try await store.dispatch(Increment()): no interceptor, no listener."
  ) { operations in
    let store = try await makeStore()
    return .dispatchingIncrements(to: store, operations: operations)
  }

  /// `try await store.dispatch(EmptySideEffect())`.
  public static let emptySideEffect = BenchmarkFixture(
    name: "dispatch: empty side effect",
    explanation: "try await store.dispatch(EmptySideEffect()): the body runs in the calling task."
  ) { operations in
    let store = try await makeStore()
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(EmptySideEffect()) }
    }
  }

  /// `let value = try await store.dispatch(Answer())`.
  public static let returningSideEffect = BenchmarkFixture(
    name: "dispatch: returning side effect",
    explanation: "let value = try await store.dispatch(Answer()): a value back to the caller."
  ) { operations in
    let store = try await makeStore()
    return PreparedFixture(operations: operations) {
      var total = 0
      for _ in 0..<operations { total &+= try await store.dispatch(Answer()) }
      blackHole(total)
    }
  }

  /// A side effect awaiting a nested updater dispatch.
  public static let nestedUpdater = BenchmarkFixture(
    name: "dispatch: nested updater from a side effect",
    explanation: "A side effect that awaits context.dispatch(Increment())."
  ) { operations in
    let store = try await makeStore()
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(NestedIncrement()) }
    } verify: {
      try expectCounter(of: store, operations)
    }
  }

  /// `store.send(Increment())` from one task, then the last handle awaited.
  public static let sendThroughput = BenchmarkFixture(
    name: "send: state updater throughput",
    explanation: "store.send(Increment()) from one task, then await the last handle: ns per item."
  ) { operations in
    let store = try await makeStore()
    return PreparedFixture(operations: operations) {
      var last: DispatchHandle<Void>?
      for _ in 0..<operations { last = store.send(Increment()) }
      try await last?.value
    } verify: {
      try expectCounter(of: store, operations, "send lost updates")
    }
  }

  /// Eight tasks dispatching to one store at once.
  public static let concurrentDispatch = BenchmarkFixture(
    name: "concurrent: 8 tasks dispatching",
    explanation: "Eight tasks dispatch at once; ns per dispatch of the aggregate, with the total checked."
  ) { operations in
    let store = try await makeStore()
    let perTask = Swift.max(1, operations / 8)
    return PreparedFixture(operations: perTask * 8) {
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<8 {
          group.addTask { for _ in 0..<perTask { try await store.dispatch(Increment()) } }
        }
        try await group.waitForAll()
      }
    } verify: {
      try expectCounter(of: store, perTask * 8)
    }
  }

  /// A consumer iterating `store.values(of: \.counter)` while one task dispatches.
  public static let stream = BenchmarkFixture(
    name: "stream: subscriber keeping up", relativeCost: 10,
    explanation: "A consumer iterates store.values(of: \\.counter) while one task dispatches; ns per "
      + "dispatch until the consumer has seen the last value."
  ) { operations in
    let store = try await makeStore()
    var iterator = store.values(of: \.counter, buffering: .bufferingNewest(operations + 1)).makeAsyncIterator()
    _ = await iterator.next()
    let consumer = Task {
      var seen = 0
      while let value = await iterator.next() {
        seen += 1
        if value == operations { break }
      }
      return seen
    }
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(Increment()) }
      _ = await consumer.value
    } verify: {
      let seen = await consumer.value
      guard seen == operations else {
        throw CorrectnessError(description: "the stream subscriber saw \(seen) of \(operations) values")
      }
    }
  }
}
