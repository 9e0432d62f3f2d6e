import Katana
import KatanaTestSupport
import Testing

/// A value the caller sets, to check where a side effect's body runs.
private enum Probe {
  @TaskLocal static var tag: String?
}

/// Contract points that the other suites only covered indirectly.
@Suite("Contract", .timeLimit(.failsafeMinutes(3)))
struct ContractGapTests {
  /// SPEC 4.2: side effects run concurrently with updaters. One that needs no updater completes while an
  /// updater's interceptor holds the turn.
  @Test func sideEffect_completesWhileAnUpdaterHoldsTheTurn() async throws {
    let gate = Gate()
    let started = Gate()
    let store = try await makeReadyStore(interceptors: [gatingInterceptor(tag: "held", gate: gate, started: started)])
    let holder = Task { try await store.dispatch(Log(tag: "held")) }
    await started.wait()
    let value = try await store.dispatch(ReturningScript { context in context.getAnyState() is CounterState ? 7 : 0 })
    #expect(value == 7)
    #expect(store.state.log == [])  // The updater still holds its turn.
    gate.open()
    try await holder.value
    #expect(store.state.log == ["held"])
  }

  /// SPEC 4.2: `dispatch` runs the body in the calling task: same task, same task-locals.
  @Test func sideEffectBody_runsInTheCallingTask() async throws {
    let store = try await makeReadyStore()
    let seen = LockedValue<(tag: String?, sameTask: Bool)>((nil, false))
    try await Probe.$tag.withValue("caller") {
      // UnsafeCurrentTask hashes by task identity; it cannot be captured itself (it is not Sendable).
      let caller = withUnsafeCurrentTask { $0?.hashValue }
      try await store.dispatch(
        Script { _ in
          let body = withUnsafeCurrentTask { $0?.hashValue }
          seen.withLock { $0 = (Probe.tag, body != nil && body == caller) }
        })
    }
    #expect(seen.current.tag == "caller")
    #expect(seen.current.sameTask)
  }

  /// SPEC 4.3: when an interceptor replaces an item with one of the other kind, the original caller gets
  /// the replacement's error.
  @Test func redirectedItemsError_reachesTheOriginalCaller() async throws {
    let converting = interceptor { item, next, _ in
      if item is Log {
        try await next(Fail(code: 7))
      } else if item is IncrementTwice {
        try await next(Rename(name: "wrong state"))
      } else {
        try await next(item)
      }
    }
    let store = try await makeReadyStore(interceptors: [converting])
    await #expect(throws: TestError(code: 7)) { try await store.dispatch(Log(tag: "x")) }
    await #expect(
      throws: StoreError.wrongStateType(
        expected: String(reflecting: OtherState.self), actual: String(reflecting: CounterState.self))
    ) { try await store.dispatch(IncrementTwice()) }
    #expect(store.state == CounterState())
  }

  /// SPEC 4.4: releasing the store cancels the work it owns.
  @Test func releasedStore_cancelsTheTasksItOwns() async throws {
    let started = Gate()
    let cancelled = Gate()
    let handle: DispatchHandle<Void>
    weak var weakStore: TestStore?
    do {
      let store = try await makeReadyStore()
      weakStore = store
      handle = store.send(
        Script { _ in
          started.open()
          let release = Gate()
          await withTaskCancellationHandler {
            await release.wait()
          } onCancel: {
            cancelled.open()
            release.open()
          }
        })
      await started.wait()
    }
    #expect(weakStore == nil)
    await cancelled.wait()
    _ = await handle.result
  }

  /// `DispatchHandle.cancel()` on an updater that has started: it completes, and only it is affected: the
  /// updaters after it are not cancelled with it.
  @Test func cancellingTheHandleOfARunningUpdater_letsItComplete_andLeavesTheNextOnesAlone() async throws {
    let gate = Gate()
    let started = Gate()
    let cancellationSeen = LockedValue<[String: Bool]>([:])
    let watching = interceptor { item, next, _ in
      if let log = item as? Log { cancellationSeen.withLock { $0[log.tag] = Task.isCancelled } }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [
      gatingInterceptor(tag: "running", gate: gate, started: started), watching,
    ])
    let running = store.send(Log(tag: "running"))
    let next = store.send(Log(tag: "next"))
    await started.wait()
    running.cancel()
    gate.open()
    try await running.value
    try await next.value
    #expect(store.state.log == ["running", "next"])
    #expect(cancellationSeen.current["next"] == false)
  }

  /// SPEC 4.8: every error says what happened and what to do.
  @Test(arguments: [
    StoreError.storeShutDown, .startupFailed(TestError(code: 1)), .wrongStateType(expected: "A", actual: "B"),
    .wrongContextType(expected: "A", actual: "B"), .ambiguousDispatchable("T"), .unsupportedDispatchable("T"),
    .deadlock("this task holds the turn."), .dispatchFromStateUpdater("T"), .returnValueUnavailable("T"),
    .returnValueTypeMismatch(expected: "A", actual: "B"), .nextCalledOutOfScope("T"), .redirectLimitExceeded("T"),
    .nextCalledConcurrently("T"),
  ])
  func storeError_descriptionNamesTheProblemAndItsDetails(error: StoreError) {
    // `.deadlock`'s detail is a sentence of its own, ending with a full stop.
    let text = error.description
    #expect(text.hasSuffix("."))
    switch error {
    case .wrongStateType(let expected, let actual), .wrongContextType(let expected, let actual),
      .returnValueTypeMismatch(let expected, let actual):
      #expect(text.contains(expected) && text.contains(actual))
    case .ambiguousDispatchable(let type), .unsupportedDispatchable(let type), .dispatchFromStateUpdater(let type),
      .returnValueUnavailable(let type), .nextCalledOutOfScope(let type), .redirectLimitExceeded(let type),
      .nextCalledConcurrently(let type):
      #expect(text.contains(type))
    case .deadlock(let detail):
      #expect(text.contains("Deadlock avoided") && text.contains(detail))
    case .startupFailed(let underlying):
      #expect(text.contains(String(describing: underlying)))
    case .storeShutDown:
      #expect(text.lowercased().contains("shut"))
    }
  }

  /// SPEC 4.8: a returning side effect dispatched to a store of other types throws `wrongContextType`.
  @Test func returningSideEffect_inAStoreOfOtherTypes_throwsWrongContextType() async throws {
    let store = Store<OtherState, EmptySideEffectDependencyContainer>()
    do {
      _ = try await store.dispatch(AddAndRead(by: 1))
      Issue.record("expected wrongContextType")
    } catch StoreError.wrongContextType(let expected, let actual) {
      #expect(expected.contains("CounterState") && actual.contains("OtherState"))
    }
  }
}
