import Katana
import KatanaTestSupport
import Testing

// MARK: - Fixtures

struct TallyCell: State, Equatable, Identifiable {
  var id = 0
  var count = 0
}

struct TallyState: State, Equatable {
  var count = 0
  var log: [Int] = []
  var cell = TallyCell()
  var cells: [TallyCell] = []
}

/// Takes one from the count and returns the count it left: every commit returns a value no other commit returns.
struct TakeOne: ReturningStateUpdater, Equatable {
  func updateState(_ state: inout TallyState) -> Int {
    state.count -= 1
    state.log.append(state.count)
    return state.count
  }
}

/// TCA's `decrementButtonTapped`: decrements, and returns whether the count went negative.
struct DecrementTally: ReturningStateUpdater {
  func updateState(_ state: inout TallyState) -> Bool {
    state.count -= 1
    return state.count < 0
  }
}

/// A feature's returning updater: takes one from its cell and returns the cell it left.
struct TakeFromCell: ReturningStateUpdater {
  func updateState(_ state: inout TallyCell) -> TallyCell {
    state.count -= 1
    return state
  }
}

/// A plain updater of the same state.
struct AddToTally: StateUpdater {
  let amount: Int
  func updateState(_ state: inout TallyState) { state.count += amount }
}

/// Takes one through its context and returns what the returning dispatch gave back.
struct TakeThroughContext: ReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) async throws -> Int {
    try await context.typed(TallyState.self, EmptySideEffectDependencyContainer.self).dispatch(TakeOne())
  }
}

/// A feature's side effect that takes one from its cell, then adds to it only if the cell went negative: the
/// decision is made on the state its own dispatch produced.
struct ClampCell: SideEffect {
  let seen: Recorder<Int>
  func sideEffect(_ context: SideEffectContext<TallyCell, EmptySideEffectDependencyContainer>) async throws {
    let left = try await context.dispatch(TakeFromCell())
    seen.append(left.count)
  }
}

/// A side effect that adds five.
struct AddFiveLater: SideEffect {
  func sideEffect(_ context: SideEffectContext<TallyState, EmptySideEffectDependencyContainer>) async throws {
    try await context.dispatch(AddToTally(amount: 5))
  }
}

typealias TallyStore = Store<TallyState, EmptySideEffectDependencyContainer>

/// An interceptor that does `what` to every `TakeOne` (or a scope's item whose base is `TakeFromCell`) and passes
/// everything else on.
func takeInterceptor(_ what: @escaping @Sendable (any Dispatchable, StoreInterceptorNext) async throws -> Void)
  -> StoreInterceptor
{
  { _ in
    { next in
      { item in
        let base = (item as? any ScopedDispatchable)?.base ?? item
        guard base is TakeOne || base is TakeFromCell else { return try await next(item) }
        try await what(item, next)
      }
    }
  }
}

// MARK: - Tests

@Suite("Returning state updaters", .timeLimit(.failsafeMinutes(3)))
struct ReturningStateUpdaterTests {
  // MARK: The value, from every typed dispatch

  @Test(arguments: [false, true])
  func storeDispatch_returnsTheValueOfItsOwnCommit(intercepted: Bool) async throws {
    let passing = takeInterceptor { item, next in try await next(item) }
    let store = TallyStore(initialState: TallyState(count: 1), interceptors: intercepted ? [passing] : [])
    let first = try await store.dispatch(DecrementTally())
    let second = try await store.dispatch(DecrementTally())
    #expect(first == false && second == true)
    #expect(store.state.count == -1)
    #expect(try await store.dispatch(TakeOne()) == -2)
  }

  @Test(arguments: [false, true])
  func scopeDispatch_returnsTheValueComputedOnTheSlice(intercepted: Bool) async throws {
    let passing = takeInterceptor { item, next in try await next(item) }
    let store = TallyStore(
      initialState: TallyState(cell: TallyCell(count: 3), cells: [TallyCell(id: 7, count: 10)]),
      interceptors: intercepted ? [passing] : [])
    let cell = store.scope(\.cell, dependencies: \.self)
    #expect(try await cell.dispatch(TakeFromCell()) == TallyCell(count: 2))
    let element = store.scope(\.cells, id: 7, dependencies: \.self)
    #expect(try await element.dispatch(TakeFromCell()) == TallyCell(id: 7, count: 9))
    #expect(store.state.cell.count == 2 && store.state.cells == [TallyCell(id: 7, count: 9)])
  }

  @Test func scopeDispatch_toAMissingElement_throwsTheScopeError_andAppliesNothing() async throws {
    let store = TallyStore(initialState: TallyState(), interceptors: [])
    let missing = store.scope(\.cells, id: 1, dependencies: \.self)
    await #expect(throws: ScopeError.self) { try await missing.dispatch(TakeFromCell()) }
    #expect(store.state == TallyState())
  }

