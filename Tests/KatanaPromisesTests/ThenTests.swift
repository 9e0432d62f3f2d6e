import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import Testing

@Suite("then: map, flat-map, tap", .timeLimit(.failsafeMinutes(3)))
struct ThenTests {
  @Test func map_transformsTheValue() async throws {
    #expect(try await Promise(resolved: 2).then { $0 * 10 }.value == 20)
  }

  @Test func map_runsOnMain_byDefault() async throws {
    let label = try await Promise(resolved: 1).then { _ in currentQueueLabel }.value
    #expect(label == Context.main.label)
  }

  @Test func map_runsOnTheGivenContext() async throws {
    let queue = TestQueue("then.queue")
    let label = try await Promise(resolved: 1).then(in: queue.context) { _ in currentQueueLabel }.value
    #expect(label == "then.queue")
  }

  @Test func map_throwing_rejectsWithThatError() async throws {
    let mapped = Promise(resolved: 1).then(in: .background) { (_: Int) -> Int in throw TestError(code: 5) }
    await #expect(throws: TestError(code: 5)) { try await mapped.value }
  }

  @Test func map_onRejection_skipsTheBody_andPassesTheErrorOn() async throws {
    let queue = TestQueue()
    let calls = LockedValue(0)
    let mapped = Promise<Int>(rejected: TestError(code: 1)).then(in: queue.context) { value -> Int in
      calls.withLock { $0 += 1 }
      return value
    }
    await #expect(throws: TestError(code: 1)) { try await mapped.value }
    queue.drain()
    #expect(calls.current == 0)
  }

  @Test func flatMap_settlesLikeThePromiseTheBodyReturns_andStartsItsBody() async throws {
    let inner = LockedValue(0)
    let chained = Promise(resolved: 4).then(in: .background) { value in
      Promise<Int> { resolve, _, _ in
        inner.withLock { $0 += 1 }
        resolve(value + 1)
      }
    }
    #expect(try await chained.value == 5)
    #expect(inner.current == 1)

    let failing = Promise(resolved: 4).then(in: .background) { _ in Promise<Int>(rejected: TestError(code: 6)) }
    await #expect(throws: TestError(code: 6)) { try await failing.value }
  }

  @Test func flatMap_runsOnMain_byDefault() async throws {
    let label = try await Promise(resolved: 1).then { _ in Promise(resolved: currentQueueLabel) }.value
    #expect(label == Context.main.label)
  }

  @Test func tap_passesTheValueOn_andSeesIt() async throws {
    let seen = LockedValue<Int?>(nil)
    let tapped = Promise(resolved: 8).then { value in seen.withLock { $0 = value } }
    #expect(try await tapped.value == 8)
    #expect(seen.current == 8)
  }

  @Test func tap_runsOnMain_byDefault_andCanRejectByThrowing() async throws {
    let label = LockedValue("")
    _ = try await Promise(resolved: 1).then { (_: Int) in label.withLock { $0 = currentQueueLabel } }.value
    #expect(label.current == Context.main.label)

    let rejected = Promise(resolved: 1).then { (_: Int) throws in throw TestError(code: 2) }
    await #expect(throws: TestError(code: 2)) { try await rejected.value }
  }

  @Test func chain_runsStepsInOrder() async throws {
    let log = Recorder<String>()
    let result = try await Promise(resolved: 1)
      .then { value in log.append("a\(value)") }
      .then(in: .background) { $0 + 1 }
      .then { value in log.append("b\(value)") }
      .then(in: .utility) { Promise(resolved: $0 * 10) }
      .value
    #expect(result == 20)
    #expect(log.values == ["a1", "b2"])
  }

  @Test func rejectionThroughALongChain_doesNotGrowTheStack() async throws {
    // Unhandled outcomes pass along a chain without a queue hop; a deep chain must still not recurse once
    // per promise. The rejection starts on a thread with a small stack.
    let head = Promise<Int>()
    var tail = head
    for _ in 0..<50_000 {
      tail = tail.then(in: .background) { $0 + 1 }
    }
    let thread = Thread { head.reject(TestError(code: 1)) }
    thread.stackSize = 256 * 1024
    thread.start()
    let last = tail
    await #expect(throws: TestError(code: 1)) { try await last.value }
  }
}
