import Dispatch
import KatanaPromises
import KatanaTestSupport
import Testing

@Suite("catch", .timeLimit(.failsafeMinutes(3)))
struct CatchTests {
  @Test func onRejection_runsWithTheError_onMain_andResolves() async throws {
    let seen = LockedValue<(code: Int, label: String)?>(nil)
    try await Promise<Int>(rejected: TestError(code: 3))
      .catch { error in seen.withLock { $0 = ((error as? TestError)?.code ?? -1, currentQueueLabel) } }
      .value
    #expect(seen.current?.code == 3)
    #expect(seen.current?.label == Context.main.label)
  }

  @Test func onSuccess_resolvesWithoutRunning() async throws {
    let queue = TestQueue()
    let calls = LockedValue(0)
    try await Promise(resolved: 1).catch(in: queue.context) { _ in calls.withLock { $0 += 1 } }.value
    queue.drain()
    #expect(calls.current == 0)
  }

  @Test func bodyThrowing_rejectsWithTheNewError() async throws {
    let caught = Promise<Int>(rejected: TestError(code: 1)).catch(in: .background) { _ in throw TestError(code: 2) }
    await #expect(throws: TestError(code: 2)) { try await caught.value }
  }

  @Test func afterThen_catchesTheThenError() async throws {
    let seen = LockedValue<Int?>(nil)
    try await Promise(resolved: 1)
      .then(in: .background) { (_: Int) -> Int in throw TestError(code: 9) }
      .catch(in: .background) { error in seen.withLock { $0 = (error as? TestError)?.code } }
      .value
    #expect(seen.current == 9)
  }
}

@Suite("always", .timeLimit(.failsafeMinutes(3)))
struct AlwaysTests {
  @Test func onSuccess_runsOnBackground_andPassesTheValueOn() async throws {
    let label = LockedValue("")
    let value = try await Promise(resolved: 5).always { label.withLock { $0 = currentQueueLabel } }.value
    #expect(value == 5)
    #expect(label.current == Context.background.label)
  }

  @Test func onRejection_runs_andPassesTheErrorOn() async throws {
    let calls = LockedValue(0)
    let promise = Promise<Int>(rejected: TestError(code: 1)).always { calls.withLock { $0 += 1 } }
    await #expect(throws: TestError(code: 1)) { try await promise.value }
    #expect(calls.current == 1)
  }

  @Test func bodyThrowing_rejectsWithItsError() async throws {
    let promise = Promise(resolved: 1).always { throw TestError(code: 2) }
    await #expect(throws: TestError(code: 2)) { try await promise.value }
  }

  @Test func onCancellation_doesNotRun_andIsCancelled() async throws {
    let queue = TestQueue()
    let calls = LockedValue(0)
    let source = Promise<Int>()
    let always = source.always(in: queue.context) { calls.withLock { $0 += 1 } }
    source.cancel()
    await #expect(throws: CancellationError.self) { try await always.value }
    queue.drain()
    #expect(calls.current == 0)
  }
}
