import Dispatch
import KatanaPromises
import KatanaTestSupport
import Testing

/// A body that fails with `TestError(code: attempt)` until `succeedOn`, and counts its runs.
final class FlakyBody: Sendable {
  let runs = LockedValue(0)
  let succeedOn: Int?

  init(succeedOn: Int? = nil) { self.succeedOn = succeedOn }

  func promise(in context: Context? = nil) -> Promise<Int> {
    Promise(in: context) { resolve, reject, _ in
      let attempt = self.runs.withLock { runs -> Int in
        runs += 1
        return runs
      }
      if attempt == self.succeedOn { resolve(attempt) } else { reject(TestError(code: attempt)) }
    }
  }
}

@Suite("retry", .timeLimit(.failsafeMinutes(3)))
struct RetryTests {
  @Test func attempts_countTheFirstTry_andTheLastErrorWins() async throws {
    let body = FlakyBody()
    await #expect(throws: TestError(code: 3)) { try await body.promise().retry(3).value }
    #expect(body.runs.current == 3)
  }

  @Test func defaultAttempts_areThree() async throws {
    let body = FlakyBody()
    await #expect(throws: TestError(code: 3)) { try await body.promise().retry().value }
    #expect(body.runs.current == 3)
  }

  @Test func laterSuccess_rerunsTheBody_andResolves() async throws {
    let body = FlakyBody(succeedOn: 3)
    let source = body.promise()
    #expect(try await source.retry(5).value == 3)
    #expect(body.runs.current == 3)
    #expect(source.result == 3)
  }

  @Test func oneAttempt_doesNotRetry() async throws {
    let body = FlakyBody()
    await #expect(throws: TestError(code: 1)) { try await body.promise().retry(1).value }
    #expect(body.runs.current == 1)
  }

  @Test func fewerThanOneAttempt_rejectsWithInvalidInput() async throws {
    await #expect(throws: PromiseError.invalidInput) { try await FlakyBody().promise().retry(0).value }
    await #expect(throws: PromiseError.invalidInput) { try await FlakyBody().promise().retryWhen(-1).value }
  }

  @Test func condition_getsTheRemainingAttemptsAndError_onTheBodyContext() async throws {
    let body = FlakyBody()
    let queue = TestQueue("retry.queue")
    let calls = Recorder<String>()
    let retried = body.promise(in: queue.context).retry(3) { remaining, error in
      calls.append("\(remaining):\((error as? TestError)?.code ?? 0):\(currentQueueLabel)")
      return true
    }
    await #expect(throws: TestError(code: 3)) { try await retried.value }
    #expect(calls.values == ["2:1:retry.queue", "1:2:retry.queue"])
  }

  @Test func condition_returningFalseOrThrowing_stopsWithTheSourceError() async throws {
    let stopped = FlakyBody()
    await #expect(throws: TestError(code: 1)) { try await stopped.promise().retry(5) { _, _ in false }.value }
    #expect(stopped.runs.current == 1)

    let threw = FlakyBody()
    await #expect(throws: TestError(code: 2)) {
      try await threw.promise().retry(5) { remaining, _ in
        if remaining < 4 { throw TestError(code: 99) }
        return true
      }.value
    }
    #expect(threw.runs.current == 2)
  }

  @Test func delay_stillRetries_andKeepsTheOutcome() async throws {
    let body = FlakyBody(succeedOn: 2)
    #expect(try await body.promise().retry(3, delay: 0.01).value == 2)
    #expect(body.runs.current == 2)
  }

  @Test func derivedPromise_reappliesTheOperator_withoutRerunningItsSource() async throws {
    let sourceRuns = LockedValue(0)
    let source = Promise<Int> { resolve, _, _ in
      sourceRuns.withLock { $0 += 1 }
      resolve(1)
    }
    let mapRuns = LockedValue(0)
    let mapped = source.then(in: .background) { value -> Int in
      let run = mapRuns.withLock { runs -> Int in
        runs += 1
        return runs
      }
      if run < 3 { throw TestError(code: run) }
      return value + run
    }
    #expect(try await mapped.retry(3).value == 4)
    #expect(mapRuns.current == 3)
    #expect(sourceRuns.current == 1)
  }

  @Test func promiseWithoutBody_cannotRunAgain_rejectsWithItsError() async throws {
    let source = Promise<Int>()
    let retried = source.retry(3)
    source.reject(TestError(code: 1))
    await #expect(throws: TestError(code: 1)) { try await retried.value }
  }

  @Test func lateCallFromAnEarlierRun_doesNotSettleTheNextRun() async throws {
    let firstResolve = LockedValue<Promise<Int>.Resolved?>(nil)
    let secondResolve = LockedValue<Promise<Int>.Resolved?>(nil)
    let secondStarted = Gate()
    let runs = LockedValue(0)
    let source = Promise<Int> { resolve, reject, _ in
      let run = runs.withLock { runs -> Int in
        runs += 1
        return runs
      }
      if run == 1 {
        firstResolve.withLock { $0 = resolve }
        reject(TestError(code: 1))
      } else {
        secondResolve.withLock { $0 = resolve }
        secondStarted.open()
      }
    }
    let retried = source.retry(2)
    await secondStarted.wait()
    firstResolve.current?(111)
    #expect(source.isPending)
    secondResolve.current?(222)
    #expect(try await retried.value == 222)
  }

  @Test func cancellingTheSource_cancelsTheRetry() async throws {
    let source = Promise<Int>()
    let retried = source.retry(3)
    source.cancel()
    await #expect(throws: CancellationError.self) { try await retried.value }
  }

  @Test func asyncClosurePromise_runsTheClosureAgain() async throws {
    let runs = LockedValue(0)
    let source = Promise<Int> {
      let run = runs.withLock { runs -> Int in
        runs += 1
        return runs
      }
      if run < 2 { throw TestError(code: run) }
      return run
    }
    #expect(try await source.retry(3).value == 2)
    #expect(runs.current == 2)
  }
}

@Suite("retryWhen", .timeLimit(.failsafeMinutes(3)))
struct RetryWhenTests {
  @Test func conditionResolvingTrue_retries_untilAttemptsAreUsedUp() async throws {
    let body = FlakyBody()
    let remainings = Recorder<Int>()
    let retried = body.promise().retryWhen(3) { remaining, _ in
      remainings.append(remaining)
      return Promise { resolve, _, _ in resolve(true) }
    }
    await #expect(throws: TestError(code: 3)) { try await retried.value }
    #expect(body.runs.current == 3)
    #expect(remainings.values == [2, 1])
  }

  @Test func defaultCondition_retries() async throws {
    let body = FlakyBody(succeedOn: 2)
    #expect(try await body.promise().retryWhen().value == 2)
  }

  @Test func conditionResolvingFalse_rejectingOrCancelled_stopsWithTheSourceError() async throws {
    let no = FlakyBody()
    await #expect(throws: TestError(code: 1)) {
      try await no.promise().retryWhen(3) { _, _ in Promise(resolved: false) }.value
    }
    let failed = FlakyBody()
    await #expect(throws: TestError(code: 1)) {
      try await failed.promise().retryWhen(3) { _, _ in Promise(rejected: TestError(code: 50)) }.value
    }
    let cancelled = FlakyBody()
    await #expect(throws: TestError(code: 1)) {
      try await cancelled.promise().retryWhen(3) { _, _ in
        let condition = Promise<Bool>()
        condition.cancel()
        return condition
      }.value
    }
    #expect(no.runs.current == 1 && failed.runs.current == 1 && cancelled.runs.current == 1)
  }
}
