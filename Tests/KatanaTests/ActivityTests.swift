import KatanaTestSupport
import Testing

@testable import Katana

/// A ready store with activity tracking on, as the test store uses it.
func makeTrackedStore(interceptors: [StoreInterceptor] = []) async throws -> TestStore {
  var configuration = StoreConfiguration()
  configuration.tracksActivity = true
  let store = TestStore(interceptors: interceptors, stateInitializer: { CounterState() }, configuration: configuration)
  try await store.waitUntilReady()
  try await store.waitUntilIdle()
  return store
}

@Suite("Activity tracking", .timeLimit(.failsafeMinutes(3)))
struct ActivityTests {
  @Test func idle_afterAwaitedDispatches() async throws {
    let store = try await makeTrackedStore()
    try await store.dispatch(Increment())
    try await store.dispatch(IncrementTwice())
    #expect(store.activeWork == 0)
    try await store.waitUntilIdle()
  }

  @Test func sentSideEffect_keepsTheStoreBusyUntilItFinishes() async throws {
    let store = try await makeTrackedStore()
    let gate = Gate()
    let started = Gate()
    store.send(
      Script { context in
        started.open()
        await gate.wait()
        try await context.dispatch(Increment())
      })
    await started.wait()
    #expect(store.activeWork > 0)
    let idle = Task { try await store.waitUntilIdle() }
    gate.open()
    try await idle.value
    #expect(store.state.counter == 1)
    #expect(store.activeWork == 0)
  }

  @Test func awaitedSideEffectInAnotherTask_countsWhileItRuns() async throws {
    let store = try await makeTrackedStore()
    let gate = Gate()
    let started = Gate()
    let task = Task {
      try await store.dispatch(
        Script { _ in
          started.open()
          await gate.wait()
        })
    }
    await started.wait()
    #expect(store.activeWork == 1)
    gate.open()
    try await task.value
    try await store.waitUntilIdle()
    #expect(store.activeWork == 0)
  }

  @Test func queuedSentUpdaters_andRedirects_countUntilDone() async throws {
    let gate = Gate()
    let started = Gate()
    let store = try await makeTrackedStore(interceptors: [gatingInterceptor(tag: "first", gate: gate, started: started)]
    )
    store.send(Log(tag: "first"))
    store.send(Log(tag: "second"))
    await started.wait()
    #expect(store.activeWork >= 2)
    gate.open()
    try await store.waitUntilIdle()
    #expect(store.state.log == ["first", "second"])
    #expect(store.activeWork == 0)
  }

  @Test func shutdown_leavesTheStoreIdle() async throws {
    let store = try await makeTrackedStore()
    let started = Gate()
    let cancelled = Gate()
    store.send(Script { _ in try await waitForCancellation(started: started, cancelled: cancelled) })
    await started.wait()
    await store.shutdown()
    try await store.waitUntilIdle()
    #expect(store.activeWork == 0)
  }

  @Test func waitUntilIdle_isCancellable() async throws {
    let store = try await makeTrackedStore()
    let gate = Gate()
    let started = Gate()
    store.send(
      Script { _ in
        started.open()
        await gate.wait()
      })
    await started.wait()
    let waiter = Task { try await store.waitUntilIdle() }
    waiter.cancel()
    await #expect(throws: CancellationError.self) { try await waiter.value }
    gate.open()
    try await store.waitUntilIdle()
  }
}

@Suite("Attachments", .timeLimit(.failsafeMinutes(3)))
struct AttachmentTests {
  final class Registry: Sendable {}

  @Test func attachment_isCreatedOnce_andDroppedAtShutdown() async throws {
    let store = try await makeReadyStore()
    weak var weakRegistry: Registry?
    do {
      let first = try #require(store.attachment(Registry.self) { Registry() })
      let second = try #require(store.attachment(Registry.self) { Registry() })
      #expect(first === second)
      weakRegistry = first
    }
    await store.shutdown()
    #expect(weakRegistry == nil)
    #expect(store.attachment(Registry.self) { Registry() } == nil)
  }
}
