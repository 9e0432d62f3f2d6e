import Foundation
import KatanaTestSupport
import Testing

@testable import Katana

/// Counts its releases: what a recorder drops must be released, not kept.
final class RecReleaseCounter: Sendable {
  let released = LockedValue(0)
}

final class RecTracked: Sendable {
  let counter: RecReleaseCounter
  init(_ counter: RecReleaseCounter) { self.counter = counter }
  deinit { counter.released.withLock { $0 += 1 } }
}

/// Adds one, holding an object whose release is counted.
struct RecTrackedAdd: StateUpdater {
  let tracked: RecTracked
  func updateState(_ state: inout RecCounterState) { state.count += 1 }
}

/// Returns the count after adding `amount`.
struct RecAddReturning: ReturningStateUpdater {
  let amount: Int
  func updateState(_ state: inout RecCounterState) -> Int {
    state.count += amount
    return state.count
  }
}

/// Opens `started`, waits until `gate` opens, then adds one.
struct RecWaitThenAdd: SideEffect {
  let started: Gate
  let gate: Gate
  func sideEffect(_ context: SideEffectContext<RecCounterState, EmptySideEffectDependencyContainer>) async throws {
    started.open()
    await gate.waitIgnoringCancellation()
    try await context.dispatch(RecAdd(amount: 1))
  }
}

/// Adds one on its own store, then on `other`.
struct RecDispatchElsewhere: SideEffect {
  let other: RecStore
  func sideEffect(_ context: SideEffectContext<RecCounterState, EmptySideEffectDependencyContainer>) async throws {
    try await context.dispatch(RecAdd(amount: 1))
    try await other.dispatch(RecAdd(amount: 1))
  }
}

/// Starts a task that dispatches `RecAdd(amount: 1)` once `gate` opens, hands it to `started`, and returns at once:
/// the task outlives the side effect, carrying its binding as the cause.
struct RecDispatchLater: SideEffect {
  let gate: Gate
  let started: LockedValue<Task<Void, any Error>?>
  func sideEffect(_ context: SideEffectContext<RecCounterState, EmptySideEffectDependencyContainer>) async throws {
    let task = Task {
      await gate.wait()
      try await context.dispatch(RecAdd(amount: 1))
    }
    started.withLock { $0 = task }
  }
}

/// Sends `RecAdd(amount: 2)` and returns without waiting for it; its handle goes to `sent`.
struct RecSendAndReturn: SideEffect {
  let sent: LockedValue<DispatchHandle<Void>?>
  func sideEffect(_ context: SideEffectContext<RecCounterState, EmptySideEffectDependencyContainer>) async throws {
    let handle = context.send(RecAdd(amount: 2))
    sent.withLock { $0 = handle }
  }
}

/// Dispatches `RecAdd(amount: tag)` `count` times, awaiting some and sending the others (their handles kept in
/// `sent`), and, for odd tags, once more from a task it starts and does not await (kept in `started`): the commits of
/// a side effect that runs beside others.
struct RecTaggedEffect: SideEffect {
  let tag: Int
  let count: Int
  let started: LockedValue<[Task<Void, any Error>]>
  let sent: LockedValue<[DispatchHandle<Void>]>
  func sideEffect(_ context: SideEffectContext<RecCounterState, EmptySideEffectDependencyContainer>) async throws {
    for index in 0..<count {
      if index % 2 == 0 {
        try await context.dispatch(RecAdd(amount: tag))
      } else {
        let handle = context.send(RecAdd(amount: tag))
        sent.withLock { $0.append(handle) }
      }
    }
    guard tag % 2 == 1 else { return }
    let task = Task { try await context.dispatch(RecAdd(amount: tag)) }
    started.withLock { $0.append(task) }
  }
}

/// The chain of a store a recorder is attached to.
enum RecorderChain: Sendable {
  case none, closure, dispatchInterceptor
}

