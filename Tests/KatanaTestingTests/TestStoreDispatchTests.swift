import KatanaTestSupport
import KatanaTesting
import Testing

/// A state whose `==` is false even for two identical values (a NaN field): reflection then finds no
/// difference to show.
struct MeasurementState: State, Equatable {
  var reading = Double.nan
  var count = 0
}

struct CountMeasurement: StateUpdater {
  func updateState(_ state: inout MeasurementState) { state.count += 1 }
}

@Suite("TestStore: dispatch", .timeLimit(.failsafeMinutes(3)))
struct TestStoreDispatchTests {
  @Test func dispatch_whenMutationMatches_passesAndCommits() async throws {
    let store = makeStore()
    try await store.dispatch(Increment(by: 2)) { $0.count = 2 }
    try await store.dispatch(Log(tag: "a")) { $0.log = ["a"] }
    #expect(store.state == CounterState(count: 2, log: ["a"]))
    await store.finish()
  }

  @Test func dispatch_whenMutationIsWrong_recordsOneIssueWithAFieldDiff_atTheCallersLine() async throws {
    let store = makeStore()
    let line = #line + 2
    await expectOneIssue(containing: ["Increment(by: 2)", "count: expected 3, actual 2"], atLine: line) {
      try await store.dispatch(Increment(by: 2)) { $0.count = 3 }
    }
    #expect(store.state.count == 2)
    await store.finish()
  }

  @Test func dispatch_wrongMutation_messageIsTheExplanation_thenOneIndentedLinePerDifference() async throws {
    let store = makeStore(CounterState(count: 1))
    let issues = IssueLog()
    await withExpectedIssueOutputCaptured {
      try await withKnownIssue(
        "the mutation is wrong on purpose",
        {
          try await store.dispatch(Log(tag: "a")) {
            $0.count = 2
            $0.log = ["b"]
          }
        }, matching: issues.matcher())
    }
    #expect(
      issues.all == [
        """
        State change of Log(tag: "a") does not match the expectation (expected: the state before it, changed by \
        your mutation). Differences:
          count: expected 2, actual 1
          log[0]: expected "b", actual "a"
        """
      ])
    await store.finish()
  }

  @Test func dispatch_whenTheStatesDifferOnlyByEquality_showsBothStates() async throws {
    let store = TestStore<MeasurementState, CounterDependencies>(initialState: MeasurementState())
    let issues = IssueLog()
    await withExpectedIssueOutputCaptured {
      try await withKnownIssue(
        "NaN is not equal to itself", { try await store.dispatch(CountMeasurement()) { $0.count = 1 } },
        matching: issues.matcher())
    }
    #expect(
      issues.all == [
        """
        State change of CountMeasurement() does not match the expectation (expected: the state before it, changed \
        by your mutation). Differences:
          the states are not equal (==), but reflection shows no difference:
          expected MeasurementState(reading: nan, count: 1)
          actual   MeasurementState(reading: nan, count: 1)
        """
      ])
    await store.finish()
  }

  @Test func dispatch_whenAFieldIsForgotten_recordsOneIssue() async throws {
    let store = makeStore()
    await expectOneIssue(containing: ["log.count: expected 0, actual 1", #"log[0]: unexpected element "a""#]) {
      try await store.dispatch(Log(tag: "a"))
    }
    await store.finish()
  }

  @Test func dispatch_comparesWithTheStateBeforeTheUpdater_notWithTheInitialState() async throws {
    let store = makeStore(CounterState(count: 10))
    try await store.dispatch(Increment()) { $0.count = 11 }
    try await store.dispatch(Increment()) { $0.count += 1 }
    #expect(store.state.count == 12)
    await store.finish()
  }

  @Test func dispatch_whenTheMutationThrows_recordsOneIssue() async throws {
    let store = makeStore()
    await expectOneIssue(containing: ["mutation closure for Increment(by: 1) threw", "TestError(code: 7)"]) {
      try await store.dispatch(Increment()) { _ in throw TestError(code: 7) }
    }
    await store.finish()
  }

  @Test func dispatch_returningSideEffect_returnsItsValue() async throws {
    let store = makeStore()
    let value = try await store.dispatch(
      ReturningScript { context in
        try await context.dispatch(Increment(by: 5))
        return context.getState().count * 2
      })
    #expect(value == 10)
    await store.receive(Increment.self) { $0.count = 5 }
    await store.finish()
  }

  @Test func dispatch_sideEffectError_reachesTheTestUnchanged() async throws {
    let store = makeStore()
    await #expect(throws: TestError(code: 3)) { try await store.dispatch(Fail(code: 3)) }
    await store.finish()
  }

  @Test func dispatch_usesTheDependenciesOfTheTest() async throws {
    let store = CounterTestStore(initialState: CounterState(), dependencies: CounterDependencies(step: 7))
    try await store.dispatch(IncrementByStep())
    await store.receive(Increment.self) { $0.count = 7 }
    #expect(store.dependencies.step == 7)
    await store.finish()
  }

  @Test func dispatch_dependencyInitializerGetsTheStoresDispatch() async throws {
    let store = CounterTestStore(initialState: CounterState()) { dispatch, _ in
      CounterDependencies(dispatch: dispatch, getState: { CounterState() })
    }
    let dispatch = try #require(store.dependencies.dispatch)
    _ = try await dispatch(Log(tag: "from the container"))
    await store.receive(Log(tag: "from the container")) { $0.log = ["from the container"] }
    await store.finish()
  }

  @Test func dispatch_goesThroughTheStoresInterceptors_afterTheTestStores() async throws {
    let seen = Recorder<String>()
    let interceptor: StoreInterceptor = { _ in
      { next in
        { item in
          seen.append(String(describing: type(of: item)))
          try await next(item)
        }
      }
    }
    let store = makeStore(interceptors: [interceptor])
    try await store.dispatch(LogAll(tags: ["x"]))
    await store.receive(Log.self) { $0.log = ["x"] }
    #expect(seen.values == ["LogAll", "Log"])
    await store.finish()
  }

  @Test func dispatch_whenAnInterceptorRejects_rethrowsWithoutAsserting() async throws {
    let rejecting: StoreInterceptor = { _ in
      { next in
        { item in
          if item is Increment { throw TestError(code: 9) }
          try await next(item)
        }
      }
    }
    let store = makeStore(interceptors: [rejecting])
    await #expect(throws: TestError(code: 9)) { try await store.dispatch(Increment()) { $0.count = 1 } }
    #expect(store.state.count == 0)
    await store.finish()
  }

  @Test func state_beforeTheStoreStarts_isTheInitialState() async throws {
    let store = makeStore(CounterState(count: 4))
    #expect(store.state.count == 4)
    try await store.dispatch(Increment()) { $0.count = 5 }
    #expect(store.state.count == 5)
    await store.finish()
  }

  @Test func dispatchAfterFinish_throwsStoreShutDown() async throws {
    let store = makeStore()
    await store.finish()
    await #expect(throws: StoreError.storeShutDown) { try await store.dispatch(Increment()) }
  }
}

