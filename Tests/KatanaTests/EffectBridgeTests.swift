import KatanaTestSupport
import Testing

@testable import Katana

/// A callback API double: keeps the callbacks it is given until the test delivers through them.
final class CallbackAPI<Value: Sendable>: Sendable {
  private let state = LockedValue<(onValue: (@Sendable (Value) -> Void)?, onEnd: (@Sendable ((any Error)?) -> Void)?)>(
    (nil, nil))
  let started = Gate()
  let stopped = Gate()

  /// Starts "listening": keeps the callbacks.
  func start(onValue: @escaping @Sendable (Value) -> Void, onEnd: @escaping @Sendable ((any Error)?) -> Void) {
    state.withLock { $0 = (onValue, onEnd) }
    started.open()
  }

  func stop() {
    state.withLock { $0 = (nil, nil) }
    stopped.open()
  }

  func send(_ value: Value) {
    state.current.onValue?(value)
  }

  func end(_ error: (any Error)? = nil) {
    state.withLock { $0.onEnd }?(error)
  }

  /// Releases the callbacks without calling them.
  func dropCallbacks() {
    state.withLock { $0 = (nil, nil) }
  }
}

/// A side effect that dispatches every element of a stream under `EffectTestID()`.
struct AppendEach<Elements: AsyncSequence & Sendable>: SideEffect where Elements.Element == Int {
  let elements: Elements
  var delivered: Recorder<Int>?
  var cancelInFlight = false

  func sideEffect(_ context: SideEffectContext<CounterState, TestDependencies>) async throws {
    try await context.forEach(elements, id: EffectTestID(), cancelInFlight: cancelInFlight) { element in
      try await context.dispatch(AppendItem(value: element))
      delivered?.append(element)
    }
  }
}

/// The documented idiom for callback APIs delivering many values: an AsyncThrowingStream with a bounded
/// buffer that stops the API when iteration ends.
func updates(from api: CallbackAPI<Int>) -> AsyncThrowingStream<Int, any Error> {
  AsyncThrowingStream(bufferingPolicy: .bufferingNewest(16)) { continuation in
    api.start(
      onValue: { continuation.yield($0) },
      onEnd: { error in continuation.finish(throwing: error) })
    continuation.onTermination = { _ in api.stop() }
  }
}

@Suite("Async sequence bridge", .timeLimit(.failsafeMinutes(3)))
struct AsyncSequenceBridgeTests {
  @Test func forEach_dispatchesEveryElementInOrder_thenReturns() async throws {
    let store = try await makeReadyStore()
    let numbers = AsyncStream<Int> { continuation in
      for number in 1...5 { continuation.yield(number) }
      continuation.finish()
    }
    try await store.dispatch(AppendEach(elements: numbers))
    #expect(store.state.items == [1, 2, 3, 4, 5])
    #expect(store.runningEffectCount == 0)
  }

  @Test func forEach_sequenceError_reachesTheCaller_afterTheEarlierElements() async throws {
    let store = try await makeReadyStore()
    let numbers = AsyncThrowingStream<Int, any Error> { continuation in
      continuation.yield(1)
      continuation.finish(throwing: TestError(code: 3))
    }
    await #expect(throws: TestError(code: 3)) { try await store.dispatch(AppendEach(elements: numbers)) }
    #expect(store.state.items == [1])
    #expect(store.runningEffectCount == 0)
  }

  @Test func forEach_cancelledByID_stopsIterating_endsTheStream_andThrowsCancellationError() async throws {
    let store = try await makeReadyStore()
    let (numbers, continuation) = AsyncStream<Int>.makeStream()
    let terminated = Gate()
    continuation.onTermination = { _ in terminated.open() }
    let delivered = Recorder<Int>()
    let handle = store.send(AppendEach(elements: numbers, delivered: delivered))
    continuation.yield(1)
    await delivered.wait(forCount: 1)
    store.cancel(id: EffectTestID())
    await #expect(throws: CancellationError.self) { try await handle.value }
    await terminated.wait()
    continuation.yield(2)
    #expect(store.state.items == [1])
    #expect(store.runningEffectCount == 0)
  }

  @Test func forEach_cancelInFlight_stopsTheEarlierIteration_andKeepsTheNewOne() async throws {
    let store = try await makeReadyStore()
    let (older, olderContinuation) = AsyncStream<Int>.makeStream()
    let olderTerminated = Gate()
    olderContinuation.onTermination = { _ in olderTerminated.open() }
    let delivered = Recorder<Int>()
    let first = store.send(AppendEach(elements: older, delivered: delivered))
    olderContinuation.yield(1)
    await delivered.wait(forCount: 1)
    let (newer, newerContinuation) = AsyncStream<Int>.makeStream()
    let second = store.send(AppendEach(elements: newer, delivered: delivered, cancelInFlight: true))
    await #expect(throws: CancellationError.self) { try await first.value }
    await olderTerminated.wait()
    olderContinuation.yield(99)  // the older stream has ended: dropped
    newerContinuation.yield(2)
    await delivered.wait(forCount: 2)
    #expect(store.runningEffectCount == 1)
    newerContinuation.finish()
    try await second.value
    #expect(store.state.items == [1, 2])
    #expect(store.runningEffectCount == 0)
  }

