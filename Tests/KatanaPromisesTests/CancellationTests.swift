import Dispatch
import KatanaPromises
import KatanaTestSupport
import Testing

@Suite("Cancellation: cancel, cancelled, InvalidationToken, PromiseStatus", .timeLimit(.failsafeMinutes(3)))
struct CancellationTests {
  @Test func cancel_pendingPromise_cancelsItAndWhatDerivesFromIt() async throws {
    let source = Promise<Int>()
    let mapped = source.then(in: .background) { $0 + 1 }
    let caught = mapped.catch(in: .background) { _ in }
    source.cancel()
    #expect(!source.isPending)
    #expect(source.result == nil && source.error == nil)
    await #expect(throws: CancellationError.self) { try await source.value }
    await #expect(throws: CancellationError.self) { try await mapped.value }
    await #expect(throws: CancellationError.self) { try await caught.value }
  }

  @Test func cancel_afterSettling_isIgnored() async throws {
    let promise = Promise(resolved: 1)
    promise.cancel()
    #expect(try await promise.value == 1)
  }

  @Test func cancelled_runsOnMain_whenTheSourceIsCancelled() async throws {
    let label = LockedValue<String?>(nil)
    let source = Promise<Int>()
    let handled = source.cancelled { label.withLock { $0 = currentQueueLabel } }
    source.cancel()
    await #expect(throws: CancellationError.self) { try await handled.value }
    #expect(label.current == Context.main.label)
  }

  @Test func cancelled_onResolveResolves_onRejectRejects_withoutRunning() async throws {
    let queue = TestQueue()
    let calls = LockedValue(0)
    try await Promise(resolved: 1).cancelled(in: queue.context) { calls.withLock { $0 += 1 } }.value
    let rejected = Promise<Int>(rejected: TestError(code: 2)).cancelled(in: queue.context) {
      calls.withLock { $0 += 1 }
    }
    await #expect(throws: TestError(code: 2)) { try await rejected.value }
    queue.drain()
    #expect(calls.current == 0)
  }

  @Test func statusCancel_fromTheBody_cancelsThePromise() async throws {
    let promise = Promise<Int> { _, _, status in status.cancel() }
    await #expect(throws: CancellationError.self) { try await promise.value }
  }

  @Test func token_isReportedToTheBody_andSharedWithDerivedPromises() async throws {
    let token = InvalidationToken()
    let started = Gate()
    let proceed = Gate()
    let promise = Promise<Bool>(in: .background, token: token) { resolve, _, status in
      started.open()
      proceed.waitBlocking()
      resolve(status.isCancelled)
    }
    let derived = promise.then(in: .background) { $0 }
    #expect(!promise.isCancelled)
    await started.wait()
    token.invalidate()
    proceed.open()
    #expect(try await derived.value == true)
    #expect(promise.isCancelled)
    #expect(derived.isCancelled)
    // As in Hydra, the token is a flag for bodies: the promise itself resolved.
    #expect(promise.result == true)
  }

  @Test func token_withoutOne_isCancelledIsFalse() {
    #expect(!Promise<Int>().isCancelled)
    #expect(!Promise<Int>().operation.isCancelled)
    let token = InvalidationToken()
    token.isCancelled = true
    #expect(Promise<Int>(token: token) { _, _, _ in }.operation.isCancelled)
  }

  @Test func operation_cancel_cancelsThePromise() async throws {
    let promise = Promise<Int>()
    promise.operation.cancel()
    await #expect(throws: CancellationError.self) { try await promise.value }
  }
}