  @Test(arguments: [false, true])
  func contextDispatch_returnsTheValue_atTheRootAndInAFeature(intercepted: Bool) async throws {
    let passing = takeInterceptor { item, next in try await next(item) }
    let store = TallyStore(
      initialState: TallyState(count: 5, cell: TallyCell(count: 0)), interceptors: intercepted ? [passing] : [])
    #expect(try await store.dispatch(TakeThroughContext()) == 4)
    let seen = Recorder<Int>()
    try await store.scope(\.cell, dependencies: \.self).dispatch(ClampCell(seen: seen))
    #expect(seen.values == [-1])
    #expect(store.state.count == 4 && store.state.cell.count == -1)
  }

  // MARK: Atomicity

  /// Each dispatcher gets the count its own commit left, whatever the others commit meanwhile: N * M concurrent
  /// dispatches from N tasks return N * M distinct values, exactly the counts the store went through.
  @Test(arguments: [false, true])
  func concurrentDispatchers_eachGetTheStateTheirOwnCommitProduced(intercepted: Bool) async throws {
    let (tasks, perTask) = (8, 200)
    let suspending = takeInterceptor { item, next in
      await Task.yield()
      try await next(item)
    }
    let store = TallyStore(
      initialState: TallyState(count: tasks * perTask), interceptors: intercepted ? [suspending] : [])
    let values = try await withThrowingTaskGroup(of: [Int].self) { group in
      for _ in 0..<tasks {
        group.addTask {
          var mine: [Int] = []
          for _ in 0..<perTask {
            // Another updater lands between the commits, so that a value read after the dispatch would be stale.
            async let other: Void = store.dispatch(AddToTally(amount: 0))
            mine.append(try await store.dispatch(TakeOne()))
            try await other
          }
          return mine
        }
      }
      return try await group.reduce(into: [Int]()) { $0 += $1 }
    }
    #expect(values.count == tasks * perTask)
    #expect(Set(values) == Set(0..<(tasks * perTask)))
    #expect(Set(values) == Set(store.state.log))
  }

  /// The plain way (dispatch, then read the state) is not atomic; the returning dispatch is: an updater that lands
  /// after the commit, before the dispatch returns to its caller, shows in a read of the state but not in the value.
  @Test func value_isTheCommitsEvenWhenAnotherItemLandsBeforeTheDispatchReturns() async throws {
    let holder = LockedValue<TallyStore?>(nil)
    // Once a TakeOne has been handled (committed, the turn released), another updater is applied right away.
    let interloper = DispatchObserver(didHandle: { item, _ in
      if item is TakeOne, let store = holder.current { store.send(AddToTally(amount: 100)) }
    })
    let store = TallyStore(
      initialState: TallyState(count: 10), configuration: StoreConfiguration(dispatchObservers: [interloper]))
    holder.withLock { $0 = store }
    try await store.dispatch(TakeOne()) as Void
    #expect(store.state.count == 109, "a read after a plain dispatch sees the item that landed since")
    #expect(try await store.dispatch(TakeOne()) == 108)
    #expect(store.state.count == 208)
  }

  // MARK: Interceptors

