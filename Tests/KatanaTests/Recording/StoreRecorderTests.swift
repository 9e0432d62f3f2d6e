import Foundation
import Katana
import KatanaTestSupport
import Testing

// MARK: - Fixtures

struct RecCounterState: State, Equatable {
  var count = 0
  var history: [Int] = []
  var cart = FeatCartState()
  var rooms: [FeatRoom] = []
}

/// Adds 10 and resets `recorder` from inside the updater.
struct RecResetting: StateUpdater {
  let recorder: StoreRecorder<RecCounterState>
  func updateState(_ state: inout RecCounterState) {
    state.count += 10
    recorder.reset()
  }
}

struct RecAdd: StateUpdater, Equatable {
  let amount: Int
  func updateState(_ state: inout RecCounterState) {
    state.count += amount
    state.history.append(amount)
  }
}

struct RecFailure: Error, Equatable {}

/// Throws without touching the state.
struct RecThrowingUpdater: AnyStateUpdater {
  func updatedState(currentState: any State) throws -> any State { throw RecFailure() }
}

/// Dispatches `amounts` in its own task, one after another.
struct RecAddAll: SideEffect {
  let amounts: [Int]
  func sideEffect(_ context: SideEffectContext<RecCounterState, EmptySideEffectDependencyContainer>) async throws {
    for amount in amounts { try await context.dispatch(RecAdd(amount: amount)) }
  }
}

struct RecFailingEffect: SideEffect {
  func sideEffect(_ context: SideEffectContext<RecCounterState, EmptySideEffectDependencyContainer>) async throws {
    throw RecFailure()
  }
}

struct RecCancelledEffect: SideEffect {
  func sideEffect(_ context: SideEffectContext<RecCounterState, EmptySideEffectDependencyContainer>) async throws {
    throw CancellationError()
  }
}

typealias RecStore = Store<RecCounterState, EmptySideEffectDependencyContainer>

func makeRecordedStore(
  _ recorder: StoreRecorder<RecCounterState>, state: RecCounterState = RecCounterState(),
  interceptors: [StoreInterceptor] = []
) -> RecStore {
  RecStore(initialState: state, interceptors: interceptors + [recorder.interceptor])
}

// MARK: - Tests

@Suite("Recording: what a StoreRecorder keeps", .timeLimit(.failsafeMinutes(3)))
struct StoreRecorderTests {
  @Test func recordsRootAndScopedCommits_inOrder_andReplaysToTheStoresState() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let store = makeRecordedStore(recorder, state: RecCounterState(count: 5, rooms: [FeatRoom(id: 1)]))
    try await store.dispatch(RecAdd(amount: 2))
    let cart = store.scope(\.cart, dependencies: \.self)
    try await cart.dispatch(FeatAddToCart(value: 9))
    try await store.scope(\.rooms, id: 1, dependencies: \.self).dispatch(FeatPost(text: "hi"))
    _ = await store.send(RecAdd(amount: 3)).result

