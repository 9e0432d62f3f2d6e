import KatanaTestSupport
import Testing

@testable import Katana

/// A tool that starts work under an id, as the program-order tests call it.
enum RunStartingTool: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case run
  case debounce
  case throttleLeading
  case throttleLatest
  case timer
  case forEach

  var testDescription: String { rawValue }

  /// Calls the tool under `id`; `started` opens if its operation (a tick, an element) ever starts.
  ///
  /// If the operation started, the call ends without hanging: the operations return at once, the throttle
  /// windows are not waited for, and the timer's first tick, after a millisecond, throws `TestError(code: 9)`.
  func call(
    _ context: SideEffectContext<CounterState, TestDependencies>, id: EffectTestID, started: Gate
  ) async throws {
    switch self {
    case .run:
      try await context.run(id: id) { started.open() }
    case .debounce:
      try await context.debounce(id: id, for: .zero) { started.open() }
    case .throttleLeading:
      try await context.throttle(id: id, for: .seconds(3_600), mode: .leading) { started.open() }
    case .throttleLatest:
      try await context.throttle(id: id, for: .seconds(3_600), mode: .latest) { started.open() }
    case .timer:
      try await context.timer(id: id, every: .milliseconds(1)) {
        started.open()
        throw TestError(code: 9)
      }
    case .forEach:
      let elements = AsyncStream<Int> { continuation in
        continuation.yield(1)
        continuation.finish()
      }
      try await context.forEach(elements, id: id) { _ in started.open() }
    }
  }
}

/// How `handle` ended ("success", "CancellationError", or the error), or a note that it did not end within the
/// failsafe bound.
private func outcome<Value: Sendable>(of handle: DispatchHandle<Value>) async -> String {
  let result = await withFailsafe(seconds: 30) { await handle.result }
  switch result {
  case .none: return "no outcome within 30 s"
  case .success: return "success"
  case .failure(let error) where error is CancellationError: return "CancellationError"
  case .failure(let error): return "\(error)"
  }
}

/// What happened first to a throttled call: it finished, or the registry counted it as held.
private enum FirstEvent: Equatable {
  case finished(cancelled: Bool)
  case held
  case failsafe
}

/// Waits for `handle` to finish or for `store` to count `entries` effects under ids, whichever comes first;
/// in the second case, cancels `handle`.
private func firstEvent(of handle: DispatchHandle<Void>, orEntries entries: Int, in store: TestStore) async
  -> FirstEvent
{
  let event = await withFailsafe(seconds: 30) {
    await withTaskGroup(of: FirstEvent?.self) { group in
      group.addTask {
        if case .failure(let error) = await handle.result { return .finished(cancelled: error is CancellationError) }
        return .finished(cancelled: false)
      }
      group.addTask {
        do {
          try await store.waitForRunningEffects(count: entries)
          return .held
        } catch {
          return nil  // cancelled: the other task came first
        }
      }
      let first = await group.next() ?? nil
      // Held, the call would wait for its window's end: cancelling its item ends it.
      if first == .held { handle.cancel() }
      group.cancelAll()
      return first ?? .failsafe
    }
  }
  return event ?? .failsafe
}

/// SPEC 4.7, program order: a cancellation by id reaches every run under that id whose item entered the mailbox
/// before the cancellation did, whichever tool starts the run, and whether the cancellation comes from outside
/// the store or from inside a sent side effect that sent the item itself.
@Suite("Cancellation by id: program order", .timeLimit(.failsafeMinutes(3)))
struct EffectProgramOrderTests {
  static let iterations = 20 * soakFactor

  /// Sends an item that calls `tool` only after `store.cancel(id:)` has returned: the call never starts its
  /// operation.
  static func expectNeverStartsWhenCancelledFromTheStore(_ tool: RunStartingTool) async throws {
    for _ in 0..<iterations {
      let store = try await makeReadyStore()
      let id = EffectTestID(value: 8)
      let cancelled = Gate()
      let started = Gate()
      let handle = store.send(
        Script { context in
          // The item may have started before the cancellation or not; its call comes after it either way.
          await cancelled.wait()
          try await tool.call(context, id: id, started: started)
        })
      store.cancel(id: id)
      cancelled.open()
      let ended = await outcome(of: handle)
      #expect(ended == "CancellationError", "\(tool)")
      #expect(!started.isOpen, "\(tool) started its operation after the cancellation")
      #expect(store.runningEffectCount == 0, "\(tool)")
      await store.shutdown()
    }
  }

