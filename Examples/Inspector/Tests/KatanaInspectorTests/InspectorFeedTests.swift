import Foundation
import Katana
import Testing

@testable import KatanaInspector

/// The feed alone: what a connection sends, given what the recorder holds.
@Suite struct InspectorFeedTests {
  @Test func next_givesCommitsInOrder_inBatchesOfAtMostTheMaximum() async throws {
    let recorder = StoreRecorder<TotalState>(capacity: 1_000)
    let store = TotalStore(initialState: TotalState(), interceptors: [recorder.interceptor])
    for amount in 1...25 { try await store.dispatch(Add(amount: amount)) }
    var feed = InspectorFeed(maximumBatch: 10)
    var sequences: [Int] = []
    while let batch = feed.next(from: recorder) {
      #expect(batch.items.count <= 10)
      #expect(batch.dropped == 0)
      sequences += batch.items.map(\.id)
    }
    #expect(sequences == Array(1...25))
    let none = feed.next(from: recorder)
    #expect(none == nil)
  }

  @Test func next_whenTheWindowMovedPastTheFeed_countsTheCommitsItMissed() async throws {
    let recorder = StoreRecorder<TotalState>(capacity: 10, checkpointInterval: 5)
    let store = TotalStore(initialState: TotalState(), interceptors: [recorder.interceptor])
    for amount in 1...3 { try await store.dispatch(Add(amount: amount)) }
    var feed = InspectorFeed(maximumBatch: 100)
    let firstBatch = feed.next(from: recorder)
    let first = try #require(firstBatch)
    #expect(first.items.map(\.id) == [1, 2, 3])
    for amount in 4...50 { try await store.dispatch(Add(amount: amount)) }
    let oldest = try #require(recorder.commits(after: 0).first?.sequence)
    let secondBatch = feed.next(from: recorder)
    let second = try #require(secondBatch)
    #expect(second.dropped == oldest - 4)
    #expect(second.items.map(\.id) == Array(oldest...50))
    // Every commit is either sent or counted.
    #expect(first.items.count + second.items.count + second.dropped == 50)
  }

  /// A page that fell behind the window goes on from the newest commits: the oldest kept are about to leave the
  /// window too, and sending them would keep the page as far behind as the window is long.
  @Test func next_whenBehindTheWindowByMoreThanABatch_goesOnFromTheNewest() async throws {
    let recorder = StoreRecorder<TotalState>(capacity: 100, checkpointInterval: 10)
    let store = TotalStore(initialState: TotalState())
    try recorder.attach(to: store)
    for amount in 1...3 { try await store.dispatch(Add(amount: amount)) }
    var feed = InspectorFeed(maximumBatch: 10)
    let firstBatch = feed.next(from: recorder)
    let first = try #require(firstBatch)
    #expect(first.items.map(\.id) == [1, 2, 3])
    // A side effect among the commits the page will skip (it adds commit 150): skipped with them.
    for amount in 4...149 { try await store.dispatch(Add(amount: amount)) }
    try? await store.dispatch(AddThenFail())
    for amount in 151...300 { try await store.dispatch(Add(amount: amount)) }
    let secondBatch = feed.next(from: recorder)
    let second = try #require(secondBatch)
    #expect(second.items.map(\.id) == Array(291...300))
    #expect(second.items.allSatisfy { $0.kind == "commit" })
    #expect(second.dropped == 300 - 3 - 10)
    #expect(!feed.hasMore)
    // Within the window again, nothing more is skipped: a side effect now is sent.
    for amount in 301...305 { try await store.dispatch(Add(amount: amount)) }
    try? await store.dispatch(AddThenFail())
    let thirdBatch = feed.next(from: recorder)
    let third = try #require(thirdBatch)
    #expect(third.items.filter { $0.kind == "commit" }.map(\.id) == Array(301...306))
    #expect(third.items.filter { $0.kind == "sideEffect" }.map(\.id) == [2])
    #expect(third.dropped == second.dropped)
  }