    let recording = recorder.recording()
    #expect(recording.initialState == RecCounterState(count: 5, rooms: [FeatRoom(id: 1)]))
    #expect(recording.commits.map(\.sequence) == [1, 2, 3, 4])
    #expect(
      recording.commits.map { $0.scope?.description } == [
        nil, cart.id.description, "RecCounterState.rooms[id: 1]", nil,
      ])
    #expect((recording.commits[1].base as? FeatAddToCart)?.value == 9)
    #expect(recording.commits[0].base as? RecAdd == RecAdd(amount: 2))
    #expect(try recording.replayedState() == store.state)
    #expect(try recording.replayedStates().map(\.count) == [7, 7, 7, 10])
  }

  @Test func aCommitFromASideEffect_namesIt_andTheTimelineHasEveryOutcome() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let store = makeRecordedStore(recorder)
    try await store.dispatch(RecAddAll(amounts: [1, 2]))
    await #expect(throws: RecFailure.self) { try await store.dispatch(RecFailingEffect()) }
    await #expect(throws: CancellationError.self) { try await store.dispatch(RecCancelledEffect()) }
    try await store.dispatch(RecAdd(amount: 4))

    let recording = recorder.recording()
    #expect(recording.effects.map(\.id) == [1, 2, 3])
    #expect(recording.effects[0].sideEffect is RecAddAll)
    #expect(recording.commits.map(\.cause) == [1, 1, nil])
    let outcomes = recording.effects.map { effect -> String in
      switch effect.outcome {
      case .completed?: "completed"
      case .failed(let error)?: "failed \(error is RecFailure)"
      case .cancelled?: "cancelled"
      case nil: "running"
      }
    }
    #expect(outcomes == ["completed", "failed true", "cancelled"])
    #expect(recording.effects.allSatisfy { effect in effect.end.map { $0 >= effect.start } ?? false })
  }

  @Test func anUpdaterThatThrows_isNotRecorded() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let store = makeRecordedStore(recorder)
    try await store.dispatch(RecAdd(amount: 1))
    await #expect(throws: RecFailure.self) { try await store.anyDispatch(RecThrowingUpdater()) }
    try await store.dispatch(RecAdd(amount: 2))
    #expect(recorder.recording().commits.map(\.sequence) == [1, 2])
    #expect(try recorder.recording().replayedState() == store.state)
  }

  @Test(arguments: [(capacity: 10, interval: 4), (capacity: 10, interval: 10), (capacity: 1, interval: 1)])
  func aFullRecorder_dropsTheOldestCommits_andStillReplays(capacity: Int, interval: Int) async throws {
    let recorder = StoreRecorder<RecCounterState>(capacity: capacity, checkpointInterval: interval)
    let store = makeRecordedStore(recorder)
    var states: [RecCounterState] = [store.state]
    for amount in 1...25 {
      try await store.dispatch(RecAdd(amount: amount))
      states.append(store.state)
    }
    let recording = recorder.recording()
    #expect(recording.commits.count <= capacity)
    #expect(recording.commits.count >= capacity - interval)
    #expect(recording.commits.last?.sequence == 25)
    let first = try #require(recording.commits.first?.sequence)
    #expect(recording.commits.map(\.sequence) == Array(first...25))
    #expect(recording.initialState == states[first - 1])
    #expect(try recording.replayedStates() == Array(states[first...]))
    #expect(recording.checkpoints.allSatisfy { $0.sequence % interval == 0 && $0.state == states[$0.sequence] })
  }

  @Test func reset_startsANewRecording_fromTheStoresStateNow() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let store = makeRecordedStore(recorder)
    try await store.dispatch(RecAdd(amount: 1))
    recorder.reset()
    #expect(recorder.recording().commits.isEmpty)
    // Before the next commit, the new recording already starts from the store's state (it took the default state).
    #expect(recorder.recording().initialState == store.state)
    #expect(try recorder.recording().replayedState() == store.state)
    try await store.dispatch(RecAdd(amount: 2))
    try await store.dispatch(RecAdd(amount: 3))
    let recording = recorder.recording()
    #expect(recording.initialState.count == 1)
    #expect(recording.commits.map(\.sequence) == [2, 3])
    #expect(try recording.replayedState() == store.state)
  }

  /// A reset, or an attach, once the store has shut down: the recording starts from the state the store ended with
  /// (it started from `S()`, which the store never held after its first commit: the observation fuzzer found it).
  @Test func resetOrAttach_afterShutdown_startsFromTheStoresLastState() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let store = makeRecordedStore(recorder)
    try await store.dispatch(RecAdd(amount: 4))
    await store.shutdown()
    recorder.reset()
    #expect(recorder.recording().commits.isEmpty)
    #expect(recorder.recording().initialState == store.state)
    #expect(try recorder.recording().replayedState() == store.state)
    let late = StoreRecorder<RecCounterState>()
    try late.attach(to: store)
    #expect(late.recording().initialState == store.state)
  }

  /// A reset from inside a state updater (which runs under the store's lock) does not take the lock again: the new
  /// recording starts after that commit.
  @Test func resetFromAStateUpdater_startsTheRecordingAfterItsCommit() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let store = RecStore(initialState: RecCounterState())
    try recorder.attach(to: store)
    try await store.dispatch(RecAdd(amount: 1))
    try await store.dispatch(RecResetting(recorder: recorder))
    try await store.dispatch(RecAdd(amount: 2))
    let recording = recorder.recording()
    #expect(recording.commits.map(\.sequence) == [3])
    #expect(recording.initialState.count == 11)
    #expect(try recording.replayedState() == store.state)
  }

  /// Resets race dispatches from several tasks: each one falls between two commits, and the last recording replays to
  /// the store's state, its commits numbered one after the other.
  @Test(arguments: 1...5)
  func resetsRacingDispatches_eachFallBetweenTwoCommits(round: Int) async throws {
    let recorder = StoreRecorder<RecCounterState>(capacity: 64, checkpointInterval: 8)
    let store = RecStore(initialState: RecCounterState())
    try recorder.attach(to: store)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<4 {
        group.addTask { for step in 0..<150 { _ = await store.send(RecAdd(amount: task * 1_000 + step)).result } }
      }
      group.addTask {
        for _ in 0..<40 {
          recorder.reset()
          await Task.yield()
        }
      }
      try await group.waitForAll()
    }
    let recording = recorder.recording()
    #expect(try recording.replayedState() == store.state)
    let numbers = recording.commits.map(\.sequence)
    #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 + 1 == $1 })
    #expect(
      store.state.count == (0..<4).reduce(0) { total, task in total + (0..<150).reduce(0) { $0 + task * 1_000 + $1 } })
  }

  @Test func aRecorderOfAnotherStateType_orOfASecondStore_recordsNothingThere() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let other = Store<FeatAppState, EmptySideEffectDependencyContainer>(
      initialState: FeatAppState(), interceptors: [recorder.interceptor])
    try await other.dispatch(FeatRootLog(value: 1))
    #expect(recorder.recording().commits.isEmpty)

    let first = makeRecordedStore(recorder)
    let second = makeRecordedStore(recorder)
    try await first.dispatch(RecAdd(amount: 1))
    try await second.dispatch(RecAdd(amount: 100))
    try await second.dispatch(RecAddAll(amounts: [1]))
    #expect(recorder.recording().commits.map { ($0.base as? RecAdd)?.amount } == [1])
    #expect(recorder.recording().effects.isEmpty)
    // Away from live, the recorded store refuses items; the other store does not.
    try await recorder.travel(first, to: 0)
    try await second.dispatch(RecAdd(amount: 1))
    await #expect(throws: TimeTravelError.self) { try await first.dispatch(RecAdd(amount: 1)) }
    try await recorder.returnToLive(first)
  }
}