  /// A sent side effect sends an item, then cancels the id; the item calls `tool` after that: the call never
  /// starts its operation.
  static func expectNeverStartsWhenItsSenderCancelsAfterSending(_ tool: RunStartingTool) async throws {
    for _ in 0..<iterations {
      let store = try await makeReadyStore()
      let id = EffectTestID(value: 9)
      let cancelled = Gate()
      let started = Gate()
      let sent = LockedValue<DispatchHandle<Void>?>(nil)
      let sender = store.send(
        Script { context in
          let handle = context.send(
            Script { context in
              await cancelled.wait()
              try await tool.call(context, id: id, started: started)
            })
          sent.withLock { $0 = handle }
          context.cancel(id: id)
          cancelled.open()
        })
      let senderEnded = await outcome(of: sender)
      #expect(senderEnded == "success")
      let handle = try #require(sent.current)
      let ended = await outcome(of: handle)
      #expect(ended == "CancellationError", "\(tool)")
      #expect(!started.isOpen, "\(tool) started its operation after its sender's cancellation")
      #expect(store.runningEffectCount == 0, "\(tool)")
      await store.shutdown()
    }
  }

  // MARK: - Bug 8: throttle ignored program order

  @Test func throttle_whenCancelledBeforeArrival_neverRuns() async throws {
    try await Self.expectNeverStartsWhenCancelledFromTheStore(.throttleLeading)
  }

  @Test func throttleLatest_whenCancelledBeforeArrival_neverRuns() async throws {
    try await Self.expectNeverStartsWhenCancelledFromTheStore(.throttleLatest)
  }

  /// The call's item was sent before the cancellation; a call made after it opened a window meanwhile. The
  /// earlier call is refused, not held for that window (held, it would run when the window ends).
  @Test func throttleLatest_whenCancelledBeforeArrival_isNotHeldForAWindowOpenedAfterTheCancel() async throws {
    for _ in 0..<Self.iterations {
      let store = try await makeReadyStore()
      let id = EffectTestID(value: 8)
      let cancelled = Gate()
      let started = Gate()
      let early = store.send(
        Script { context in
          await cancelled.wait()
          try await context.throttle(id: id, for: .seconds(3_600), mode: .latest) { started.open() }
        })
      store.cancel(id: id)
      try await store.dispatch(
        Script { context in try await context.throttle(id: id, for: .seconds(3_600), mode: .latest) {} })
      #expect(store.runningEffectCount == 1)  // the window
      cancelled.open()
      let first = await firstEvent(of: early, orEntries: 2, in: store)
      #expect(first == .finished(cancelled: true))
      #expect(!started.isOpen)
      await store.shutdown()
    }
  }

  // MARK: - Bug 9: a cancellation inside a sent side effect missed the items it had sent

  @Test func run_whenItsSenderCancelsAfterSendingIt_neverRuns() async throws {
    try await Self.expectNeverStartsWhenItsSenderCancelsAfterSending(.run)
  }

  @Test func throttle_whenItsSenderCancelsAfterSendingIt_neverRuns() async throws {
    try await Self.expectNeverStartsWhenItsSenderCancelsAfterSending(.throttleLeading)
  }

  /// What the sender sends after its cancellation is not reached, and neither is the sender's own later run.
  @Test func cancelInsideASentSideEffect_reachesNeitherItsLaterItemsNorItsOwnLaterRuns() async throws {
    let store = try await makeReadyStore()
    let id = EffectTestID(value: 9)
    let laterStarted = Gate()
    let ownStarted = Gate()
    let sent = LockedValue<DispatchHandle<Void>?>(nil)
    let sender = store.send(
      Script { context in
        context.cancel(id: id)
        let handle = context.send(Script { context in try await context.run(id: id) { laterStarted.open() } })
        sent.withLock { $0 = handle }
        try await context.run(id: id) { ownStarted.open() }
      })
    let senderEnded = await outcome(of: sender)
    #expect(senderEnded == "success")
    #expect(ownStarted.isOpen)
    let handle = try #require(sent.current)
    let ended = await outcome(of: handle)
    #expect(ended == "success")
    #expect(laterStarted.isOpen)
    #expect(store.runningEffectCount == 0)
  }

  // MARK: - Every run-starting tool

  @Test(arguments: RunStartingTool.allCases)
  func whenCancelledFromTheStoreBeforeArrival_neverStarts(tool: RunStartingTool) async throws {
    try await Self.expectNeverStartsWhenCancelledFromTheStore(tool)
  }

  @Test(arguments: RunStartingTool.allCases)
  func whenItsSenderCancelsAfterSendingIt_neverStarts(tool: RunStartingTool) async throws {
    try await Self.expectNeverStartsWhenItsSenderCancelsAfterSending(tool)
  }
}
