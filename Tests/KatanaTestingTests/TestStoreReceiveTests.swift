import KatanaTestSupport
import KatanaTesting
import Testing

@Suite("TestStore: receive", .timeLimit(.failsafeMinutes(3)))
struct TestStoreReceiveTests {
  @Test func receive_inOrder_withTheirChanges_passes() async throws {
    let store = makeStore()
    try await store.dispatch(LogAll(tags: ["a", "b"]))
    await store.receive(Log.self) { $0.log = ["a"] }
    await store.receive(Log.self) { $0.log = ["a", "b"] }
    await store.finish()
  }

  /// `SetField`, the one updater that sets any field, is received like any `Equatable` updater: two are equal when
  /// they set the same field to equal values.
  @Test func receive_aFieldSetter_byItsFieldAndValue() async throws {
    let store = makeStore()
    try await store.dispatch(
      Script { context in
        try await context.dispatch(SetField(\.log, ["set"]))
        try await context.dispatch(SetField(\.count, 2))
      })
    await store.receive(SetField(\CounterState.log, ["set"])) { $0.log = ["set"] }
    await store.receive(SetField(\CounterState.count, 2)) { $0.count = 2 }
    await store.finish()
  }

  @Test func receive_returnsTheItem() async throws {
    let store = makeStore()
    try await store.dispatch(LogAll(tags: ["a"]))
    let item = await store.receive(Log.self) { $0.log = ["a"] }
    #expect(item == Log(tag: "a"))
    await store.finish()
  }

  @Test func receive_predicateAndEquatableForms() async throws {
    let store = makeStore()
    try await store.dispatch(LogAll(tags: ["a", "b", "c"]))
    await store.receive(Log.self, where: { $0.tag == "a" }, { $0.log = ["a"] })
    await store.receive(Log(tag: "b")) { $0.log = ["a", "b"] }
    let item = await store.receive(where: { ($0 as? Log)?.tag == "c" }, { $0.log = ["a", "b", "c"] })
    #expect((item as? Log)?.tag == "c")
    await store.finish()
  }

  @Test func receive_doesNotCountTheTestsOwnItem_butCountsWhatItsSideEffectDispatches() async throws {
    let store = makeStore(recordsDispatches: true)
    try await store.dispatch(Log(tag: "own")) { $0.log = ["own"] }
    try await store.dispatch(
      Script { context in
        try await context.dispatch(Log(tag: "nested"))
        try await context.dispatch(LogAll(tags: ["deeper"]))
      })
    await store.receive(Log(tag: "nested")) { $0.log = ["own", "nested"] }
    await store.receive(LogAll.self)
    await store.receive(Log(tag: "deeper")) { $0.log = ["own", "nested", "deeper"] }
    await store.finish()
    #expect(store.dispatchLog.map(\.typeName) == ["Log", "Script", "Log", "LogAll", "Log"])
    #expect(store.dispatchLog.map(\.origin) == [.test, .test, .received, .received, .received])
  }

  @Test func dispatchLog_isEmptyUnlessEnabled() async throws {
    let store = makeStore()
    try await store.dispatch(LogAll(tags: ["a"]))
    await store.receive(Log.self) { $0.log = ["a"] }
    #expect(store.dispatchLog.isEmpty)
    await store.finish()
  }

  @Test func receive_waitsForASentSideEffect_withoutSleeping() async throws {
    let store = makeStore()
    let gate = Gate()
    let started = Gate()
    store.send(WaitForGate(gate: gate, started: started))
    await started.wait()
    gate.open()  // the test drives what the side effect waits for: it can run now
    await store.receive(Log.self) { $0.log = ["after gate"] }
    await store.finish()
  }

  @Test func receive_itemsOfConcurrentSideEffects_areReceived_notTakenForTheTestsItem() async throws {
    let store = makeStore()
    let gate = Gate()
    let started = Gate()
    let background = store.send(WaitForGate(gate: gate, started: started, tag: "background"))
    await started.wait()
    try await store.dispatch(
      Script { context in
        gate.open()
        try await background.value
        try await context.dispatch(Log(tag: "foreground"))
      })
    await store.receive(Log(tag: "background")) { $0.log = ["background"] }
    await store.receive(Log(tag: "foreground")) { $0.log = ["background", "foreground"] }
    await store.finish()
  }

  @Test func receive_itemSubstitutedByAnInterceptor_isReceived() async throws {
    // An interceptor turns `SetFlag` into a side effect that logs: the store dispatches that as a new item.
    let substituting: StoreInterceptor = { _ in
      { next in
        { item in
          if let flag = item as? SetFlag, flag.value {
            try await next(LogAll(tags: ["substituted"]))
          } else {
            try await next(item)
          }
        }
      }
    }
    let store = makeStore(interceptors: [substituting])
    try await store.dispatch(SetFlag(value: true))
    await store.receive(LogAll.self)
    await store.receive(Log.self) { $0.log = ["substituted"] }
    await store.finish()
  }

  @Test func receive_sideEffectWithAMutation_recordsOneIssue() async throws {
    let store = makeStore()
    try await store.dispatch(Script { try await $0.dispatch(LogAll(tags: [])) })
    await expectOneIssue(containing: ["is a side effect", "count: expected 1, actual 0"]) {
      await store.receive(LogAll.self) { $0.count = 1 }
    }
    await store.finish()
  }

  // MARK: - Wrong expectations: exactly one issue each

