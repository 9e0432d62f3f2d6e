import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import Testing

@Suite("Promise: creation, settling once, lazy bodies", .timeLimit(.failsafeMinutes(3)))
struct PromiseTests {
  @Test func resolvedInit_hasItsValue() async throws {
    let promise = Promise(resolved: 7)
    #expect(promise.result == 7)
    #expect(promise.error == nil)
    #expect(!promise.isPending)
    #expect(try await promise.value == 7)
  }

  @Test func rejectedInit_hasItsError() async throws {
    let promise = Promise<Int>(rejected: TestError(code: 1))
    #expect(promise.result == nil)
    #expect(promise.error as? TestError == TestError(code: 1))
    #expect(!promise.isPending)
    await #expect(throws: TestError(code: 1)) { try await promise.value }
  }

  @Test func pendingInit_settlesOnce_withTheFirstCall() async throws {
    let promise = Promise<Int>()
    #expect(promise.isPending)
    promise.resolve(1)
    promise.resolve(2)
    promise.reject(TestError(code: 3))
    promise.cancel()
    #expect(promise.result == 1)
    #expect(promise.error == nil)
    #expect(try await promise.value == 1)
  }

  @Test func pendingInit_rejectFirst_laterResolveIsIgnored() async throws {
    let promise = Promise<Int>()
    promise.reject(TestError(code: 1))
    promise.resolve(2)
    #expect(promise.result == nil)
    await #expect(throws: TestError(code: 1)) { try await promise.value }
  }

  @Test func body_settlesOnce_whateverItCallsNext() async throws {
    let promise = Promise<Int> { resolve, reject, status in
      resolve(1)
      reject(TestError(code: 2))
      resolve(3)
      status.cancel()
    }
    #expect(try await promise.value == 1)
    #expect(promise.result == 1)
  }

  @Test func body_throwing_rejectsThePromise() async throws {
    let promise = Promise<Int> { _, _, _ in throw TestError(code: 4) }
    await #expect(throws: TestError(code: 4)) { try await promise.value }
  }

  @Test func body_isLazy_itRunsWhenThePromiseIsFirstObserved() async throws {
    let queue = TestQueue()
    let runs = LockedValue(0)
    let promise = Promise<Int>(in: queue.context) { resolve, _, _ in
      runs.withLock { $0 += 1 }
      resolve(5)
    }
    queue.drain()
    #expect(runs.current == 0)
    #expect(promise.isPending)

    #expect(try await promise.value == 5)
    #expect(runs.current == 1)
  }

  @Test func body_runsOnce_howeverManyObservers() async throws {
    let runs = LockedValue(0)
    let promise = Promise<Int> { resolve, _, _ in
      runs.withLock { $0 += 1 }
      resolve(1)
    }
    let doubled = promise.then(in: .background) { $0 * 2 }
    let tripled = promise.then(in: .background) { $0 * 3 }
    #expect(try await doubled.value == 2)
    #expect(try await tripled.value == 3)
    #expect(try await promise.value == 1)
    #expect(runs.current == 1)
  }

  @Test func body_runsOnBackground_byDefault_orOnItsContext() async throws {
    let defaultLabel = try await Promise<String> { resolve, _, _ in resolve(currentQueueLabel) }.value
    #expect(defaultLabel == Context.background.label)

    let queue = TestQueue("body.queue")
    let customLabel = try await Promise<String>(in: queue.context) { resolve, _, _ in resolve(currentQueueLabel) }.value
    #expect(customLabel == "body.queue")
  }

  @Test func body_canSettleLater_fromAnotherThread() async throws {
    let promise = Promise<Int> { resolve, _, _ in
      DispatchQueue.global().async { resolve(9) }
    }
    #expect(try await promise.value == 9)
  }

  @Test func void_resolvesWithUnit_andPassesRejectionsOn() async throws {
    try await Promise(resolved: 3).void.value
    await #expect(throws: TestError(code: 1)) { try await Promise<Int>(rejected: TestError(code: 1)).void.value }
  }

  @Test func void_needsNoMainQueue() async throws {
    // Hydra's `void` hopped through the main queue; this one settles where its source settles.
    let source = Promise<Int>()
    let void = source.void
    source.resolve(1)
    #expect(!void.isPending)
  }

  @Test func unsettledChain_isReleasedWithItsLastReference() {
    // Hydra's observer graph kept such chains alive (malcommac/Hydra #27, #40): here nothing points back from
    // a derived promise to its source. (`timeout` is the exception: its timer keeps the chain from it on alive
    // until it settles, so that a waiter gets the timeout; see TimeTests.swift.)
    weak var weakHead: Promise<Int>?
    weak var weakTail: Promise<Void>?
    do {
      let head = Promise<Int>()
      let tail = head.then(in: .background) { $0 + 1 }.recover(in: .background) { _ in Promise(resolved: 0) }
        .catch(in: .background) { _ in }
      weakHead = head
      weakTail = tail
      #expect(weakHead != nil && weakTail != nil)
    }
    #expect(weakHead == nil)
    #expect(weakTail == nil)
  }

  @Test func name_isKept() {
    let promise = Promise<Int>()
    promise.name = "load"
    #expect(promise.name == "load")
  }

  @Test func settlingConcurrently_exactlyOneOutcomeReachesEachObserver() async throws {
    let count = 500
    let promises = (0..<count).map { _ in Promise<Int>() }
    let notifications = EventCounter()
    let outcomes = LockedValue([Int: Int]())
    for (index, promise) in promises.enumerated() {
      promise.whenSettledForTest { value in
        outcomes.withLock { $0[index, default: 0] += 1 }
        _ = value
        notifications.increment()
      }
    }
    DispatchQueue.concurrentPerform(iterations: count * 2) { iteration in
      let promise = promises[iteration / 2]
      if iteration.isMultiple(of: 2) { promise.resolve(iteration) } else { promise.reject(TestError(code: iteration)) }
    }
    await notifications.wait(for: count)
    #expect(outcomes.current.count == count)
    #expect(outcomes.current.values.allSatisfy { $0 == 1 })
  }
}

extension Promise {
  /// Calls `body` once with the value (nil for a rejection), on a background queue, through public API only.
  func whenSettledForTest(_ body: @escaping @Sendable (Value?) -> Void) {
    then(in: .background) { body($0) }.catch(in: .background) { _ in body(nil) }
  }
}