  /// A page behind a busy store (more commits waiting than a batch) gets no side effect ahead of the commits of its
  /// time: its timeline would otherwise end with side effects whose commits it has not got yet (the browser test
  /// saw a screen of them at 60,000 commits a second).
  @Test func next_whenCommitsWait_holdsSideEffectsThatStartedAfterTheLastCommitSent() async throws {
    let recorder = StoreRecorder<TotalState>(capacity: 1_000, checkpointInterval: 10)
    let store = TotalStore(initialState: TotalState())
    try recorder.attach(to: store)
    for round in 0..<4 {
      for amount in 1...15 { try await store.dispatch(Add(amount: round * 100 + amount)) }
      try? await store.dispatch(AddThenFail())
    }
    var feed = InspectorFeed(maximumBatch: 10)
    var newestCommit: Int64 = .min
    var commits: [Int] = []
    var effects: [Int] = []
    while let batch = feed.next(from: recorder) {
      for item in batch.items where item.kind == "commit" {
        commits.append(item.id)
        newestCommit = max(newestCommit, item.start)
      }
      for item in batch.items where item.kind == "sideEffect" {
        #expect(!item.update)
        #expect(item.start <= newestCommit, "side effect e\(item.id) sent before the commits of its time")
        #expect(item.outcome?.hasPrefix("failed") == true)
        effects.append(item.id)
      }
    }
    #expect(commits == Array(1...64))
    #expect(effects == [1, 2, 3, 4])
  }

  /// The feed's thread may pause between its two reads of the recorder (on a busy machine, or while a read copies
  /// thousands of entries, for tens of milliseconds): the read that comes second sees what happened meanwhile. No
  /// batch sends a side effect ahead of the commits of its time, nor a commit ahead of a side effect that started
  /// before it (read side effects first, the commits made in the pause went out without theirs, and the page's
  /// timeline ended with a screen of commits until the next batch).
  @Test func next_whenTheStoreMovesBetweenItsTwoReads_sendsNoItemAheadOfTheOthersOfItsTime() async throws {
    let recorder = StoreRecorder<TotalState>(capacity: 1_000, checkpointInterval: 10)
    let store = TotalStore(initialState: TotalState())
    try recorder.attach(to: store)
    for amount in 1...3 { try await store.dispatch(Add(amount: amount)) }
    let paused = PausingSource(recorder: recorder)
    // What the first read of the next batch sees; then side effects and their commits, in the pause.
    paused.takeSnapshot()
    for amount in 4...6 {
      try? await store.dispatch(AddThenFail())
      try await store.dispatch(Add(amount: amount))
    }
    var feed = InspectorFeed(maximumBatch: 100)
    var newestCommit: Int64 = .min
    var effects: [Int] = []
    // After each batch: the newest commit the page has, and the side effects it has.
    var sent: [(newestCommit: Int64, effects: Set<Int>)] = []
    while let batch = feed.next(from: paused) {
      for item in batch.items where item.kind == "commit" { newestCommit = max(newestCommit, item.start) }
      for item in batch.items where item.kind == "sideEffect" && !item.update {
        #expect(item.start <= newestCommit, "side effect e\(item.id) sent before the commits of its time")
        effects.append(item.id)
      }
      sent.append((newestCommit, Set(effects)))
    }
    #expect(effects == [1, 2, 3])
    for effect in recorder.effects(changedSince: 0).effects {
      for (index, page) in sent.enumerated() where InspectorFeed.microseconds(effect.start) < page.newestCommit {
        #expect(page.effects.contains(effect.id), "batch \(index) sent commits after e\(effect.id) without it")
      }
    }
  }

  /// However far behind the page is, a side effect waits for the commits of its time (however many are held): the
  /// page's timeline never ends with side effects whose commits it has not got.
  @Test func next_holdsEverySideEffectUntilTheCommitsOfItsTime() async throws {
    let recorder = StoreRecorder<TotalState>(capacity: 1_000, checkpointInterval: 10)
    let store = TotalStore(initialState: TotalState())
    try recorder.attach(to: store)
    for amount in 1...5 { try await store.dispatch(Add(amount: amount)) }
    for _ in 0..<10 { try? await store.dispatch(AddThenFail()) }
    var feed = InspectorFeed(maximumBatch: 1)
    let firstBatch = feed.next(from: recorder)
    let first = try #require(firstBatch)
    #expect(first.items.map(\.kind) == ["commit"])
    #expect(feed.hasMore)
    var newestCommit = first.items[0].start
    var effects: [Int] = []
    while let batch = feed.next(from: recorder) {
      for item in batch.items where item.kind == "commit" { newestCommit = max(newestCommit, item.start) }
      for item in batch.items where item.kind == "sideEffect" {
        #expect(item.start <= newestCommit, "side effect e\(item.id) sent before the commits of its time")
        effects.append(item.id)
      }
    }
    #expect(effects == Array(1...10))
  }

  @Test func next_sendsASideEffectWhenItStarts_andAgainWhenItEnds() async throws {
    let recorder = StoreRecorder<TotalState>()
    let store = TotalStore(initialState: TotalState(), interceptors: [recorder.interceptor])
    await #expect(throws: Fail.self) { try await store.dispatch(AddThenFail()) }
    var feed = InspectorFeed(maximumBatch: 100)
    let next = feed.next(from: recorder)
    let batch = try #require(next)
    let effect = try #require(batch.items.first { $0.kind == "sideEffect" })
    #expect(effect.type == "AddThenFail")
    #expect(effect.outcome?.hasPrefix("failed") == true)
    let commit = try #require(batch.items.first { $0.kind == "commit" })
    #expect(commit.cause == effect.id)
    let none = feed.next(from: recorder)
    #expect(none == nil)
  }

