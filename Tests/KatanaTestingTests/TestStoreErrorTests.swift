import KatanaTestSupport
import KatanaTesting
import Testing

/// Errors that nobody looks at fail the test: a side effect the test sent and never awaited, and a side
/// effect handed to the store with `context.send`. Cancellation is not an error here.
@Suite("TestStore: errors nobody looked at", .timeLimit(.failsafeMinutes(3)))
struct TestStoreErrorTests {
  @Test func sentSideEffectThatThrows_neverAwaited_recordsOneIssue_atTheSendLine() async throws {
    let store = makeStore()
    let line = #line + 1
    store.send(Fail(code: 1))
    await expectOneIssue(
      containing: ["Fail(code: 1) threw TestError(code: 1), and the test never looked at its outcome"], atLine: line
    ) {
      await store.finish()
    }
  }

  @Test func sentSideEffectThatThrows_neverAwaited_isReportedWhenTheTestStoreIsReleased() async throws {
    await expectOneIssue(containing: ["Fail(code: 2) threw TestError(code: 2)"]) {
      let store = makeStore()
      store.send(Fail(code: 2))
      await store.waitUntilIdle()  // it has failed; nobody looks at the outcome
    }
  }

  @Test func sideEffectSentBySideEffect_thatThrows_recordsOneIssue_atFinish() async throws {
    let store = makeStore()
    try await store.dispatch(Script { context in context.send(Fail(code: 3)) })
    await store.receive(Fail.self)
    let fragments = [
      "Fail(code: 3) threw TestError(code: 3) in a task the store owns", "receiveError(from: Fail.self)",
    ]
    let line = #line + 2
    await expectOneIssue(containing: fragments, atLine: line) {
      await store.finish()
    }
  }

  @Test func sideEffectSentBySideEffect_thatThrows_assertedWithReceiveError_passes() async throws {
    let store = makeStore()
    try await store.dispatch(Script { context in context.send(Fail(code: 4)) })
    await store.receive(Fail.self)
    let error = await store.receiveError(from: Fail.self)
    #expect(error as? TestError == TestError(code: 4))
    await store.finish()
  }

  @Test func receiveError_whenNoneComes_recordsOneIssue() async throws {
    let store = makeStore()
    try await store.dispatch(Script { context in context.send(LogAll(tags: [])) })
    await store.receive(LogAll.self)
    await expectOneIssue(containing: [
      "Expected an error from Fail, but none was thrown, and the store has no work in flight"
    ]) {
      await store.receiveError(from: Fail.self)
    }
    await store.finish()
  }

  @Test func sentSideEffectThatThrows_awaited_isTheTestsBusiness() async throws {
    let store = makeStore()
    let failing = store.send(Fail(code: 5))
    await #expect(throws: TestError(code: 5)) { try await failing.value }
    let ignored = store.send(Fail(code: 6))
    await ignored.finish()
    await store.finish()
  }

  @Test func cancelledSideEffects_areNotErrors() async throws {
    let store = makeStore()
    let started = Gate()
    let innerStarted = Gate()
    let sent = store.send(
      Script { context in
        context.send(
          Script(name: "inner") { context in
            try await context.run(id: "inner") {
              innerStarted.open()
              try await waitForCancellation()
            }
          })
        started.open()
        try await waitForCancellation()
      })
    await started.wait()
    await innerStarted.wait()
    sent.cancel()
    store.cancel(id: "inner")
    await store.receive(Script.self)
    await store.finish()
  }
}