@Suite("TestStore: non-exhaustive mode", .timeLimit(.failsafeMinutes(3)))
struct TestStoreNonExhaustiveTests {
  @Test func dispatch_checksOnlyTheFieldsTheMutationAssigns() async throws {
    let store = makeStore(exhaustivity: .off)
    try await store.dispatch(
      Script { context in
        try await context.dispatch(Log(tag: "a"))
        try await context.dispatch(Increment(by: 2))
      })
    await store.receive(Increment.self) { $0.count = 2 }
    await store.finish()
  }

  @Test func dispatch_whenAnAssignedFieldIsWrong_recordsOneIssue() async throws {
    let store = makeStore(exhaustivity: .off)
    try await store.dispatch(Log(tag: "a"))
    await expectOneIssue(containing: ["non-exhaustive", "count: expected 3, actual 2"]) {
      try await store.dispatch(Increment(by: 2)) { $0.count = 3 }
    }
    await store.finish()
  }

  @Test func receive_whenNoReceivedItemMatches_recordsOneIssue_listingTheReceivedItems() async throws {
    let store = makeStore(exhaustivity: .off)
    try await store.dispatch(LogAll(tags: ["a", "b"]))
    let message =
      "Expected to receive Increment, but no received item matches, and the store has no work in flight. "
      + #"Received, not asserted: Log(tag: "a"), Log(tag: "b")."#
    let line = #line + 2
    await expectOneIssue(containing: [message], atLine: line) {
      await store.receive(Increment.self) { $0.count = 1 }
    }
    await store.finish()
  }

  @Test func exhaustivity_canBeSwitchedMidTest() async throws {
    let store = makeStore()
    store.exhaustivity = .off
    try await store.dispatch(LogAll(tags: ["a", "b"]))
    await store.receive(Log(tag: "b"))
    store.exhaustivity = .on
    try await store.dispatch(Increment()) { $0.count = 1 }
    await store.finish()
  }

  @Test func release_withUnassertedItemsAndRunningWork_recordsNothing() async throws {
    let gate = Gate()
    let started = Gate()
    do {
      let store = makeStore(exhaustivity: .off)
      try await store.dispatch(LogAll(tags: ["a"]))
      store.send(WaitForGate(gate: gate, started: started))
      await started.wait()
    }
    gate.open()
  }
}