  @Test func states_areTheStatesAfterTheCommitAndBeforeIt_fromTheNearestCheckpoint() async throws {
    let recorder = StoreRecorder<TotalState>(capacity: 100, checkpointInterval: 4)
    let store = TotalStore(initialState: TotalState(), interceptors: [recorder.interceptor])
    for amount in 1...10 { try await store.dispatch(Add(amount: amount)) }
    let recording = recorder.recording()
    for sequence in 1...10 {
      let (state, previous) = try CommitStates.states(at: sequence, in: recording)
      #expect(state.amounts == Array(1...sequence))
      #expect(previous?.amounts == Array(1..<sequence))
    }
    #expect(try CommitStates.states(at: 0, in: recording).0 == TotalState())
    #expect(throws: CommitStates.Failure.self) { try CommitStates.states(at: 11, in: recording) }
  }
}

/// The hand-written batch JSON against its plain twin, `JSONEncoder`.
@Suite struct BatchJSONTests {
  static let awkward = [
    "plain", "quote \" and backslash \\", "line\nbreak\ttab\r", "control \u{01}\u{1F}", "é ✓ 🚀", "",
  ]

  @Test func batch_isTheSameJSONAsTheEncoders() throws {
    var items: [TimelineItem] = []
    for (index, text) in Self.awkward.enumerated() {
      items.append(
        TimelineItem(
          kind: index % 2 == 0 ? "commit" : "sideEffect", id: index, type: text, scope: index % 3 == 0 ? nil : text,
          cause: index % 2 == 0 ? nil : index, start: Int64(index) * 1_000, duration: index % 2 == 0 ? nil : 7,
          outcome: index == 1 ? nil : "failed: \(text)", update: index == 3))
    }
    for live in [true, false] {
      let batch = FeedBatch(items: items, dropped: 3, lastSequence: 42)
      let fast = try JSONSerialization.jsonObject(
        with: Data(ServerMessage.batch(batch, live: live, refused: 3, answers: 2).utf8))
      let plain = try JSONSerialization.jsonObject(
        with: Data(ServerMessage.batchWithEncoder(batch, live: live, refused: 3, answers: 2).utf8))
      // JSONEncoder leaves nil fields out where the hand-written JSON writes null: the page reads both alike.
      #expect((withoutNulls(fast) as? NSDictionary) == (plain as? NSDictionary))
    }
    let empty = try JSONSerialization.jsonObject(
      with: Data(ServerMessage.batch(FeedBatch(), live: true, refused: 0, answers: 0).utf8))
    #expect((empty as? [String: Any])?["items"] as? [Any] != nil)
  }
}

/// A recorder read as if the feed's thread paused between its two reads: after ``takeSnapshot()``, the first read of
/// the next call of `next` sees the recorder as it was then, and the second read sees it as it is.
private final class PausingSource: FeedReadable, @unchecked Sendable {
  // Unchecked: used by one test, on one task.
  let recorder: StoreRecorder<TotalState>
  private var snapshot: (commits: [RecordedCommit], effects: [RecordedEffect], version: Int)?
  private var readsSinceSnapshot = 0

  init(recorder: StoreRecorder<TotalState>) { self.recorder = recorder }

  func takeSnapshot() {
    let (effects, version) = recorder.effects(changedSince: 0)
    snapshot = (recorder.commits(after: 0), effects, version)
    readsSinceSnapshot = 0
  }

  func commits(after sequence: Int) -> [RecordedCommit] {
    readsSinceSnapshot += 1
    if readsSinceSnapshot == 1, let snapshot { return snapshot.commits.filter { $0.sequence > sequence } }
    return recorder.commits(after: sequence)
  }

  func effects(changedSince version: Int) -> (effects: [RecordedEffect], version: Int) {
    readsSinceSnapshot += 1
    if readsSinceSnapshot == 1, let snapshot { return (snapshot.effects, snapshot.version) }
    return recorder.effects(changedSince: version)
  }
}

/// `value` with the null members of its objects removed, at every depth.
private func withoutNulls(_ value: Any) -> Any {
  if let object = value as? [String: Any] {
    return object.filter { !($0.value is NSNull) }.mapValues(withoutNulls)
  }
  if let array = value as? [Any] { return array.map(withoutNulls) }
  return value
}