@Suite("Recording: replay", .timeLimit(.failsafeMinutes(3)))
struct RecordingReplayTests {
  @Test func aCheckpointThatDiffers_stopsReplayThere() throws {
    let commits = (1...6).map { RecordedCommit(sequence: $0, time: .zero, updater: RecAdd(amount: $0)) }
    var wrong = RecCounterState()
    wrong.count = 999
    let recording = Recording(
      initialState: RecCounterState(), commits: commits,
      checkpoints: [
        .init(sequence: 2, state: RecCounterState(count: 3, history: [1, 2])), .init(sequence: 4, state: wrong),
      ])
    #expect {
      try recording.replayedState()
    } throws: { error in
      guard case ReplayError.diverged(let sequence, let expected, let replayed) = error else { return false }
      return sequence == 4 && expected.contains("999") && replayed.contains("count: 10")
    }
    // Without a comparison, checkpoints are not checked.
    #expect(try recording.replayedState(equal: nil).count == 21)
  }

  @Test func replayedStateAfter_startsFromTheNearestCheckpoint_andKnowsOnlyTheNumbersKept() throws {
    let commits = (11...16).map { RecordedCommit(sequence: $0, time: .zero, updater: RecAdd(amount: $0)) }
    // The checkpoint after commit 13 is taken as it is: a state the commits alone would not give (count 1000) shows
    // where the replay started.
    let marked = RecCounterState(count: 1000, history: [])
    let recording = Recording(
      initialState: RecCounterState(), commits: commits, checkpoints: [.init(sequence: 13, state: marked)])
    #expect(try recording.replayedState(after: 10) == RecCounterState())
    #expect(try recording.replayedState(after: 12) == RecCounterState(count: 23, history: [11, 12]))
    #expect(try recording.replayedState(after: 13) == marked)
    #expect(try recording.replayedState(after: 15)?.count == 1000 + 14 + 15)
    for outside in [9, 17, 0, -1, Int.min, Int.max] {
      #expect(try recording.replayedState(after: outside) == nil, "commit \(outside)")
    }
    #expect(try Recording(initialState: RecCounterState(), commits: []).replayedState(after: 0) == nil)
  }

  @Test func replayedStateAfter_onARecordingMadeByHand_withNumbersOutOfOrder_findsTheCommit_andNeverTraps() throws {
    let add = { (sequence: Int, amount: Int) in
      RecordedCommit(sequence: sequence, time: .zero, updater: RecAdd(amount: amount))
    }
    // Numbers at the ends of `Int`'s range, and not consecutive: each is looked up where it is.
    let recording = Recording(
      initialState: RecCounterState(), commits: [add(Int.min, 1), add(Int.max, 2), add(5, 4), add(Int.min + 1, 8)],
      checkpoints: [.init(sequence: 5, state: RecCounterState(count: 7, history: [1, 2, 4]))])
    #expect(try recording.replayedState(after: Int.min)?.count == 1)
    #expect(try recording.replayedState(after: Int.max)?.count == 3)
    #expect(try recording.replayedState(after: 5)?.count == 7)
    #expect(try recording.replayedState(after: Int.min + 1)?.count == 15)
    #expect(try recording.replayedState(after: 4) == nil)
    #expect(try recording.replayedState(after: Int.max - 1) == nil)
    // A checkpoint whose commit comes after the one asked for is not used.
    let late = Recording(
      initialState: RecCounterState(), commits: [add(5, 1), add(3, 2)],
      checkpoints: [.init(sequence: 3, state: RecCounterState(count: 99))])
    #expect(try late.replayedState(after: 5)?.count == 1)
    #expect(try late.replayedState(after: 3)?.count == 99)
  }

  @Test func replayedStateAfter_throwsTheFirstFailure_onTheWay() throws {
    let recording = Recording(
      initialState: RecCounterState(),
      commits: [
        RecordedCommit(sequence: 1, time: .zero, updater: RecAdd(amount: 1)),
        RecordedCommit(sequence: 2, time: .zero, updater: RecThrowingUpdater()),
        RecordedCommit(sequence: 3, time: .zero, updater: RecAdd(amount: 1)),
      ])
    #expect(try recording.replayedState(after: 1)?.count == 1)
    #expect {
      try recording.replayedState(after: 3)
    } throws: { error in
      guard case ReplayError.updaterFailed(2, _, _) = error else { return false }
      return true
    }
  }

  @Test func anItemThatIsNoUpdater_orAnUpdaterThatThrows_stopsReplayThere() throws {
    let notAnUpdater = Recording(
      initialState: RecCounterState(),
      commits: [
        RecordedCommit(sequence: 1, time: .zero, updater: RecAdd(amount: 1)),
        RecordedCommit(sequence: 2, time: .zero, updater: RecFailingEffect()),
      ])
    #expect {
      try notAnUpdater.replayedState()
    } throws: { error in
      guard case ReplayError.notReplayable(2, let name) = error else { return false }
      return name.contains("RecFailingEffect")
    }
    let throwing = Recording(
      initialState: RecCounterState(),
      commits: [RecordedCommit(sequence: 7, time: .zero, updater: RecThrowingUpdater())])
    #expect {
      try throwing.replayedState()
    } throws: { error in
      guard case ReplayError.updaterFailed(7, _, let underlying) = error else { return false }
      return underlying is RecFailure
    }
  }

  @Test func replayIntoAStore_commitsEachUpdater_whereObserversSeeIt_skippingInterceptorsUnlessAsked() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let live = makeRecordedStore(recorder, state: RecCounterState(rooms: [FeatRoom(id: 1)]))
    try await live.dispatch(RecAdd(amount: 2))
    try await live.scope(\.rooms, id: 1, dependencies: \.self).dispatch(FeatPost(text: "a"))
    try await live.dispatch(RecAdd(amount: 3))
    let recording = recorder.recording()

    let seen = Recorder<String>()
    let counting: StoreInterceptor = { _ in
      { next in
        { item in
          seen.append("intercepted")
          try await next(item)
        }
      }
    }
    let fresh = RecStore(initialState: recording.initialState, interceptors: [counting])
    let states = Recorder<RecCounterState>()
    let stop = fresh.addListener { _, new in states.append(new) }
    defer { stop() }
    try await recording.replay(into: fresh)
    #expect(fresh.state == live.state)
    #expect(states.values == (try recording.replayedStates()))
    #expect(seen.values.isEmpty)

    let again = RecStore(initialState: recording.initialState, interceptors: [counting])
    try await recording.replay(into: again, throughInterceptors: true)
    #expect(again.state == live.state)
    #expect(seen.values.count == 3)
  }
}

