import Foundation
import KatanaTestSupport
import Testing

@testable import Katana

/// Sends `amounts` from its own task, and waits for each.
struct RecSendAll: SideEffect {
  let amounts: [Int]
  func sideEffect(_ context: SideEffectContext<RecCounterState, EmptySideEffectDependencyContainer>) async throws {
    for amount in amounts { try await context.send(RecAdd(amount: amount)).value }
  }
}

/// STYLE 11: the recorder's fast path (a commit that concerns only the recorders appended in the fast path's first
/// critical section, ``CoreState/commitIfOnlyLogged(_:released:_:)``, its cause read only while one of the store's
/// side effects is bound as a cause, ``RecorderCauses``) against its plain twin, the same store with
/// `forcesPlainPath` (every commit through the interceptor chain and the noticed commit transition, every cause read
/// from the task-local), on the same seeded sequences of every way in.
@Suite("StoreRecorder: the fast path against its plain twin", .timeLimit(.failsafeMinutes(3)))
struct RecorderPlainTwinTests {
  /// What a recording says, in a form two runs compare: each commit's number, updater and cause, each side effect's
  /// number, type, cause and outcome, and the states it replays to.
  struct Summary: Equatable {
    var commits: [String] = []
    var effects: [String] = []
    var replayed: RecCounterState?
    var initial: RecCounterState?
  }

  static func summary(_ recording: Recording<RecCounterState>) -> Summary {
    Summary(
      commits: recording.commits.map { "\($0.sequence) \($0.base) scope:\($0.scope != nil) cause:\($0.cause ?? 0)" },
      effects: recording.effects.map {
        "\($0.id) \(type(of: $0.sideEffect)) cause:\($0.cause ?? 0) \($0.outcome.map { "\($0)" } ?? "running")"
      },
      replayed: try? recording.replayedState(), initial: recording.initialState)
  }

  /// Runs `steps` operations chosen by `seed`, one after another, on a store with a recorder (and, if `second`, a
  /// second one with another capacity and interval, which is never reset or drained); returns the drained recordings
  /// and the last one of each.
  static func run(seed: UInt64, steps: Int, plain: Bool, second: Bool = false) async throws -> [Summary] {
    var configuration = StoreConfiguration()
    configuration.forcesPlainPath = plain
    let store = RecStore(initialState: RecCounterState(), configuration: configuration)
    let recorder = StoreRecorder<RecCounterState>(capacity: 40, checkpointInterval: 8)
    try recorder.attach(to: store)
    // Two logs: the fast path walks them all (one log alone takes a shorter way).
    let other = StoreRecorder<RecCounterState>(capacity: 300, checkpointInterval: 7)
    if second { try other.attach(to: store) }
    var generator = SeededGenerator(seed: seed)
    var summaries: [Summary] = []
    for step in 0..<steps {
      let amount = step % 7
      switch generator.next() % 10 {
      case 0: try await store.dispatch(RecAdd(amount: amount))
      case 1: _ = try await store.anyDispatch(RecAdd(amount: amount))
      case 2: _ = await store.send(RecAdd(amount: amount)).result
      case 3: _ = await store.anySend(RecAdd(amount: amount)).result
      case 4: _ = try await store.dispatch(RecAddReturning(amount: amount))
      case 5: try await store.scope(\.cart, dependencies: \.self).dispatch(FeatAddToCart(value: amount))
      case 6: try await store.dispatch(RecAddAll(amounts: [amount, amount + 1]))
      case 7:
        switch generator.next() % 3 {
        case 0: _ = try? await store.dispatch(RecFailingEffect())
        case 1:
          // Sent from a side effect: the sender is the cause, whether the store applies it at once or later.
          try await store.dispatch(RecSendAll(amounts: [amount, amount + 2]))
        default:
          // From a task the side effect started, after the effect returned: the fast path reads the cause only while
          // the store counts a binding alive, the plain one always.
          let (gate, started) = (Gate(), LockedValue<Task<Void, any Error>?>(nil))
          try await store.dispatch(RecDispatchLater(gate: gate, started: started))
          if generator.next() % 2 == 0 { try await store.dispatch(RecAdd(amount: amount)) }
          gate.open()
          try await started.withLock { $0 }?.value
        }
      case 8:
        let drained = try await recorder.drain(store)
        // Nothing runs between two steps: the drained commits replay to the store's state, and are numbered one after
        // the other (what the log's chunks keep, checked against the store itself).
        Self.expectWhole(drained, replaysTo: store.state, seed: seed, step: step)
        summaries.append(summary(drained))
      default: recorder.reset()
      }
    }
    let recording = recorder.recording()
    Self.expectWhole(recording, replaysTo: store.state, seed: seed, step: steps)
    summaries.append(summary(recording))
    if second {
      let whole = other.recording()
      Self.expectWhole(whole, replaysTo: store.state, seed: seed, step: steps)
      summaries.append(summary(whole))
    }
    return summaries
  }

