import Katana
import KatanaTestSupport
import Testing

/// An interceptor built from a closure that gets the item and `next`.
func interceptor(
  _ handler:
    @escaping @Sendable (any Dispatchable, @escaping StoreInterceptorNext, any AnySideEffectContext) async throws
    -> Void
) -> StoreInterceptor {
  { context in { next in { item in try await handler(item, next, context) } } }
}

struct Double: ReturningSideEffect {
  let value: Int
  func sideEffect(_ context: any AnySideEffectContext) async throws -> Int { value * 2 }
}

/// A class updater that adds `by` once; ``AddTwice``, its subclass, adds it twice.
class AddOnce: StateUpdater, @unchecked Sendable {  // Sendable: immutable.
  let by: Int
  init(by: Int) { self.by = by }
  func updateState(_ state: inout CounterState) { state.counter += by * times }
  var times: Int { 1 }
}

final class AddTwice: AddOnce, @unchecked Sendable {  // Sendable: immutable.
  override var times: Int { 2 }
}

struct Describe: ReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) async throws -> String { "text" }
}

@Suite("Interceptors", .timeLimit(.failsafeMinutes(3)))
struct InterceptorTests {
  @Test func interceptors_runInArrayOrder_oncePerDispatch() async throws {
    let recorder = Recorder<String>()
    let store = try await makeReadyStore(interceptors: [
      recordingInterceptor("a", into: recorder), recordingInterceptor("b", into: recorder),
      recordingInterceptor("c", into: recorder),
    ])
    try await store.dispatch(Increment())
    try await store.dispatch(IncrementTwice())
    #expect(
      recorder.values == [
        "a:Increment", "b:Increment", "c:Increment",
        "a:IncrementTwice", "b:IncrementTwice", "c:IncrementTwice",
        "a:Increment", "b:Increment", "c:Increment",
        "a:Increment", "b:Increment", "c:Increment",
      ])
    #expect(store.state.counter == 3)
  }

  @Test func interceptors_areInitialisedOnceAtStartup_inArrayOrder_withTheContext() async throws {
    let recorder = Recorder<String>()
    let make: @Sendable (String) -> StoreInterceptor = { name in
      { context in
        recorder.append("init \(name) \(context.getAnyState() is CounterState)")
        return { next in
          recorder.append("compose \(name)")
          return { item in try await next(item) }
        }
      }
    }
    let store = try await makeReadyStore(interceptors: [make("a"), make("b")])
    try await store.dispatch(Increment())
    try await store.dispatch(Increment())
    #expect(recorder.values == ["init a true", "init b true", "compose b", "compose a"])
  }

  @Test func throwBeforeNext_rejectsAndSkipsTheRest() async throws {
    let recorder = Recorder<String>()
    let rejecting = interceptor { item, next, _ in
      if item is Increment { throw TestError(code: 1) }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [rejecting, recordingInterceptor("after", into: recorder)])
    let changes = Recorder<Int>()
    store.addListener { _, new in changes.append(new.counter) }
    await #expect(throws: TestError(code: 1)) { try await store.dispatch(Increment()) }
    #expect(store.state.counter == 0)
    #expect(recorder.values.isEmpty)
    try await store.dispatch(SetCounter(value: 5))
    #expect(changes.values == [5])
  }

  @Test func throwBeforeNext_forSideEffect_skipsTheBody() async throws {
    let rejecting = interceptor { item, next, _ in
      if item is IncrementTwice { throw TestError(code: 2) }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [rejecting])
    await #expect(throws: TestError(code: 2)) { try await store.dispatch(IncrementTwice()) }
    #expect(store.state.counter == 0)
  }

  @Test func throwAfterNext_keepsTheCommittedChange_andTheCallerGetsTheError() async throws {
    let throwingAfter = interceptor { item, next, _ in
      try await next(item)
      throw TestError(code: 3)
    }
    let store = try await makeReadyStore(interceptors: [throwingAfter])
    await #expect(throws: TestError(code: 3)) { try await store.dispatch(Increment()) }
    #expect(store.state.counter == 1)
  }

  @Test func interceptor_canMapADownstreamError() async throws {
    let mapping = interceptor { item, next, _ in
      do {
        try await next(item)
      } catch let error as TestError {
        throw TestError(code: error.code + 100)
      }
    }
    let store = try await makeReadyStore(interceptors: [mapping])
    await #expect(throws: TestError(code: 107)) { try await store.dispatch(Fail(code: 7)) }
  }

  @Test func nextNeverCalled_updater_returnsWithNothingDone() async throws {
    let swallowing = interceptor { _, _, _ in }
    let store = try await makeReadyStore(interceptors: [swallowing])
    try await store.dispatch(Increment())
    #expect(store.state.counter == 0)
  }

  @Test func nextNeverCalled_sideEffect_returnsWithoutRunningTheBody() async throws {
    let swallowing = interceptor { _, _, _ in }
    let store = try await makeReadyStore(interceptors: [swallowing])
    let ran = Recorder<Bool>()
    try await store.dispatch(Script { _ in ran.append(true) })
    #expect(ran.values.isEmpty)
  }

  @Test func nextNeverCalled_returningSideEffect_throwsReturnValueUnavailable() async throws {
    let swallowing = interceptor { _, _, _ in }
    let store = try await makeReadyStore(interceptors: [swallowing])
    await #expect(throws: StoreError.returnValueUnavailable(String(reflecting: Double.self))) {
      _ = try await store.dispatch(Double(value: 2))
    }
    await #expect(throws: StoreError.returnValueUnavailable(String(reflecting: Double.self))) {
      _ = try await store.anyDispatch(Double(value: 2))
    }
  }

  @Test func nextWithAnotherUpdater_appliesTheSubstitute() async throws {
    let doubling = interceptor { item, next, _ in
      if let increment = item as? Increment {
        try await next(Increment(by: increment.by * 2))
      } else {
        try await next(item)
      }
    }
    let store = try await makeReadyStore(interceptors: [doubling])
    try await store.dispatch(Increment(by: 3))
    #expect(store.state.counter == 6)
    try await store.dispatch(SetCounter(value: 1))
    #expect(store.state.counter == 1)
  }

  /// The frame applies in place only an item of the dispatched type itself (its exact type); an instance of a subclass
  /// of a class updater, handed to `next` in its place, takes the type-erased path, and is applied as what it is.
  @Test func nextWithASubclassOfAClassUpdater_appliesTheSubclass() async throws {
    let substituting = interceptor { item, next, _ in
      try await next(type(of: item) == AddOnce.self ? AddTwice(by: 5) : item)
    }
    let store = try await makeReadyStore(interceptors: [substituting])
    try await store.dispatch(AddOnce(by: 1))
    #expect(store.state.counter == 10)
    try await store.dispatch(AddTwice(by: 2))
    #expect(store.state.counter == 14)
  }

  @Test func nextWithAnotherReturningSideEffect_returnsTheSubstitutesValue() async throws {
    let replacing = interceptor { item, next, _ in
      if let double = item as? Double {
        try await next(Double(value: double.value + 1))
      } else {
        try await next(item)
      }
    }
    let store = try await makeReadyStore(interceptors: [replacing])
    #expect(try await store.dispatch(Double(value: 4)) == 10)
  }

  @Test func nextWithSideEffectOfAnotherReturnType_throwsTypeMismatch() async throws {
    let replacing = interceptor { item, next, _ in
      if item is Double {
        try await next(Describe())
      } else {
        try await next(item)
      }
    }
    let store = try await makeReadyStore(interceptors: [replacing])
    await #expect(throws: StoreError.returnValueTypeMismatch(expected: "Swift.Int", actual: "Swift.String")) {
      _ = try await store.dispatch(Double(value: 4))
    }
  }

  @Test func nextWithSideEffectForUpdater_dispatchesItThroughTheWholeChain_andCallerWaitsForIt() async throws {
    let recorder = Recorder<String>()
    let converting = interceptor { item, next, _ in
      if item is Log {
        try await next(IncrementTwice())
      } else {
        try await next(item)
      }
    }
    let store = try await makeReadyStore(interceptors: [recordingInterceptor("r", into: recorder), converting])
    try await store.dispatch(Log(tag: "x"))
    #expect(store.state.counter == 2)
    #expect(store.state.log == [])
    #expect(recorder.values == ["r:Log", "r:IncrementTwice", "r:Increment", "r:Increment"])
  }

  @Test func nextWithUpdaterForSideEffect_dispatchesItAsNewItem() async throws {
    let recorder = Recorder<String>()
    let converting = interceptor { item, next, _ in
      if item is IncrementTwice {
        try await next(Log(tag: "instead"))
      } else if item is Double {
        try await next(Increment())
      } else {
        try await next(item)
      }
    }
    let store = try await makeReadyStore(interceptors: [recordingInterceptor("r", into: recorder), converting])
    try await store.dispatch(IncrementTwice())
    #expect(store.state.log == ["instead"])
    #expect(store.state.counter == 0)
    #expect(recorder.values == ["r:IncrementTwice", "r:Log"])
    await #expect(throws: StoreError.returnValueUnavailable(String(reflecting: Double.self))) {
      _ = try await store.dispatch(Double(value: 1))
    }
    #expect(store.state.counter == 1)
  }

  @Test func unconditionalKindSwapping_stopsAtTheRedirectLimit() async throws {
    let swapping = interceptor { item, next, _ in
      if item is Log {
        try await next(IncrementTwice())
      } else if item is IncrementTwice {
        try await next(Log(tag: "again"))
      } else {
        try await next(item)
      }
    }
    let store = try await makeReadyStore(interceptors: [swapping])
    await #expect(throws: StoreError.self) { try await store.dispatch(Log(tag: "start")) }
    do {
      try await store.dispatch(Log(tag: "start"))
    } catch let error as StoreError {
      guard case .redirectLimitExceeded = error else {
        Issue.record("unexpected error \(error)")
        return
      }
    }
    #expect(store.state.log == [])
  }

  /// Katana 6 deadlocked here: an interceptor that, holding an updater's turn, awaits a nested updater.
  @Test func interceptorAwaitingNestedUpdaterWhileHoldingTheTurn_throwsDeadlock() async throws {
    let nesting = interceptor { item, next, context in
      if item is Log {
        _ = try await context.anyDispatch(Increment())
      }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [nesting])
    await #expect {
      try await store.dispatch(Log(tag: "x"))
    } throws: { error in
      guard case .deadlock = error as? StoreError else { return false }
      return true
    }
    // The turn was released: the store keeps working.
    try await store.dispatch(Increment())
    #expect(store.state.counter == 1)
    #expect(store.state.log == [])
  }

  @Test func interceptorAwaitingSideEffectThatAwaitsAnUpdater_throwsDeadlock() async throws {
    let nesting = interceptor { item, next, context in
      if item is Log {
        _ = try await context.anyDispatch(IncrementTwice())
      }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [nesting])
    await #expect {
      try await store.dispatch(Log(tag: "x"))
    } throws: { error in
      guard case .deadlock = error as? StoreError else { return false }
      return true
    }
    try await store.dispatch(Increment())
    #expect(store.state.counter == 1)
  }

  @Test func interceptorAwaitingASentUpdaterWhileHoldingTheTurn_throwsDeadlock() async throws {
    let nesting = interceptor { item, next, context in
      if let log = item as? Log, log.tag == "x" {
        _ = try await context.anySend(Increment()).value
      }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [nesting])
    await #expect {
      try await store.dispatch(Log(tag: "x"))
    } throws: { error in
      guard case .deadlock = error as? StoreError else { return false }
      return true
    }
    // The sent updater stays queued and runs once the turn is released.
    try await store.dispatch(Log(tag: "after"))
    #expect(store.state.counter == 1)
  }

  @Test func interceptorForSideEffect_mayAwaitNestedUpdaters() async throws {
    let nesting = interceptor { item, next, context in
      if item is IncrementTwice {
        _ = try await context.anyDispatch(Log(tag: "before"))
      }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [nesting])
    try await store.dispatch(IncrementTwice())
    #expect(store.state.counter == 2)
    #expect(store.state.log == ["before"])
  }

  @Test func sideEffectChains_runConcurrently() async throws {
    let arrived = EventCounter()
    let barrier = interceptor { item, next, _ in
      if item is Script {
        arrived.increment()
        await arrived.wait(for: 2)  // Each waits for the other: a serialised chain would never pass.
      }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [barrier])
    async let first: Void = store.dispatch(Script { _ in })
    async let second: Void = store.dispatch(Script { _ in })
    _ = try await (first, second)
    #expect(arrived.count == 2)
  }

  @Test func nextCalledAfterTheDispatchFinished_throwsOutOfScope() async throws {
    let escaped = LockedValue<StoreInterceptorNext?>(nil)
    let escaping = interceptor { item, next, _ in
      escaped.withLock { $0 = next }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [escaping])
    try await store.dispatch(Increment())
    let next = try #require(escaped.current)
    await #expect(throws: StoreError.nextCalledOutOfScope(String(reflecting: Increment.self))) {
      try await next(Increment())
    }
    #expect(store.state.counter == 1)
    try await store.dispatch(IncrementTwice())
    let sideEffectNext = try #require(escaped.current)
    await #expect(throws: StoreError.self) { try await sideEffectNext(IncrementTwice()) }
    #expect(store.state.counter == 3)
  }

  /// A store keeps the frame of an ended dispatch for the next one (``CoreState/takeSpareFrame(applying:)``), but never
  /// one that a task of the ended dispatch still carries: its `next` must not be taken for the later dispatch's.
  @Test func nextFromATaskOfAnEndedDispatch_whileALaterOneHoldsTheTurn_throwsOutOfScope() async throws {
    let release = Gate()
    let finished = Gate()
    let entered = Gate()
    let holding = Gate()
    let outcome = LockedValue<String?>(nil)
    let isFirst = LockedValue(true)
    let spawning = interceptor { item, next, _ in
      if isFirst.withLock({ first in
        defer { first = false }
        return first
      }) {
        // Started by this dispatch, it carries its frame; it calls `next` once the later dispatch holds the turn.
        Task {
          await release.waitIgnoringCancellation()
          do {
            try await next(Log(tag: "stale"))
            outcome.withLock { $0 = "handled" }
          } catch {
            outcome.withLock { $0 = "\(error)" }
          }
          finished.open()
        }
      } else {
        entered.open()
        await holding.waitIgnoringCancellation()
      }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [spawning])
    try await store.dispatch(Increment())
    let later = Task { try await store.dispatch(Increment()) }
    await entered.wait()
    release.open()
    await finished.wait()
    holding.open()
    try await later.value
    #expect(outcome.current == "\(StoreError.nextCalledOutOfScope(String(reflecting: Log.self)))")
    #expect(store.state.log.isEmpty)
    #expect(store.state.counter == 2)
  }

  @Test func interceptor_seesCancellationOfTheDispatcher_andMayReject() async throws {
    let gate = Gate()
    let started = Gate()
    let cancellationAware = interceptor { item, next, _ in
      if let log = item as? Log, log.tag == "slow" {
        started.open()
        await gate.wait()
        if Task.isCancelled { throw CancellationError() }
      }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [cancellationAware])
    let task = Task { try await store.dispatch(Log(tag: "slow")) }
    await started.wait()
    task.cancel()
    gate.open()
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(store.state.log == [])
    try await store.dispatch(Increment())
    #expect(store.state.counter == 1)
  }
}
