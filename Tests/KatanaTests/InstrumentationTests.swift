import KatanaTestSupport
import Testing

@testable import Katana

/// A side effect that records when its body ran.
struct Timed: SideEffect {
  let ranAt: Recorder<ContinuousClock.Instant>

  func sideEffect(_ context: SideEffectContext<CounterState, TestDependencies>) async throws {
    ranAt.append(ContinuousClock.now)
  }
}

/// An event reduced to what the tests compare.
private struct Reported: Equatable, CustomStringConvertible {
  let kind: DispatchInstrumentation.Event.Kind
  let typeName: String
  let error: TestError?

  init(_ kind: DispatchInstrumentation.Event.Kind, _ type: any Dispatchable.Type, _ error: TestError? = nil) {
    self.kind = kind
    typeName = String(reflecting: type)
    self.error = error
  }

  init(_ event: DispatchInstrumentation.Event) {
    kind = event.kind
    typeName = event.typeName
    switch event.outcome {
    case .completed: error = nil
    case .failed(let error): self.error = error as? TestError ?? TestError(code: -1)
    }
  }

  var description: String { "\(kind) \(typeName) \(error.map { "failed \($0.code)" } ?? "completed")" }
}

@Suite("DispatchInstrumentation", .timeLimit(.failsafeMinutes(3)))
struct DispatchInstrumentationTests {
  @Test func hook_reportsOneEventPerDispatch_withKindTypeNameAndOutcome() async throws {
    let events = Recorder<DispatchInstrumentation.Event>()
    let store = try await makeReadyStore(interceptors: [DispatchInstrumentation.interceptor { events.append($0) }])
    try await store.dispatch(Increment())
    try await store.dispatch(IncrementTwice())
    #expect(try await store.dispatch(AddAndRead(by: 1)) == 4)
    await #expect(throws: TestError(code: 7)) { try await store.dispatch(Fail(code: 7)) }
    _ = try await store.anyDispatch(Log(tag: "erased"))
    try await store.send(SetCounter(value: 0)).value
    #expect(
      events.values.map(Reported.init) == [
        Reported(.stateUpdater, Increment.self),
        Reported(.stateUpdater, Increment.self),
        Reported(.stateUpdater, Increment.self),
        Reported(.sideEffect, IncrementTwice.self),
        Reported(.stateUpdater, Increment.self),
        Reported(.sideEffect, AddAndRead.self),
        Reported(.sideEffect, Fail.self, TestError(code: 7)),
        Reported(.stateUpdater, Log.self),
        Reported(.stateUpdater, SetCounter.self),
      ])
    #expect(events.values.map(\.succeeded) == [true, true, true, true, true, true, false, true, true])
  }

  @Test func hook_reportsItemsThatALaterInterceptorRejects_asFailed() async throws {
    let events = Recorder<DispatchInstrumentation.Event>()
    let rejecting = interceptor { item, next, _ in
      if item is Increment || item is IncrementTwice { throw TestError(code: 3) }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [
      DispatchInstrumentation.interceptor { events.append($0) }, rejecting,
    ])
    await #expect(throws: TestError(code: 3)) { try await store.dispatch(Increment()) }
    await #expect(throws: TestError(code: 3)) { try await store.dispatch(IncrementTwice()) }
    #expect(
      events.values.map(Reported.init) == [
        Reported(.stateUpdater, Increment.self, TestError(code: 3)),
        Reported(.sideEffect, IncrementTwice.self, TestError(code: 3)),
      ])
  }

  @Test func hook_eventSpansTheHandlingOfTheItem() async throws {
    let events = Recorder<DispatchInstrumentation.Event>()
    let ranAt = Recorder<ContinuousClock.Instant>()
    let store = try await makeReadyStore(interceptors: [DispatchInstrumentation.interceptor { events.append($0) }])
    let before = ContinuousClock.now
    try await store.dispatch(Timed(ranAt: ranAt))
    let after = ContinuousClock.now
    let event = try #require(events.values.first)
    let ran = try #require(ranAt.values.first)
    #expect(before <= event.start)
    #expect(event.start <= ran)
    #expect(ran <= event.start + event.duration)
    #expect(event.start + event.duration <= after)
    #expect(event.dispatchable is Timed)
    #expect(ObjectIdentifier(event.dispatchableType) == ObjectIdentifier(Timed.self))
  }

  @Test func hook_reportsStateUpdatersInTheOrderTheStoreAppliedThem() async throws {
    let events = Recorder<String>()
    let store = try await makeReadyStore(interceptors: [
      DispatchInstrumentation.interceptor { event in
        if let log = event.dispatchable as? Log { events.append(log.tag) }
      }
    ])
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<4 {
        group.addTask {
          for index in 0..<25 { try await store.dispatch(Log(tag: "\(task).\(index)")) }
        }
      }
      try await group.waitForAll()
    }
    #expect(events.values.count == 100)
    #expect(events.values == store.state.log)
  }
}

@Suite("SignpostLogger", .timeLimit(.failsafeMinutes(3)))
struct SignpostLoggerTests {
  /// On Apple platforms this also runs the signpost code (intervals are emitted only while Instruments
  /// records); elsewhere the interceptor only hands items on.
  @Test func interceptor_handsItemsOn_andRethrows() async throws {
    let store = try await makeReadyStore(interceptors: [SignpostLogger.interceptor()])
    try await store.dispatch(Increment())
    try await store.dispatch(IncrementTwice())
    #expect(try await store.dispatch(AddAndRead(by: 1)) == 4)
    await #expect(throws: TestError(code: 8)) { try await store.dispatch(Fail(code: 8)) }
    #expect(store.state.counter == 4)
  }
}
