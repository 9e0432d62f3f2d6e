import Dispatch
import KatanaPromises
import KatanaTestSupport
import Testing

// `timeout` and `defer` use real time, by Hydra's design. These tests use tiny delays only where the outcome
// cannot depend on scheduling, and hour-long ones where the timer must not fire during the test.

@Suite("timeout", .timeLimit(.failsafeMinutes(3)))
struct TimeoutTests {
  @Test func sourceNeverSettling_rejectsWithPromiseErrorTimeout() async throws {
    let timedOut = Promise<Int>().timeout(timeout: 0.01)
    await #expect(throws: PromiseError.timeout) { try await timedOut.value }
  }

  @Test func sourceNeverSettling_rejectsWithTheGivenError() async throws {
    let timedOut = Promise<Int>().timeout(timeout: 0.01, error: TestError(code: 1))
    await #expect(throws: TestError(code: 1)) { try await timedOut.value }
  }

  @Test func sourceSettlingFirst_settlesLikeTheSource() async throws {
    #expect(try await Promise(resolved: 2).timeout(timeout: 3600).value == 2)
    let rejected = Promise<Int>(rejected: TestError(code: 3)).timeout(timeout: 3600)
    await #expect(throws: TestError(code: 3)) { try await rejected.value }
  }

  @Test func expiring_doesNotCancelTheSource() async throws {
    let source = Promise<Int>()
    let observedLater = source.then(in: .background) { $0 * 2 }
    await #expect(throws: PromiseError.timeout) { try await source.timeout(timeout: 0.01).value }
    #expect(source.isPending)
    source.resolve(21)
    #expect(try await source.value == 21)
    #expect(try await observedLater.value == 42)
  }

  @Test func notANumber_rejectsWithInvalidInput() async throws {
    await #expect(throws: PromiseError.invalidInput) { try await Promise(resolved: 1).timeout(timeout: .nan).value }
  }

  /// Nothing but the timer holds the timed-out promise here: its source is released unsettled (its body
  /// dropped the resolvers), and the waiter holds only the promise derived from it.
  @Test func sourceReleasedUnsettled_aWaiterOnALaterStepGetsTheTimeout() async throws {
    let later = failsafe(
      Promise<Int>(in: .background) { _, _, _ in }.timeout(timeout: 0.01).then(in: .background) { $0 })
    await #expect(throws: PromiseError.timeout) { try await later.value }
  }

  /// Once the promise settled, the timer lets it go.
  @Test func settledBeforeTheTimer_isNotKeptAliveByIt() async throws {
    weak var released: Promise<Int>?
    do {
      let timedOut = Promise(resolved: 4).timeout(timeout: 3600)
      #expect(try await timedOut.value == 4)
      released = timedOut
    }
    #expect(released == nil)
  }
}

@Suite("defer", .timeLimit(.failsafeMinutes(3)))
struct DeferTests {
  @Test func resolvesWithTheValue_afterTheDelay() async throws {
    let source = Promise(resolved: 5)
    let deferred = source.defer(0.01)
    #expect(deferred !== source)
    #expect(try await deferred.value == 5)
  }

  @Test func rejection_passesOnWithoutWaiting() async throws {
    let deferred = Promise<Int>(rejected: TestError(code: 1)).defer(3600)
    await #expect(throws: TestError(code: 1)) { try await deferred.value }
  }

  @Test func zeroOrNegative_returnsTheSamePromise() {
    let source = Promise(resolved: 1)
    #expect(source.defer(0) === source)
    #expect(source.defer(-1) === source)
  }

  @Test func hugeDelays_doNotTrap() {
    let source = Promise(resolved: 1)
    _ = source.defer(.infinity)
    _ = source.defer(1e300)
    _ = Promise<Int>().timeout(timeout: .infinity)
  }

  @Test func notANumber_rejectsWithInvalidInput() async throws {
    await #expect(throws: PromiseError.invalidInput) { try await Promise(resolved: 1).defer(.nan).value }
  }
}