@Suite("Recording: time travel", .timeLimit(.failsafeMinutes(3)))
struct TimeTravelTests {
  @Test func travelToACommit_andBackToLive_refusingEveryItemMeanwhile() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let history = UndoHistory<RecCounterState>()
    let store = RecStore(initialState: RecCounterState(), interceptors: [history.interceptor, recorder.interceptor])
    for amount in [1, 2, 3] { try await store.dispatch(RecAdd(amount: amount)) }
    let seen = Recorder<Int>()
    let stop = store.addListener { _, new in seen.append(new.count) }
    defer { stop() }

    try await recorder.travel(store, to: 1)
    #expect(store.state.count == 1 && recorder.isAwayFromLive)
    try await recorder.travel(store, to: 0)
    #expect(store.state == RecCounterState())
    await #expect {
      try await store.dispatch(RecAdd(amount: 100))
    } throws: { error in
      guard case TimeTravelError.awayFromLive(let name) = error else { return false }
      return name.contains("RecAdd")
    }
    let sent = await store.send(RecAddAll(amounts: [5])).result
    #expect(throws: TimeTravelError.self) { try sent.get() }
    await #expect(throws: TimeTravelError.self) { try await history.undo(on: store) }
    await #expect(throws: TimeTravelError.self) { try await recorder.travel(store, to: 4) }

    try await recorder.returnToLive(store)
    #expect(store.state.count == 6 && !recorder.isAwayFromLive)
    #expect(seen.values == [1, 0, 6])
    // The session is as it was: travel is not recorded, and the history undoes the last real step.
    try await store.dispatch(RecAdd(amount: 4))
    #expect(recorder.recording().commits.map(\.sequence) == [1, 2, 3, 4])
    #expect(try recorder.recording().replayedState() == store.state)
    try await history.undo(on: store)
    #expect(store.state.count == 6)
  }
}

