import KatanaTestSupport
import KatanaTesting
import Testing

/// What a test reaches through the test store instead of `store.store`: sending state updaters, cancelling
/// by id, listeners and streams, skipping work in flight, and seeing what a non-exhaustive test skipped.
@Suite("TestStore: the store's surface, through the test store", .timeLimit(.failsafeMinutes(3)))
struct TestStoreSurfaceTests {
  @Test func sendUpdater_assertsItsChange_onceApplied() async throws {
    let store = makeStore()
    let sent = store.send(Increment(by: 2)) { $0.count = 2 }
    try await sent.value
    #expect(store.state.count == 2)
    await store.finish()
  }

  @Test func sendUpdater_wrongMutation_recordsOneIssue_atTheSendLine() async throws {
    let store = makeStore()
    let fragments = ["State change of Increment(by: 2)", "count: expected 3, actual 2"]
    let line = #line + 2
    await expectOneIssue(containing: fragments, atLine: line) {
      try await store.send(Increment(by: 2)) { $0.count = 3 }.value
    }
    await store.finish()
  }

  @Test(arguments: 0..<20)
  func theTestsItems_reachTheStoreInTheOrderTheTestSentThem(round: Int) async throws {
    let store = makeStore()
    store.send(Log(tag: "a")) { $0.log = ["a"] }
    store.send(Log(tag: "b")) { $0.log = ["a", "b"] }
    store.send(Increment()) { $0.count = 1 }
    store.send(Log(tag: "c")) { $0.log = ["a", "b", "c"] }
    await store.finish()
    #expect(store.state.log == ["a", "b", "c"])
  }

  @Test func cancelID_cancelsWhatRunsUnderIt() async throws {
    let store = makeStore()
    let started = Gate()
    let running = store.send(
      Script { context in
        try await context.run(id: "work") {
          started.open()
          try await waitForCancellation()
        }
      })
    await started.wait()
    store.cancel(id: "work")
    await #expect(throws: CancellationError.self) { try await running.value }
    await store.finish()
  }

  @Test func listenersAndStreams_seeTheCommittedChanges() async throws {
    let store = makeStore()
    let heard = Recorder<Int>()
    let unsubscribe = store.addListener { _, new in heard.append(new.count) }
    let states = store.values(of: \.count)
    let changes = store.changes()
    try await store.dispatch(Increment()) { $0.count = 1 }
    try await store.dispatch(Increment()) { $0.count = 2 }
    unsubscribe()
    #expect(heard.values == [1, 2])
    var iterator = states.makeAsyncIterator()
    #expect(await iterator.next() == 2)
    let stateStream = store.states()
    var stateIterator = stateStream.makeAsyncIterator()
    #expect(await stateIterator.next()?.count == 2)
    var changeIterator = changes.makeAsyncIterator()
    try await store.dispatch(Increment()) { $0.count = 3 }
    let change = await changeIterator.next()
    #expect(change?.old.count == 2 && change?.new.count == 3)
    await store.finish()
  }

  @Test func skipInFlightEffects_cancelsTheTestsWorkStillRunning_andWaitsForIt() async throws {
    let store = makeStore()
    let started = Gate()
    let cancelled = Gate()
    store.send(
      Script(name: "poll") { _ in
        started.open()
        try? await waitForCancellation()
        cancelled.open()
      })
    await started.wait()
    await store.skipInFlightEffects()
    #expect(cancelled.isOpen)
    await store.finish()
  }

  @Test func skipInFlightEffects_withNothingInFlight_recordsOneIssue_unlessNotStrict() async throws {
    let store = makeStore()
    await expectOneIssue(containing: ["skipInFlightEffects(): no side effect that the test started is in flight"]) {
      await store.skipInFlightEffects()
    }
    await store.skipInFlightEffects(strict: false)
    await store.finish()
  }

  // MARK: - Assertions on changes

  @Test func mutationAssertingAChangeThatDidNotHappen_saysExpectedTheStateToChange() async throws {
    let store = makeStore()
    await expectOneIssue(containing: [
      "Expected the state to change, but Increment(by: 0) left it unchanged", "count: expected 1, actual 0",
    ]) {
      try await store.dispatch(Increment(by: 0)) { $0.count = 1 }
    }
    try await store.dispatch(Increment(by: 0)) { $0.count = 0 }  // describes no change: fine
    await store.finish()
  }

  @Test func mutationAssertingAChangeThatDidNotHappen_nonExhaustive_saysExpectedTheStateToChange() async throws {
    let store = makeStore(exhaustivity: .off)
    await expectOneIssue(containing: ["Expected the state to change, but Increment(by: 0) left it unchanged"]) {
      try await store.dispatch(Increment(by: 0)) { $0.count = 1 }
    }
    await store.finish()
  }

  // MARK: - Showing skipped assertions

  @Test func nonExhaustive_showingSkippedAssertions_showsWhatItDidNotCheck_withoutFailing() async throws {
    let skipped = SkippedAssertions()
    let store = makeStore(exhaustivity: .off(showSkippedAssertions: true), skipped: skipped)
    try await store.dispatch(
      Script { context in
        try await context.dispatch(Log(tag: "a"))
        try await context.dispatch(Increment(by: 2))
        try await context.dispatch(Log(tag: "b"))
      })
    await store.receive(Increment.self) { $0.count = 2 }
    try await store.dispatch(SetFlag(value: true)) { $0.flag = true }
    let started = Gate()
    store.send(
      Script(name: "forever") { _ in
        started.open()
        try await waitForCancellation()
      })
    await started.wait()
    await store.skipInFlightEffects()
    await store.finish()
    #expect(
      skipped.all == [
        #"receive skipped 1 received item before Increment(by: 2): Log(tag: "a")."#,
        #"1 received item was not asserted before dispatching SetFlag(value: true): Log(tag: "b")."#,
        #"skipInFlightEffects() cancelled 1 item still in flight: Script(name: "forever", body: (Function))."#,
      ])
  }

  @Test func nonExhaustive_showingSkippedAssertions_showsTheFieldsAMutationLeftOut() async throws {
    let skipped = SkippedAssertions()
    let store = makeStore(exhaustivity: .off(showSkippedAssertions: true), skipped: skipped)
    try await store.dispatch(
      Script { context in
        try await context.dispatch(Log(tag: "a"))
        try await context.dispatch(Increment(by: 2))
      })
    await store.receive(Log.self)
    await store.receive(Increment.self) { $0.count = 2 }
    await store.finish()
    #expect(
      skipped.all == [
        """
        State change of received item Log(tag: "a"): the mutation did not assert every change. Not asserted:
          log.count: expected 0, actual 1
          log[0]: unexpected element "a"
        """
      ])
  }

  @Test func nonExhaustive_showingSkippedAssertions_atFinish_showsUnassertedItems() async throws {
    let skipped = SkippedAssertions()
    let store = makeStore(exhaustivity: .off(showSkippedAssertions: true), skipped: skipped)
    try await store.dispatch(LogAll(tags: ["a"]))
    await store.finish()
    #expect(skipped.all == [#"1 received item was not asserted at the end of the test: Log(tag: "a")."#])
  }
}