/// A pass-through `DispatchInterceptor`.
struct RecPassThrough: DispatchInterceptor {
  func intercept(_ item: any Dispatchable, next: DispatchInterceptorNext) async throws {
    try await next(item)
  }
}

@Suite("StoreRecorder.attach(to:): a recorder without an interceptor", .timeLimit(.failsafeMinutes(3)))
struct AttachedRecorderTests {
  /// A store with a recorder and nothing else (no observer, no interceptor) commits on its fast paths, which must
  /// hand every commit to the recorder: each way in is recorded, in order, and the recording replays to the state.
  ///
  /// The same with a pass-through interceptor of either form: every commit then comes through the chain's end.
  @Test(arguments: [RecorderChain.none, .closure, .dispatchInterceptor])
  func everyWayIn_onAStoreWithOnlyARecorder_isRecorded_andReplays(chain: RecorderChain) async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let store: RecStore
    switch chain {
    case .none: store = RecStore(initialState: RecCounterState())
    case .closure:
      store = RecStore(initialState: RecCounterState(), interceptors: [{ _ in { next in { try await next($0) } } }])
    case .dispatchInterceptor:
      store = RecStore(
        initialState: RecCounterState(),
        configuration: StoreConfiguration(dispatchInterceptors: [RecPassThrough()]))
    }
    try recorder.attach(to: store)
    try await store.dispatch(RecAdd(amount: 1))
    _ = try await store.anyDispatch(RecAdd(amount: 2))
    _ = await store.send(RecAdd(amount: 3)).result
    _ = await store.anySend(RecAdd(amount: 4)).result
    #expect(try await store.dispatch(RecAddReturning(amount: 5)) == 15)
    try await store.scope(\.cart, dependencies: \.self).dispatch(FeatAddToCart(value: 6))
    try await store.dispatch(RecAddAll(amounts: [7, 8]))
    let recording = recorder.recording()
    #expect(recording.commits.map(\.sequence) == Array(1...8))
    #expect(recording.commits.compactMap { ($0.base as? RecAdd)?.amount } == [1, 2, 3, 4, 7, 8])
    #expect(recording.commits[5].scope != nil)
    #expect(try recording.replayedState() == store.state)
    // The side effect is recorded, and its two commits name it as their cause; the others have none.
    #expect(recording.effects.count == 1)
    let effect = try #require(recording.effects.first)
    #expect(effect.sideEffect is RecAddAll && effect.outcome.map { "\($0)" } == "completed")
    #expect(recording.commits.map(\.cause) == [nil, nil, nil, nil, nil, nil, effect.id, effect.id])
  }

  /// Many commits from several tasks at once, on a store with only a recorder (each commit on whichever path its
  /// arrival finds: at once, or after waiting for its turn): every one is recorded, numbered in commit order, and
  /// the recording replays to the store's state.
  @Test func concurrentCommits_areAllRecorded_inCommitOrder() async throws {
    let recorder = StoreRecorder<RecCounterState>(capacity: 100_000, checkpointInterval: 64)
    let store = RecStore(initialState: RecCounterState())
    try recorder.attach(to: store)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<4 {
        group.addTask {
          for index in 0..<500 {
            if index % 2 == 0 {
              try await store.dispatch(RecAdd(amount: task))
            } else {
              _ = await store.send(RecAdd(amount: task)).result
            }
          }
        }
      }
      try await group.waitForAll()
    }
    let recording = recorder.recording()
    // Compared by count and gaps, so that a failure reads in one line.
    #expect(recording.commits.count == 2_000)
    let gaps = zip(recording.commits, recording.commits.dropFirst()).filter { $1.sequence != $0.sequence + 1 }
    #expect(gaps.isEmpty, "numbers skipped after \(gaps.prefix(3).map(\.0.sequence))")
    #expect(try recording.replayedState() == store.state)
    #expect(recording.commits.compactMap { ($0.updater as? RecAdd)?.amount } == store.state.history)
  }

  /// Side effects and plain dispatches from many tasks at once, on a store with only a recorder: whether a commit reads
  /// its cause depends on whether some binding is alive at that moment, somewhere (``RecorderCauses``), which these
  /// interleavings keep changing. Every commit a side effect's task made (awaited, sent, or from a task it started)
  /// names that side effect; every plain one names none.
  @Test func concurrentSideEffectsAndPlainDispatches_eachCommitNamesItsOwnCause() async throws {
    let recorder = StoreRecorder<RecCounterState>(capacity: 100_000, checkpointInterval: 256)
    let store = RecStore(initialState: RecCounterState())
    try recorder.attach(to: store)
    let rounds = 200 * soakFactor
    let started = LockedValue<[Task<Void, any Error>]>([])
    let sent = LockedValue<[DispatchHandle<Void>]>([])
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<4 {
        group.addTask {
          for round in 0..<rounds {
            // Tags 1 to 999 for side effects, one per task and round; plain dispatches add 0.
            if (round + task) % 3 == 0 {
              try await store.dispatch(RecAdd(amount: 0))
              let handle = store.send(RecAdd(amount: 0))
              sent.withLock { $0.append(handle) }
            } else {
              try await store.dispatch(
                RecTaggedEffect(tag: 1 + task * rounds + round, count: 3, started: started, sent: sent))
            }
          }
        }
      }
      try await group.waitForAll()
    }
    // The tasks the side effects started and did not await, and what was sent: then every commit is in.
    for task in started.withLock({ $0 }) { try await task.value }
    for handle in sent.withLock({ $0 }) { try await handle.value }
    let expectedCommits = store.state.history.count
    let recording = recorder.recording()
    #expect(recording.commits.count == expectedCommits)
    var tagOfEffect: [Int: Int] = [:]
    for effect in recording.effects {
      if let tagged = effect.sideEffect as? RecTaggedEffect { tagOfEffect[effect.id] = tagged.tag }
    }
    var wrong: [String] = []
    for commit in recording.commits {
      let amount = (commit.updater as? RecAdd)?.amount ?? -1
      let named = commit.cause.flatMap { tagOfEffect[$0] }
      if amount == 0 ? commit.cause != nil : named != amount {
        wrong.append("commit \(commit.sequence) of \(amount) names \(commit.cause.map { "\($0)" } ?? "no cause")")
      }
    }
    #expect(wrong.isEmpty, "\(wrong.count) commits name another cause: \(wrong.prefix(5))")
    #expect(!store.core.withLock { _ in store.core.recorderCauses.anyAlive })
  }

  /// Attached while the store is still starting, the recorder starts from the state the store starts from, even if
  /// nothing is committed (found by the observation fuzzer: the empty recording replayed to `S()`).
  @Test func attachedWhileStarting_startsFromTheStartUpState() async throws {
    let gate = Gate()
    let store = RecStore(stateInitializer: {
      await gate.waitIgnoringCancellation()
      return RecCounterState(count: 7)
    })
    let recorder = StoreRecorder<RecCounterState>()
    try recorder.attach(to: store)
    gate.open()
    try await store.waitUntilReady()
    #expect(recorder.recording().initialState.count == 7)
    #expect(try recorder.recording().replayedState() == store.state)
    try await store.dispatch(RecAdd(amount: 1))
    #expect(recorder.recording().initialState.count == 7)
    #expect(try recorder.recording().replayedState() == store.state)
  }

  /// Attached while the store is away from live (another recorder's time travel), the recorder starts from the live
  /// state, which the store's next commit follows, not from the recorded state on show.
  @Test func attachedWhileAwayFromLive_startsFromTheLiveState() async throws {
    let store = RecStore(initialState: RecCounterState())
    let traveller = StoreRecorder<RecCounterState>()
    try traveller.attach(to: store)
    for amount in [1, 10] { try await store.dispatch(RecAdd(amount: amount)) }
    try await traveller.travel(store, to: 1)
    #expect(store.state.count == 1)
    let recorder = StoreRecorder<RecCounterState>()
    try recorder.attach(to: store)
    try await traveller.returnToLive(store)
    try await store.dispatch(RecAdd(amount: 100))
    #expect(recorder.recording().initialState.count == 11)
    #expect(try recorder.recording().replayedState() == store.state)
  }

  /// Attached later, the recorder starts from the store's state then.
  @Test func attachedLater_startsFromTheStateThen() async throws {
    let store = RecStore(initialState: RecCounterState())
    try await store.dispatch(RecAdd(amount: 1))
    let recorder = StoreRecorder<RecCounterState>()
    try recorder.attach(to: store)
    try await store.dispatch(RecAdd(amount: 2))
    let recording = recorder.recording()
    #expect(recording.initialState.count == 1)
    #expect(recording.commits.count == 1)
    #expect(try recording.replayedState() == store.state)
  }

  /// A recorder follows one store: attaching it to the same store again does nothing, to another throws.
  @Test func attach_followsOneStore() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let store = RecStore(initialState: RecCounterState())
    try recorder.attach(to: store)
    try recorder.attach(to: store)
    try await store.dispatch(RecAdd(amount: 1))
    #expect(recorder.recording().commits.count == 1)
    let other = RecStore(initialState: RecCounterState())
    #expect {
      try recorder.attach(to: other)
    } throws: { error in
      guard case RecorderError.anotherStore = error else { return false }
      return true
    }
  }

  /// `commits(after:)` reads only what came after the number asked for, in order; after the recorder dropped
  /// commits, the first one read is past the gap.
  @Test func commitsAfter_readsOnlyWhatIsNew() async throws {
    let recorder = StoreRecorder<RecCounterState>(capacity: 10, checkpointInterval: 5)
    let store = RecStore(initialState: RecCounterState())
    try recorder.attach(to: store)
    for amount in 1...4 { try await store.dispatch(RecAdd(amount: amount)) }
    #expect(recorder.commits(after: 0).map(\.sequence) == [1, 2, 3, 4])
    #expect(recorder.commits(after: 2).map(\.sequence) == [3, 4])
    #expect(recorder.commits(after: 4).isEmpty)
    #expect(recorder.commits(after: 99).isEmpty)
    for amount in 5...13 { try await store.dispatch(RecAdd(amount: amount)) }
    // 11 commits made the recorder drop up to its oldest checkpoint (5): it keeps 6...13.
    #expect(recorder.commits(after: 2).map(\.sequence) == Array(6...13))
    #expect(recorder.commits(after: 9).map(\.sequence) == [10, 11, 12, 13])
    #expect(recorder.recording().commits.map(\.sequence) == Array(6...13))
    #expect(try recorder.recording().replayedState() == store.state)
  }

  /// `effects(changedSince:)` reads the side effects that started or ended since the last read.
  @Test func effectsChangedSince_readsWhatStartedOrEnded() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let store = RecStore(initialState: RecCounterState())
    try recorder.attach(to: store)
    try await store.dispatch(RecAddAll(amounts: [1]))
    let (started, gate) = (Gate(), Gate())
    let running = store.send(RecWaitThenAdd(started: started, gate: gate))
    await started.waitIgnoringCancellation()
    try await store.dispatch(RecAddAll(amounts: [2]))
    // 1 ended, 2 runs (waiting), 3 ended.
    let (all, version) = recorder.effects(changedSince: 0)
    #expect(all.map(\.id) == [1, 2, 3])
    #expect(all.map { $0.outcome == nil } == [false, true, false])
    #expect(recorder.effects(changedSince: version).effects.isEmpty)
    gate.open()
    _ = await running.result
    // Only 2 changed since: it ended.
    let (changed, later) = recorder.effects(changedSince: version)
    #expect(changed.map(\.id) == [2] && changed.first?.outcome != nil)
    #expect(recorder.effects(changedSince: later).effects.isEmpty)
    #expect(recorder.recording().commits.last?.cause == 2)
  }

  /// A side effect of one store that dispatches to another is no cause there: the other store's commit has none.
  @Test func aSideEffectOfAnotherStore_isNoCause() async throws {
    let (first, second) = (StoreRecorder<RecCounterState>(), StoreRecorder<RecCounterState>())
    let (one, other) = (RecStore(initialState: RecCounterState()), RecStore(initialState: RecCounterState()))
    try first.attach(to: one)
    try second.attach(to: other)
    try await one.dispatch(RecDispatchElsewhere(other: other))
    #expect(first.recording().commits.map(\.cause) == [1])
    #expect(second.recording().commits.map(\.cause) == [nil])
  }

  /// A commit reads its cause only while one of the store's side-effect bindings is alive (``StoreCore/recorderCauses``).
  /// A task a side effect started carries the binding past the effect's end: its commit, made once the effect has
  /// returned and no other side effect runs, still names the effect. Once the task is gone, none is alive.
  @Test func aTaskStartedByASideEffect_namesItAsTheCause_afterTheEffectReturned() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let store = RecStore(initialState: RecCounterState())
    try recorder.attach(to: store)
    let (gate, started) = (Gate(), LockedValue<Task<Void, any Error>?>(nil))
    try await store.dispatch(RecDispatchLater(gate: gate, started: started))
    let effect = try #require(recorder.recording().effects.first)
    #expect(effect.outcome.map { "\($0)" } == "completed")
    #expect(store.core.withLock { _ in store.core.recorderCauses.anyAlive })
    try await store.dispatch(RecAdd(amount: 5))
    gate.open()
    let task = try #require(started.withLock { $0 })
    try await task.value
    #expect(recorder.recording().commits.map(\.cause) == [nil, effect.id])
    #expect(!store.core.withLock { _ in store.core.recorderCauses.anyAlive })
  }

  /// An updater a side effect sent, applied after the effect returned (the store's turn was held until then), names
  /// the effect: the sent work carries the binding.
  @Test func anUpdaterSentByASideEffect_appliedAfterItReturned_namesItAsTheCause() async throws {
    let recorder = StoreRecorder<RecCounterState>()
    let (gate, holding) = (Gate(), Gate())
    let holder: StoreInterceptor = { _ in
      { next in
        { item in
          if (item as? RecAdd)?.amount == 9 {
            holding.open()
            await gate.wait()
          }
          try await next(item)
        }
      }
    }
    let store = RecStore(initialState: RecCounterState(), interceptors: [holder])
    try recorder.attach(to: store)
    let held = Task { try await store.dispatch(RecAdd(amount: 9)) }
    await holding.wait()
    let sent = LockedValue<DispatchHandle<Void>?>(nil)
    try await store.dispatch(RecSendAndReturn(sent: sent))
    gate.open()
    try await held.value
    try await #require(sent.withLock { $0 }).value
    let recording = recorder.recording()
    let effect = try #require(recording.effects.first)
    #expect(recording.commits.compactMap { ($0.base as? RecAdd)?.amount } == [9, 2])
    #expect(recording.commits.map(\.cause) == [nil, effect.id])
    #expect(!store.core.withLock { _ in store.core.recorderCauses.anyAlive })
  }

  /// A full recorder releases what it drops (the updaters of the commits before its new initial state).
  @Test func droppedCommits_areReleased() async throws {
    let counter = RecReleaseCounter()
    let recorder = StoreRecorder<RecCounterState>(capacity: 10, checkpointInterval: 5)
    let store = RecStore(initialState: RecCounterState())
    try recorder.attach(to: store)
    for _ in 0..<11 { try await store.dispatch(RecTrackedAdd(tracked: RecTracked(counter))) }
    #expect(counter.released.withLock { $0 } == 5)
    recorder.reset()
    #expect(counter.released.withLock { $0 } == 11)
  }
}