@Suite("Recording: what the store refused while away", .timeLimit(.failsafeMinutes(3)))
struct TimeTravelRefusalCountTests {
  /// Every kind of item, however it arrives, counts once as the store refuses it; the count stays after the return
  /// and starts again at the next move away.
  @Test func everyRefusedItem_countsOnce_untilTheNextMoveAway() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let store = RecStore(initialState: RecCounterState(rooms: [FeatRoom(id: 1)]))
    try recorder.attach(to: store)
    for amount in [1, 2] { try await store.dispatch(RecAdd(amount: amount)) }
    #expect(recorder.refusedWhileAway == 0)
    try await recorder.travel(store, to: 1)
    #expect(recorder.refusedWhileAway == 0)
    await #expect(throws: TimeTravelError.self) { try await store.dispatch(RecAdd(amount: 10)) }
    #expect(recorder.refusedWhileAway == 1)
    let sent = await store.send(RecAdd(amount: 10)).result
    #expect(throws: TimeTravelError.self) { try sent.get() }
    #expect(recorder.refusedWhileAway == 2)
    await #expect(throws: TimeTravelError.self) { try await store.dispatch(RecAddAll(amounts: [1])) }
    #expect(recorder.refusedWhileAway == 3)
    await #expect(throws: TimeTravelError.self) { try await store.anyDispatch(RecAdd(amount: 10)) }
    #expect(recorder.refusedWhileAway == 4)
    let room = store.scope(\.rooms, id: 1, dependencies: \.self)
    await #expect(throws: TimeTravelError.self) { try await room.dispatch(FeatPost(text: "away")) }
    // A second move while away moves again; it does not start a new count.
    try await recorder.travel(store, to: 0)
    #expect(recorder.refusedWhileAway == 5)
    try await recorder.returnToLive(store)
    #expect(recorder.refusedWhileAway == 5)
    try await store.dispatch(RecAdd(amount: 3))
    #expect(recorder.refusedWhileAway == 5)
    try await recorder.travel(store, to: 2)
    #expect(recorder.refusedWhileAway == 0)
    try await recorder.returnToLive(store)
  }

  /// Dispatchers on tasks and threads racing a move away: the count is exactly the refusals they saw.
  @Test(arguments: [1, 2, 3] as [UInt64])
  func concurrentDispatchers_countIsTheRefusalsTheySaw(seed: UInt64) async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let store = RecStore(initialState: RecCounterState())
    try recorder.attach(to: store)
    try await store.dispatch(RecAdd(amount: 1))
    let refusals = LockedValue(0)
    let perDispatcher = 300
    var generator = SeededGenerator(seed: seed)
    let travelAfter = Int(generator.next() % 100)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<3 {
        group.addTask {
          for _ in 0..<perDispatcher {
            do {
              try await store.dispatch(RecAdd(amount: 1))
            } catch is TimeTravelError {
              refusals.withLock { $0 += 1 }
            } catch {
              Issue.record("unexpected \(error)")
            }
          }
        }
      }
      group.addTask {
        for _ in 0..<travelAfter { await Task.yield() }
        do {
          try await recorder.travel(store, to: 1)
        } catch {
          Issue.record("travel: \(error)")
        }
      }
    }
    #expect(recorder.isAwayFromLive)
    #expect(recorder.refusedWhileAway == refusals.withLock { $0 })
    try await recorder.returnToLive(store)
  }
}