  @Test func forEach_acceptsANonSendableSequence() async throws {
    final class Countdown: AsyncSequence, AsyncIteratorProtocol {
      var remaining = 3
      func makeAsyncIterator() -> Countdown { self }
      func next() async -> Int? {
        guard remaining > 0 else { return nil }
        defer { remaining -= 1 }
        return remaining
      }
    }
    let store = try await makeReadyStore()
    try await store.dispatch(
      Script { context in
        try await context.forEach(Countdown(), id: EffectTestID()) { try await context.dispatch(AppendItem(value: $0)) }
      })
    #expect(store.state.items == [3, 2, 1])
  }
}

@Suite("Callback bridges", .timeLimit(.failsafeMinutes(3)))
struct CallbackBridgeTests {
  // MARK: - Many values, then completion (AsyncThrowingStream + forEach)

  @Test func manyValues_areDispatchedInOrder_untilTheAPICompletes() async throws {
    let store = try await makeReadyStore()
    let api = CallbackAPI<Int>()
    let delivered = Recorder<Int>()
    let handle = store.send(AppendEach(elements: updates(from: api), delivered: delivered))
    await api.started.wait()
    for value in 1...3 { api.send(value) }
    await delivered.wait(forCount: 3)
    api.end()
    try await handle.value
    #expect(store.state.items == [1, 2, 3])
    await api.stopped.wait()
  }

  @Test func manyValues_apiFailure_reachesTheCaller() async throws {
    let store = try await makeReadyStore()
    let api = CallbackAPI<Int>()
    let handle = store.send(AppendEach(elements: updates(from: api)))
    await api.started.wait()
    api.send(1)
    api.end(TestError(code: 9))
    await #expect(throws: TestError(code: 9)) { try await handle.value }
    #expect(store.state.items == [1])
  }

  @Test func manyValues_cancelledByID_stopTheAPI() async throws {
    let store = try await makeReadyStore()
    let api = CallbackAPI<Int>()
    let delivered = Recorder<Int>()
    let handle = store.send(AppendEach(elements: updates(from: api), delivered: delivered))
    await api.started.wait()
    api.send(1)
    await delivered.wait(forCount: 1)
    store.cancel(id: EffectTestID())
    await api.stopped.wait()
    await #expect(throws: CancellationError.self) { try await handle.value }
    #expect(store.state.items == [1])
  }

  // MARK: - One value or error (withCallback)

  /// Starts `withCallback` over `api` in a task, and returns the task once the API has the callback.
  func load(
    from api: CallbackAPI<Int>, cancelled: Gate = Gate(), started: Gate = Gate()
  ) async -> Task<Int, any Error> {
    let task = Task {
      try await withCallback { (complete: @escaping @Sendable (Result<Int, any Error>) -> Void) in
        started.open()
        api.start(
          onValue: { complete(.success($0)) },
          onEnd: { error in complete(.failure(error ?? TestError(code: -1))) })
        return { cancelled.open() }
      }
    }
    await api.started.wait()
    return task
  }

  @Test func withCallback_returnsTheValue_andIgnoresLaterCalls() async throws {
    let api = CallbackAPI<Int>()
    let task = await load(from: api)
    api.send(1)
    api.send(2)
    api.end(TestError(code: 1))
    #expect(try await task.value == 1)
  }

  @Test func withCallback_throwsTheError() async throws {
    let api = CallbackAPI<Int>()
    let task = await load(from: api)
    api.end(TestError(code: 4))
    api.send(1)
    await #expect(throws: TestError(code: 4)) { try await task.value }
  }

  @Test func withCallback_deliveredSynchronouslyInStart_returnsTheValue() async throws {
    let value = try await withCallback { (complete: @escaping @Sendable (Result<String, any Error>) -> Void) in
      complete(.success("now"))
      return nil
    }
    #expect(value == "now")
  }

  @Test func withCallback_cancelled_callsTheHandler_throwsAtOnce_andIgnoresTheLateAnswer() async throws {
    let api = CallbackAPI<Int>()
    let cancelled = Gate()
    let task = await load(from: api, cancelled: cancelled)
    task.cancel()
    await cancelled.wait()
    await #expect(throws: CancellationError.self) { try await task.value }
    api.send(1)  // too late: ignored, no crash
  }

  @Test func withCallback_alreadyCancelled_doesNotStartTheWork() async throws {
    let started = Gate()
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await withCallback { (complete: @escaping @Sendable (Result<Int, any Error>) -> Void) in
        started.open()
        complete(.success(1))
        return nil
      }
    }
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(!started.isOpen)
  }

  @Test func withCallback_callbackReleasedWithoutACall_throwsCallbackDropped() async throws {
    let api = CallbackAPI<Int>()
    let task = await load(from: api)
    api.dropCallbacks()
    await #expect(throws: EffectError.callbackDropped(String(reflecting: Int.self))) { try await task.value }
  }

  @Test func withCallback_callbackNeverKept_throwsCallbackDropped() async throws {
    await #expect(throws: EffectError.callbackDropped(String(reflecting: Int.self))) {
      _ = try await withCallback { (_: @escaping @Sendable (Result<Int, any Error>) -> Void) in nil }
    }
  }

  @Test func withCallback_startThrows_throwsThatError() async throws {
    await #expect(throws: TestError(code: 5)) {
      _ = try await withCallback { (_: @escaping @Sendable (Result<Int, any Error>) -> Void) in
        throw TestError(code: 5)
      }
    }
  }
}