  /// Expects `recording` to replay to `state`, its commits numbered one after the other.
  static func expectWhole(
    _ recording: Recording<RecCounterState>, replaysTo state: RecCounterState, seed: UInt64, step: Int
  ) {
    #expect(
      (try? recording.replayedState()) == state,
      "seed \(seed), step \(step): \(recording.commits.count) commits from \(recording.initialState)")
    let numbers = recording.commits.map(\.sequence)
    #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 + 1 == $1 }, "seed \(seed), step \(step)")
  }

  @Test(arguments: 0..<40)
  func fastPath_recordsWhatThePlainPathRecords(seed: Int) async throws {
    // One seed in three with a second recorder on the store.
    let second = seed % 3 == 2
    let fast = try await Self.run(seed: UInt64(seed) &+ 1, steps: 120, plain: false, second: second)
    let plain = try await Self.run(seed: UInt64(seed) &+ 1, steps: 120, plain: true, second: second)
    #expect(fast == plain)
    #expect(fast.allSatisfy { $0.replayed != nil })
  }
}

@Suite("Recording: the state a travel moves to", .timeLimit(.failsafeMinutes(3)))
struct TravelTargetTwinTests {
  /// A travel starts from the last checkpoint at or before its commit; its plain twin replays every commit from the
  /// recording's initial state. Both give the same state after every commit, through scopes too, after drops.
  @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
  func fromTheCheckpoint_isThePlainReplay(seed: UInt64) async throws {
    var generator = SeededGenerator(seed: seed)
    let recorder = StoreRecorder<RecCounterState>(
      capacity: 20 + Int(generator.next() % 40), checkpointInterval: 1 + Int(generator.next() % 9))
    let store = RecStore(initialState: RecCounterState(rooms: [FeatRoom(id: 1)]))
    try recorder.attach(to: store)
    let room = store.scope(\.rooms, id: 1, dependencies: \.self)
    for _ in 0..<(30 + Int(generator.next() % 60)) {
      if generator.next() % 3 == 0 {
        try await room.dispatch(FeatPost(text: "\(generator.next() % 10)"))
      } else {
        try await store.dispatch(RecAdd(amount: Int(generator.next() % 10)))
      }
    }
    let recording = recorder.recording()
    let first = try #require(recording.commits.first?.sequence) - 1
    #expect(!recording.checkpoints.isEmpty)
    for sequence in first...(first + recording.commits.count) {
      let fast = try recording.replayedState(after: sequence, fromCheckpoint: true)
      let plain = try recording.replayedState(after: sequence, fromCheckpoint: false)
      #expect(fast == plain, "seed \(seed), commit \(sequence)")
    }
    let middle = first + recording.commits.count / 2
    let expected = try recording.replayedState(after: middle, fromCheckpoint: false)
    try await recorder.travel(store, to: middle)
    #expect(store.state == expected)
    try await recorder.returnToLive(store)
  }
}