@Suite("Recording: drain", .timeLimit(.failsafeMinutes(3)))
struct RecorderDrainTests {
  /// Dispatchers on tasks and threads while another task drains: the drained recordings chain, with every commit
  /// exactly once, in order.
  @Test(arguments: [1, 2, 3] as [UInt64])
  func drainsWhileOthersDispatch_chainWithEveryCommitOnce(seed: UInt64) async throws {
    let recorder = StoreRecorder<RecCounterState>(capacity: 1 << 20, checkpointInterval: 5)
    let store = makeRecordedStore(recorder, state: RecCounterState(rooms: [FeatRoom(id: 1)]))
    let room = store.scope(\.rooms, id: 1, dependencies: \.self)
    let done = EventCounter()
    let perDispatcher = 200
    let handles = LockedValue<[DispatchHandle<Void>]>([])
    Thread.detachNewThread {
      for _ in 0..<perDispatcher {
        let handle = store.send(RecAdd(amount: 1))
        handles.withLock { $0.append(handle) }
      }
      done.increment()
    }
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<3 {
        group.addTask {
          for index in 0..<perDispatcher {
            if index % 3 == 0 {
              _ = try? await room.dispatch(FeatPost(text: "\(task)"))
            } else {
              _ = try? await store.dispatch(RecAdd(amount: 1))
            }
          }
          done.increment()
        }
      }
      group.addTask {
        // No forced try: a drain waits for the store's turn, and a test cancelled at its time limit (a loaded machine
        // under the thread sanitizer) gets `CancellationError` there; it must fail this test, not crash the run.
        do {
          var generator = SeededGenerator(seed: seed)
          var recordings: [Recording<RecCounterState>] = []
          while done.count < 4 {
            recordings.append(try await recorder.drain(store))
            for _ in 0..<(generator.next() % 3) { await Task.yield() }
          }
          for handle in handles.current { _ = await handle.result }
          recordings.append(try await recorder.drain(store))
          var state = RecCounterState(rooms: [FeatRoom(id: 1)])
          var next = 1
          for recording in recordings {
            #expect(recording.initialState == state)
            #expect(recording.commits.map(\.sequence) == Array(next..<(next + recording.commits.count)))
            next += recording.commits.count
            state = try recording.replayedState()
          }
          #expect(next - 1 == 4 * perDispatcher)
          #expect(state == store.state)
        } catch {
          Issue.record("draining or replaying threw \(error)")
        }
      }
    }
  }
}
