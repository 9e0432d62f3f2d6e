import KatanaPromises
import KatanaTestSupport
import Testing

@Suite("recover", .timeLimit(.failsafeMinutes(3)))
struct RecoverTests {
  @Test func onRejection_settlesLikeTheReturnedPromise_onBackground() async throws {
    let label = LockedValue("")
    let recovered = Promise<Int>(rejected: TestError(code: 1)).recover { error in
      label.withLock { $0 = currentQueueLabel }
      return Promise(resolved: (error as? TestError)?.code ?? 0)
    }
    #expect(try await recovered.value == 1)
    #expect(label.current == Context.background.label)
  }

  @Test func onSuccess_passesTheValueOn() async throws {
    #expect(try await Promise(resolved: 3).recover { _ in Promise(resolved: 0) }.value == 3)
  }

  @Test func bodyThrowingOrRejecting_rejects() async throws {
    let thrown = Promise<Int>(rejected: TestError(code: 1)).recover { _ in throw TestError(code: 2) }
    await #expect(throws: TestError(code: 2)) { try await thrown.value }
    let rejected = Promise<Int>(rejected: TestError(code: 1)).recover { _ in Promise(rejected: TestError(code: 3)) }
    await #expect(throws: TestError(code: 3)) { try await rejected.value }
  }
}

@Suite("validate", .timeLimit(.failsafeMinutes(3)))
struct ValidateTests {
  @Test func true_passesTheValueOn_onBackground() async throws {
    let label = LockedValue("")
    let value = try await Promise(resolved: 4).validate { value in
      label.withLock { $0 = currentQueueLabel }
      return value > 0
    }.value
    #expect(value == 4)
    #expect(label.current == Context.background.label)
  }

  @Test func false_rejectsWithPromiseErrorRejected() async throws {
    await #expect(throws: PromiseError.rejected) { try await Promise(resolved: -1).validate { $0 > 0 }.value }
  }

  @Test func throwing_rejectsWithItsError() async throws {
    let validated = Promise(resolved: 1).validate { _ in throw TestError(code: 5) }
    await #expect(throws: TestError(code: 5)) { try await validated.value }
  }
}

@Suite("pass", .timeLimit(.failsafeMinutes(3)))
struct PassTests {
  @Test func promiseStep_resolving_passesTheOriginalValueOn() async throws {
    let seen = LockedValue<Int?>(nil)
    let label = LockedValue("")
    let value = try await Promise(resolved: 6).pass { value -> Promise<String> in
      seen.withLock { $0 = value }
      label.withLock { $0 = currentQueueLabel }
      return Promise(resolved: "ignored")
    }.value
    #expect(value == 6)
    #expect(seen.current == 6)
    #expect(label.current == Context.background.label)
  }

  @Test func promiseStep_rejecting_rejects() async throws {
    let passed = Promise(resolved: 6).pass { _ in Promise<String>(rejected: TestError(code: 7)) }
    await #expect(throws: TestError(code: 7)) { try await passed.value }
  }

  @Test func handler_passesTheValueOn_orRejectsByThrowing() async throws {
    let seen = LockedValue<Int?>(nil)
    let label = LockedValue("")
    let passed = Promise(resolved: 2).pass { value in
      seen.withLock { $0 = value }
      label.withLock { $0 = currentQueueLabel }
    }
    #expect(try await passed.value == 2)
    #expect(seen.current == 2)
    #expect(label.current == Context.background.label)
    let rejected = Promise(resolved: 2).pass { (_: Int) throws in throw TestError(code: 8) }
    await #expect(throws: TestError(code: 8)) { try await rejected.value }
  }
}
