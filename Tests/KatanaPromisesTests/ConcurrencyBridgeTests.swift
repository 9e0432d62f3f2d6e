import Dispatch
import KatanaPromises
import KatanaTestSupport
import Testing

@Suite("Bridges: value, promises from async closures, async()", .timeLimit(.failsafeMinutes(3)))
struct ConcurrencyBridgeTests {
  @Test func value_returnsTheValue_orThrowsTheError() async throws {
    let promise = Promise<Int> { resolve, _, _ in DispatchQueue.global().async { resolve(3) } }
    #expect(try await promise.value == 3)
    await #expect(throws: TestError(code: 1)) { try await Promise<Int>(rejected: TestError(code: 1)).value }
  }

  @Test func value_ofACancelledPromise_throwsCancellationError() async throws {
    let promise = Promise<Int>()
    let waiting = Task { try await promise.value }
    promise.cancel()
    await #expect(throws: CancellationError.self) { try await waiting.value }
  }

  @Test func asyncClosure_settlesWithWhatItReturnsOrThrows() async throws {
    let answer = Promise<Int> { 40 + 2 }
    #expect(try await answer.then(in: .background) { $0 + 1 }.value == 43)
    await #expect(throws: TestError(code: 2)) { try await Promise<Int> { throw TestError(code: 2) }.value }
  }

  @Test func asyncClosure_isLazy() async throws {
    let runs = LockedValue(0)
    let promise = Promise<Int> {
      runs.withLock { $0 += 1 }
      return 1
    }
    // A promise that is never observed never starts its task: observing it twice runs the closure once.
    #expect(try await promise.value == 1)
    #expect(try await promise.value == 1)
    #expect(runs.current == 1)
  }

  @Test func asyncClosure_cancel_cancelsTheTask() async throws {
    let started = Gate()
    let sawCancellation = Gate()
    let promise = Promise<Int> {
      await withTaskCancellationHandler {
        started.open()
        await sawCancellation.wait()
      } onCancel: {
        sawCancellation.open()
      }
      return 0
    }
    let waiting = Task { try await promise.value }
    await started.wait()
    promise.cancel()
    await sawCancellation.wait()
    await #expect(throws: CancellationError.self) { try await waiting.value }
  }

  @Test func asyncFunction_runsTheBodyOnItsContext() async throws {
    let queue = TestQueue("async.queue")
    let label = try await async(in: queue.context) { _ in currentQueueLabel }.value
    #expect(label == "async.queue")
    await #expect(throws: TestError(code: 3)) { try await async { _ -> Int in throw TestError(code: 3) }.value }
  }

  @Test func asyncFunction_fireAndForget_runsTheBlock() async {
    let ran = Gate()
    async(in: .utility) { ran.open() }
    async(in: .background, after: 0.001) { ran.open() }
    await ran.wait()
  }
}