  @Test func receive_whenNothingComes_recordsOneIssue_once_theStoreIsIdle() async throws {
    let store = makeStore()
    try await store.dispatch(LogAll(tags: ["a"]))
    await store.receive(Log.self) { $0.log = ["a"] }
    let line = #line + 2
    await expectOneIssue(containing: ["Expected to receive Increment", "nothing was received"], atLine: line) {
      await store.receive(Increment.self) { $0.count = 1 }
    }
    await store.finish()
  }

  @Test func receive_wrongMutation_recordsOneIssue() async throws {
    let store = makeStore()
    try await store.dispatch(LogAll(tags: ["a"]))
    await expectOneIssue(containing: [
      "State change of received item Log(tag: \"a\")", #"log[0]: expected "b", actual "a""#,
    ]) {
      await store.receive(Log.self) { $0.log = ["b"] }
    }
    await store.finish()
  }

  @Test func receive_wrongOrder_recordsOneIssue() async throws {
    let store = makeStore()
    try await store.dispatch(
      Script { context in
        try await context.dispatch(Log(tag: "first"))
        try await context.dispatch(Increment())
      })
    await expectOneIssue(containing: ["Received Increment(by: 1) out of order", #"Log(tag: "first")"#]) {
      await store.receive(Increment.self) { $0.count = 1 }
      await store.receive(Log.self) { $0.log = ["first"] }
    }
    await store.finish()
  }

  @Test func receive_wrongType_recordsOneIssue_andConsumesTheItem() async throws {
    let store = makeStore()
    try await store.dispatch(LogAll(tags: ["a"]))
    await expectOneIssue(containing: ["Expected to receive Increment, but received Log(tag: \"a\")"]) {
      await store.receive(Increment.self)
    }
    await store.finish()
  }

  @Test func unassertedReceivedItem_atFinish_recordsOneIssue() async throws {
    let store = makeStore()
    try await store.dispatch(LogAll(tags: ["a", "b"]))
    await store.receive(Log.self) { $0.log = ["a"] }
    let fragments = ["1 received item was not asserted at the end of the test", #"Log(tag: "b")"#]
    let line = #line + 2
    await expectOneIssue(containing: fragments, atLine: line) {
      await store.finish()
    }
  }

  @Test func unassertedReceivedItem_beforeTheNextDispatch_recordsOneIssue() async throws {
    let store = makeStore()
    try await store.dispatch(LogAll(tags: ["a"]))
    await expectOneIssue(containing: ["not asserted before dispatching Increment(by: 1)", #"Log(tag: "a")"#]) {
      try await store.dispatch(Increment()) { $0.count = 1 }
    }
    await store.finish()
  }

  @Test func unassertedReceivedItem_whenTheStoreIsReleased_recordsOneIssue_atTheCreationLine() async throws {
    let line = #line + 2
    await expectOneIssue(containing: ["not asserted when the test store was released"], atLine: line) {
      let store = makeStore()
      try await store.dispatch(LogAll(tags: ["a"]))
    }
  }

  @Test func skipReceivedItems_dropsThem() async throws {
    let store = makeStore()
    try await store.dispatch(LogAll(tags: ["a", "b"]))
    store.skipReceivedItems()
    try await store.dispatch(Increment()) { $0.count = 1 }
    await store.finish()
  }
}

@Suite("TestStore: received-item bookkeeping", .timeLimit(.failsafeMinutes(3)))
struct TestStoreReceivedBookkeepingTests {
  @Test func anyDispatchRejectedForItsStateType_isNotAReceivedItem() async throws {
    let store = makeStore()
    try await store.dispatch(
      Script { context in
        await #expect(throws: StoreError.self) { _ = try await context.anyDispatch(SetOther()) }
        try await context.dispatch(Log(tag: "after"))
      })
    await store.receive(Log.self) { $0.log = ["after"] }
    await store.finish()
  }

  @Test func receiveWaitingForAnUpdaterThatTheStoreRejects_skipsIt() async throws {
    let store = makeStore()
    let gate = Gate()
    let started = Gate()
    store.send(
      Script { context in
        started.open()
        await gate.wait()
        _ = try? await context.anyDispatch(SetOther())
        try await context.dispatch(Log(tag: "after"))
      })
    await started.wait()
    gate.open()  // the test drives what the side effect waits for: it can run now
    await store.receive(where: { $0 is any AnyStateUpdater }, { $0.log = ["after"] })
    await store.finish()
  }

  @Test func receiveOutOfOrder_reportsTheEarlierItemsOnce_notAgainAtFinish() async throws {
    let store = makeStore()
    try await store.dispatch(
      Script { context in
        try await context.dispatch(Log(tag: "first"))
        try await context.dispatch(Increment())
      })
    await expectOneIssue(containing: [#"Received Increment(by: 1) out of order: Log(tag: "first") was received"#]) {
      await store.receive(Increment.self) { $0.count = 1 }
      await store.finish()
    }
  }

  @Test func receiveOutOfOrder_theEarlierItemCanStillBeAssertedAfterwards_withoutAnotherIssue() async throws {
    let store = makeStore()
    try await store.dispatch(
      Script { context in
        try await context.dispatch(Log(tag: "first"))
        try await context.dispatch(Log(tag: "second"))
        try await context.dispatch(Increment())
      })
    await expectOneIssue(containing: [#"Log(tag: "first"), Log(tag: "second") were received before it"#]) {
      await store.receive(Increment.self) { $0.count = 1 }
      await store.receive(Log(tag: "second")) { $0.log = ["first", "second"] }
      await store.finish()
    }
  }
}