  @Test(arguments: [false, true])
  func anInterceptorThatDropsTheUpdater_givesReturnValueUnavailable(scoped: Bool) async throws {
    let dropping = takeInterceptor { _, _ in }
    let store = TallyStore(initialState: TallyState(), interceptors: [dropping])
    let name = scoped ? String(reflecting: TakeFromCell.self) : String(reflecting: TakeOne.self)
    await #expect(throws: StoreError.returnValueUnavailable(name)) {
      if scoped {
        _ = try await store.scope(\.cell, dependencies: \.self).dispatch(TakeFromCell())
      } else {
        _ = try await store.dispatch(TakeOne())
      }
    }
    #expect(store.state == TallyState())
  }

  @Test func anInterceptorThatSubstitutesAnotherType_givesReturnValueUnavailable_andCommitsTheSubstitute() async throws
  {
    let substituting = takeInterceptor { _, next in try await next(AddToTally(amount: 5)) }
    let store = TallyStore(initialState: TallyState(), interceptors: [substituting])
    await #expect(throws: StoreError.returnValueUnavailable(String(reflecting: TakeOne.self))) {
      _ = try await store.dispatch(TakeOne())
    }
    #expect(store.state.count == 5)
  }

  @Test func anInterceptorThatSubstitutesASideEffect_givesReturnValueUnavailable_afterRunningIt() async throws {
    let substituting = takeInterceptor { _, next in try await next(AddFiveLater()) }
    let store = TallyStore(initialState: TallyState(count: 3), interceptors: [substituting])
    await #expect(throws: StoreError.returnValueUnavailable(String(reflecting: TakeOne.self))) {
      _ = try await store.dispatch(TakeOne())
    }
    // The substitute ran (as a new item, once the chain had returned) before the dispatch threw.
    #expect(store.state.count == 8)
  }

  @Test func anInterceptorThatCallsNextTwice_returnsTheLastCommitsValue() async throws {
    let twice = takeInterceptor { item, next in
      try await next(item)
      try await next(item)
    }
    let store = TallyStore(initialState: TallyState(count: 10), interceptors: [twice])
    #expect(try await store.dispatch(TakeOne()) == 8)
  }

  @Test func anInterceptorThatThrows_givesItsError_notTheValueError() async throws {
    struct Rejected: Error, Equatable {}
    let rejecting = takeInterceptor { _, _ in throw Rejected() }
    let store = TallyStore(initialState: TallyState(), interceptors: [rejecting])
    await #expect(throws: Rejected()) { _ = try await store.dispatch(TakeOne()) }
  }

  /// Dispatched as a plain updater (`as Void`), a returning updater keeps a plain updater's contract: a dropped one
  /// returns normally.
  @Test func dispatchedAsVoid_aDroppedReturningUpdaterReturnsNormally() async throws {
    let dropping = takeInterceptor { _, _ in }
    let store = TallyStore(initialState: TallyState(), interceptors: [dropping])
    try await store.dispatch(TakeOne()) as Void
    #expect(store.state == TallyState())
    let passing = TallyStore(initialState: TallyState(), interceptors: [])
    try await passing.dispatch(TakeOne()) as Void
    _ = await passing.send(TakeOne()).result
    #expect(passing.state.count == -2)
  }

  // MARK: Time travel, recording, replay, undo

  @Test func whileAwayFromLive_theDispatchIsRefusedWithTheStoresError() async throws {
    let recorder = StoreRecorder<TallyState>()
    let store = TallyStore(initialState: TallyState(count: 2), interceptors: [recorder.interceptor])
    _ = try await store.dispatch(TakeOne())
    try await recorder.travel(store, to: 0)
    await #expect {
      _ = try await store.dispatch(TakeOne())
    } throws: { error in
      guard case TimeTravelError.awayFromLive(let name) = error else { return false }
      return name.contains("TakeOne")
    }
    try await recorder.returnToLive(store)
    #expect(store.state.count == 1)
  }

  @Test func whileAwayFromLive_anInterceptorThatSwallowsTheRefusal_givesReturnValueUnavailable() async throws {
    let recorder = StoreRecorder<TallyState>()
    let swallowing = takeInterceptor { item, next in try? await next(item) }
    let store = TallyStore(initialState: TallyState(count: 2), interceptors: [swallowing, recorder.interceptor])
    #expect(try await store.dispatch(TakeOne()) == 1)
    try await recorder.travel(store, to: 0)
    await #expect(throws: StoreError.returnValueUnavailable(String(reflecting: TakeOne.self))) {
      _ = try await store.dispatch(TakeOne())
    }
    try await recorder.returnToLive(store)
    #expect(store.state.count == 1)
  }

  @Test func aRecordingOfReturningUpdaters_replaysToTheSameStates() async throws {
    let recorder = StoreRecorder<TallyState>()
    let store = TallyStore(initialState: TallyState(count: 3), interceptors: [recorder.interceptor])
    let states = Recorder<TallyState>()
    let stop = store.addListener { _, new in states.append(new) }
    defer { stop() }
    _ = try await store.dispatch(TakeOne())
    _ = try await store.scope(\.cell, dependencies: \.self).dispatch(TakeFromCell())
    _ = try await store.dispatch(DecrementTally())
    let recording = recorder.recording()
    #expect(recording.commits.count == 3)
    #expect(recording.commits[0].base as? TakeOne == TakeOne())
    #expect(try recording.replayedStates() == states.values)
    let fresh = TallyStore(initialState: TallyState(count: 3), interceptors: [])
    try await recording.replay(into: fresh)
    #expect(fresh.state == store.state)
  }

  @Test func undoAndRedo_ofAReturningUpdater_areTheStepsOfAnyUpdater() async throws {
    let history = UndoHistory<TallyState>()
    let store = TallyStore(initialState: TallyState(count: 3), interceptors: [history.interceptor])
    #expect(try await store.dispatch(TakeOne()) == 2)
    #expect(try await store.dispatch(TakeOne()) == 1)
    #expect(try await history.undo(on: store))
    #expect(store.state == TallyState(count: 2, log: [2]))
    #expect(try await history.redo(on: store))
    #expect(store.state == TallyState(count: 1, log: [2, 1]))
    #expect(try await store.dispatch(TakeOne()) == 0)
  }
}
