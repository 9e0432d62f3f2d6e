import Foundation
import HummingbirdWebSocket
import Katana
import KatanaRecordingLog
import Testing

@testable import KatanaInspector

/// Skipping commits, making a test of a range, downloading the session as a log and opening one without a store,
/// and the count of what the store refused while away.
@Suite struct InspectorSessionTests {
  func makeInspected(_ configuration: InspectorConfiguration = .init(pollInterval: .milliseconds(1)))
    async throws -> (TotalStore, StoreRecorder<TotalState>, Inspector)
  {
    let recorder = StoreRecorder<TotalState>(capacity: 1_000, checkpointInterval: 4)
    let store = TotalStore(initialState: TotalState())
    try recorder.attach(to: store)
    let inspector = try await Inspector.start(
      store: store, recorder: recorder, registry: Self.registry, configuration: configuration)
    return (store, recorder, inspector)
  }

  static var registry: ReplayRegistry<TotalState> {
    var registry = ReplayRegistry<TotalState>()
    registry.register(Add.self, as: "add")
    return registry
  }

  @Test func aStateRequestWithSkippedCommits_answersTheStateWithoutThem() async throws {
    let (store, _, inspector) = try await makeInspected()
    for amount in 1...10 { try await store.dispatch(Add(amount: amount)) }
    try await converse(with: inspector) { page in
      try await page.send(#"{"type":"state","sequence":9,"skipped":[2,7,10]}"#)
      let reply = try await page.next("state")
      #expect(reply.skipped == [2, 7])
      #expect(reply.state == TotalState(total: 45 - 2 - 7, amounts: [1, 3, 4, 5, 6, 8, 9]))
      #expect(reply.previous == TotalState(total: 36 - 2 - 7, amounts: [1, 3, 4, 5, 6, 8]))
      // A skipped commit changes nothing: its state is the one before it.
      try await page.send(#"{"type":"state","sequence":7,"skipped":[7]}"#)
      let skipped = try await page.next("state")
      #expect(skipped.state == TotalState(total: 21, amounts: [1, 2, 3, 4, 5, 6]))
      #expect(skipped.previous == skipped.state)
    }
    await inspector.stop()
  }

  /// The skipping replay (from the last checkpoint before the first skipped commit) against the plain one: every
  /// commit but the skipped ones, from the recording's initial state.
  @Test(arguments: 0..<40 as Range<UInt64>)
  func skipping_isThePlainReplayWithoutTheSkippedCommits(seed: UInt64) throws {
    var generator = SeededGenerator(seed: seed)
    let count = 1 + Int(generator.next() % 30)
    let commits = (1...count).map {
      RecordedCommit(sequence: 100 + $0, time: .zero, updater: Add(amount: Int(generator.next() % 50)))
    }
    var states: [TotalState] = []
    var state = TotalState(total: 5, amounts: [5])
    for commit in commits {
      (commit.updater as? Add)?.updateState(&state)
      states.append(state)
    }
    let checkpoints = states.enumerated().filter { _ in generator.next() % 3 == 0 }.map {
      Recording<TotalState>.Checkpoint(sequence: 101 + $0.offset, state: $0.element)
    }
    let recording = Recording(
      initialState: TotalState(total: 5, amounts: [5]), commits: commits, checkpoints: checkpoints)
    let skipped = Set((101...(100 + count)).filter { _ in generator.next() % 4 == 0 })
    let sequence = 100 + Int(generator.next() % UInt64(count + 1))
    let (after, before) = try CommitStates.states(at: sequence, in: recording, skipping: skipped)
    func plain(upTo last: Int) -> TotalState {
      var state = recording.initialState
      for commit in commits where commit.sequence <= last && !skipped.contains(commit.sequence) {
        (commit.updater as? Add)?.updateState(&state)
      }
      return state
    }
    #expect(after == plain(upTo: sequence), "seed \(seed)")
    if sequence > 100 { #expect(before == plain(upTo: sequence - 1), "seed \(seed)") }
  }

  @Test func aTestRequest_answersASwiftTestingTestOfTheRange() async throws {
    let (store, _, inspector) = try await makeInspected()
    for amount in [1, 2, 3] { try await store.dispatch(Add(amount: amount)) }
    try await store.dispatch(Reset(reason: "not Codable"))
    try await converse(with: inspector) { page in
      try await page.send(#"{"type":"test","from":2,"to":3}"#)
      let test = try await page.next("test")
      let source = try #require(test.source)
      #expect(source.contains("@testable import KatanaInspectorTests"))
      #expect(source.contains("@Test func recordedSessionCommits2To3() async throws {"))
      #expect(
        source.contains(
          ##"initialState: try decode(KatanaInspectorTests.TotalState.self, #"{"amounts":[1],"total":1}"#))"##))
      #expect(
        source.contains(##"try await store.dispatch(try decode(KatanaInspectorTests.Add.self, #"{"amount":2}"#)) {"##))
      #expect(
        source.contains(##"$0 = try decode(KatanaInspectorTests.TotalState.self, #"{"amounts":[1,2,3],"total":6}"#)"##))
      for (request, expected) in [
        (#"{"type":"test","from":3,"to":4}"#, "Reset is not Codable"),
        (#"{"type":"test","from":0,"to":2}"#, "not a range the recording keeps (1 to 4)"),
        (#"{"type":"test","from":3,"to":2}"#, "not a range"),
        (#"{"type":"test","from":2}"#, "needs \"from\" and \"to\""),
      ] {
        try await page.send(request)
        let error = try await page.next("error")
        #expect(error.message?.contains(expected) == true, "\(request): \(error.message ?? "")")
      }
    }
    await inspector.stop()
  }

  @Test func rawLiteral_isDelimitedByWhatTheTextDoesNotHold() {
    #expect(SessionTest.rawLiteral(#"{"a":1}"#) == ##"#"{"a":1}"#"##)
    #expect(SessionTest.rawLiteral(##"{"a":"x"#"}"##) == ###"##"{"a":"x"#"}"##"###)
    #expect(SessionTest.rawLiteral(##"{"a":"\#(1)"}"##) == ###"##"{"a":"\#(1)"}"##"###)
  }

  @Test func theSession_downloadsAsALog_thatReadsBackToTheSameRecording() async throws {
    let (store, recorder, inspector) = try await makeInspected()
    for amount in [4, 5, 6] { try await store.dispatch(Add(amount: amount)) }
    let host = "Host: 127.0.0.1:\(inspector.port)\r\n"
    let withoutToken = try await httpStatusLine(
      port: inspector.port, request: "GET /session.katana.jsonl HTTP/1.1\r\n\(host)\r\n")
    #expect(withoutToken.contains("401"))
    let (status, body) = try await httpGet(port: inspector.port, path: "/session.katana.jsonl?token=\(inspector.token)")
    #expect(status == 200)
    let read = try RecordingLog.decode(body, registry: Self.registry)
    #expect(read.commits.map(\.sequence) == [1, 2, 3])
    #expect(try read.replayedState() == recorder.recording().replayedState())
    await inspector.stop()

    // Without a registry there is nothing to download.
    let plain = try await Inspector.start(store: store, recorder: recorder)
    let (missing, _) = try await httpGet(port: plain.port, path: "/session.katana.jsonl?token=\(plain.token)")
    #expect(missing == 404)
    await plain.stop()
  }

  @Test func aLogOpenedWithoutAStore_showsItsSession_andMovesNothing() async throws {
    let recorder = StoreRecorder<TotalState>(checkpointInterval: 2)
    let store = TotalStore(initialState: TotalState())
    try recorder.attach(to: store)
    for amount in [1, 2, 3] { try await store.dispatch(Add(amount: amount)) }
    try? await store.dispatch(AddThenFail())
    let log = try RecordingLog.encode(recorder.recording(), registry: Self.registry)
    let inspector = try await Inspector.open(log: Data(log.utf8), registry: Self.registry)
    try await converse(with: inspector) { page in
      let hello = try await page.next("hello")
      #expect(hello.canTravel == false)
      #expect(hello.canExport == true)
      var commits: [Int] = []
      var effects: [String] = []
      while commits.count < 4 || effects.isEmpty {
        let batch = try await page.next("batch")
        commits += batch.items?.filter { $0.kind == "commit" }.map(\.id) ?? []
        effects += batch.items?.filter { $0.kind == "sideEffect" }.compactMap(\.outcome) ?? []
        try await page.send(#"{"type":"ack"}"#)
      }
      #expect(commits == [1, 2, 3, 4])
      #expect(effects.count == 1 && effects[0].hasPrefix("failed"))
      try await page.send(#"{"type":"state","sequence":4}"#)
      #expect(try await page.next("state").state == TotalState(total: 106, amounts: [1, 2, 3, 100]))
      // A side effect read from a log is known by its type's name only.
      try await page.send(#"{"type":"effect","id":1}"#)
      let effect = try await page.next("effect")
      guard case .description(let text) = effect.payload?.value else {
        Issue.record("no description: \(String(describing: effect.payload))")
        return
      }
      #expect(text.contains("AddThenFail"))
      try await page.send(#"{"type":"effect","id":7}"#)
      #expect(try await page.next("error").message?.contains("not in the recorder's window") == true)
      try await page.send(#"{"type":"travel","sequence":1}"#)
      #expect(try await page.next("error").message?.contains("without a store") == true)
      try await page.send(#"{"type":"live"}"#)
      #expect(try await page.next("error").message?.contains("without a store") == true)
    }
    await inspector.stop()
    // A log that does not read is refused, naming its line; nothing is served.
    await #expect(throws: RecordingLogError.self) {
      _ = try await Inspector.open(log: Data((log + "{\"commit\": 0}\n").utf8), registry: Self.registry)
    }
  }

  /// Batches race the answers to moves: a batch that read whether the store is live before a move's answer was
  /// taken carries a lower number than the answer, so the page, which keeps the answer over such a batch, never
  /// shows a stale state. Every batch numbered at or above the last answer says what that answer says.
  @Test func aBatchNumberedAtOrAboveAnAnswer_agreesWithIt() async throws {
    // A window that keeps commit 3 however fast the writer goes.
    let recorder = StoreRecorder<TotalState>(capacity: 1 << 22, checkpointInterval: 1 << 20)
    let store = TotalStore(initialState: TotalState())
    try recorder.attach(to: store)
    let inspector = try await Inspector.start(
      store: store, recorder: recorder, configuration: .init(pollInterval: .milliseconds(1)))
    for amount in 1...5 { try await store.dispatch(Add(amount: amount)) }
    let writer = Task {
      while !Task.isCancelled {
        _ = try? await store.dispatch(Add(amount: 1))
        await Task.yield()
      }
    }
    try await converse(with: inspector) { page in
      var violations: [String] = []
      for round in 0..<100 {
        try await page.send(round % 2 == 0 ? #"{"type":"travel","sequence":3}"# : #"{"type":"live"}"#)
        // While the move is in flight, a batch may say either state.
        var reply: Message
        repeat {
          reply = try await page.next()
          if reply.type == "batch" { try await page.send(#"{"type":"ack"}"#) }
          if reply.type == "error" {
            Issue.record("round \(round): \(reply.message ?? "")")
            return
          }
        } while reply.type == "batch" || reply.type == "hello"
        let (answer, live) = (reply.answer ?? 0, reply.type == "live")
        // No move in flight now: every batch numbered at or above the answer says what the answer says, up to
        // the first such batch (the writer keeps committing, so one comes).
        while true {
          let batch = try await page.next("batch")
          try await page.send(#"{"type":"ack"}"#)
          guard let answers = batch.answers, answers >= answer else { continue }
          if batch.live != live {
            violations.append("round \(round): batch \(answers) says live \(String(describing: batch.live))")
          }
          break
        }
      }
      #expect(violations.isEmpty, "\(violations.prefix(5))")
    }
    writer.cancel()
    await inspector.stop()
  }

  @Test func anEffectRequest_answersTheSideEffectsPayload() async throws {
    let (store, _, inspector) = try await makeInspected()
    try? await store.dispatch(AddThenFail())
    try await converse(with: inspector) { page in
      try await page.send(#"{"type":"effect","id":1}"#)
      #expect(try await page.next("effect").payload?.value == .description("AddThenFail()"))
      try await page.send(#"{"type":"effect"}"#)
      #expect(try await page.next("error").message?.contains("needs an \"id\"") == true)
    }
    await inspector.stop()
  }

  @Test func aBatch_countsWhatTheStoreRefusedWhileAway() async throws {
    let (store, _, inspector) = try await makeInspected()
    for amount in [1, 2] { try await store.dispatch(Add(amount: amount)) }
    try await converse(with: inspector) { page in
      try await page.send(#"{"type":"travel","sequence":1}"#)
      _ = try await page.next("travelled")
      for _ in 0..<3 {
        await #expect(throws: TimeTravelError.self) { try await store.dispatch(Add(amount: 9)) }
      }
      while true {
        let batch = try await page.next("batch")
        try await page.send(#"{"type":"ack"}"#)
        if batch.refused == 3 {
          #expect(batch.live == false)
          break
        }
      }
      try await page.send(#"{"type":"live"}"#)
      // The reply to the return says how many were refused meanwhile.
      #expect(try await page.next("live").refused == 3)
    }
    await inspector.stop()
  }
}
