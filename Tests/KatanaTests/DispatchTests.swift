import Katana
import KatanaTestSupport
import Testing

@Suite("Dispatch", .timeLimit(.failsafeMinutes(3)))
struct DispatchTests {
  @Test func dispatch_updater_returnsAfterCommit() async throws {
    let store = try await makeReadyStore()
    try await store.dispatch(Increment(by: 3))
    #expect(store.state.counter == 3)
  }

  @Test func dispatch_beforeReady_waitsForStartupAndApplies() async throws {
    let gate = Gate()
    let store = TestStore(stateInitializer: {
      await gate.wait()
      return CounterState(counter: 10)
    })
    #expect(!store.isReady)
    #expect(store.state == CounterState())
    async let applied: Void = store.dispatch(Increment())
    gate.open()
    try await applied
    #expect(store.isReady)
    #expect(store.state.counter == 11)
  }

  @Test func dispatch_sideEffect_returnsWhenBodyReturns() async throws {
    let store = try await makeReadyStore()
    try await store.dispatch(IncrementTwice())
    #expect(store.state.counter == 2)
  }

  @Test func dispatch_sideEffect_getStateReflectsAwaitedUpdater() async throws {
    let store = try await makeReadyStore()
    let seen = Recorder<Int>()
    try await store.dispatch(
      Script { context in
        try await context.dispatch(Increment(by: 5))
        seen.append(context.getState().counter)
      })
    #expect(seen.values == [5])
  }

  @Test func dispatch_returningSideEffect_returnsItsValue() async throws {
    let store = try await makeReadyStore()
    let value = try await store.dispatch(AddAndRead(by: 4))
    #expect(value == 4)
  }

  @Test(arguments: [0, 1, 5])
  func dispatch_returningSideEffect_returnsValueThroughNestedDispatches(depth: Int) async throws {
    let store = try await makeReadyStore()
    let value = try await store.dispatch(Nested(depth: depth))
    #expect(value == 1)
    #expect(store.state.counter == 1)
  }

  @Test(arguments: [0, 1, 5])
  func dispatch_error_reachesOutermostCallerUnchanged(depth: Int) async throws {
    let store = try await makeReadyStore()
    await #expect(throws: TestError(code: 42)) {
      _ = try await store.dispatch(NestedFailure(depth: depth))
    }
  }

  @Test func dispatch_concurrentFailingAndSucceeding_eachGetsItsOwnOutcome() async throws {
    let store = try await makeReadyStore()
    let outcomes = try await withThrowingTaskGroup(of: (Int, Result<Int, TestError>).self) { group in
      for index in 0..<40 {
        group.addTask {
          let gate = Gate()
          let task = Task {
            try await store.dispatch(
              ReturningScript<Int> { _ in
                await gate.wait()
                if index.isMultiple(of: 3) { throw TestError(code: index) }
                return index * 10
              })
          }
          gate.open()
          do {
            return (index, .success(try await task.value))
          } catch let error as TestError {
            return (index, .failure(error))
          }
        }
      }
      var outcomes: [Int: Result<Int, TestError>] = [:]
      for try await (index, outcome) in group { outcomes[index] = outcome }
      return outcomes
    }
    for index in 0..<40 {
      if index.isMultiple(of: 3) {
        #expect(outcomes[index] == .failure(TestError(code: index)))
      } else {
        #expect(outcomes[index] == .success(index * 10))
      }
    }
  }

  @Test func send_updater_appliesAndHandleCompletes() async throws {
    let store = try await makeReadyStore()
    let handle = store.send(Increment(by: 2))
    try await handle.value
    #expect(store.state.counter == 2)
  }

  /// Without interceptors, an updater sent to an idle store is applied, and its listeners called, before
  /// `send` returns.
  @Test func send_updaterToIdleStore_isAppliedBeforeSendReturns() async throws {
    let store = try await makeReadyStore()
    let seen = LockedValue<[Int]>([])
    store.addListener { _, new in seen.withLock { $0.append(new.counter) } }
    let handle = store.send(Increment(by: 3))
    #expect(store.state.counter == 3)
    #expect(seen.current == [3])
    try await handle.value
  }

  /// An updater sent while another holds the turn (here: from that updater's listener) is queued behind
  /// it, not applied in the middle of its delivery.
  @Test func send_fromListener_isQueuedBehindTheCommitBeingDelivered() async throws {
    let store = try await makeReadyStore()
    let seen = LockedValue<[[String]]>([])
    let sent = LockedValue<DispatchHandle<Void>?>(nil)
    store.addListener { _, new in
      seen.withLock { $0.append(new.log) }
      if new.log == ["a"] {
        sent.withLock { $0 = store.send(Log(tag: "b")) }
        // Still the state of "a": "b" waits for the turn.
        #expect(store.state.log == ["a"])
      }
    }
    try await store.dispatch(Log(tag: "a"))
    try await #require(sent.current).value
    #expect(store.state.log == ["a", "b"])
    #expect(seen.current == [["a"], ["a", "b"]])
  }

  /// `anySend` of an updater for another state fails its handle on the direct path too.
  @Test func anySend_updaterOfAnotherState_failsTheHandle() async throws {
    let store = try await makeReadyStore()
    await #expect(
      throws: StoreError.wrongStateType(
        expected: String(reflecting: OtherState.self), actual: String(reflecting: CounterState.self))
    ) {
      try await store.anySend(Rename(name: "x")).value
    }
    #expect(store.state == CounterState())
  }

  @Test func send_returningSideEffect_handleYieldsValue() async throws {
    let store = try await makeReadyStore()
    let value = try await store.send(AddAndRead(by: 7)).value
    #expect(value == 7)
  }

  @Test func send_failingSideEffect_handleThrows() async throws {
    let store = try await makeReadyStore()
    await #expect(throws: TestError(code: 3)) {
      try await store.send(Fail(code: 3)).value
    }
  }

  @Test func context_sendFromSideEffect_isApplied() async throws {
    let store = try await makeReadyStore()
    try await store.dispatch(
      Script { context in
        try await context.send(Increment()).value
      })
    #expect(store.state.counter == 1)
  }

  @Test func dependencies_dispatchClosure_dispatchesToTheStore() async throws {
    let store = try await makeReadyStore()
    _ = try await store.dependencies.dispatch(Increment(by: 9))
    #expect(store.state.counter == 9)
    #expect((store.dependencies.getState() as? CounterState)?.counter == 9)
  }
}
