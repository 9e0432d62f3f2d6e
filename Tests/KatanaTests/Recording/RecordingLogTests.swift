import Foundation
import Katana
import KatanaRecordingLog
import KatanaTestSupport
import Testing

// MARK: - Fixtures: a Codable app with a feature at a field and one at an optional field

struct LogNotes: State, Equatable, Codable {
  var lines: [String] = []
}

struct LogRoom: State, Equatable, Codable, Identifiable {
  var id = ""
  var posts: [String] = []
}

struct LogShelf: State, Equatable, Codable {
  var notes = LogNotes()
}

struct LogAppState: State, Equatable, Codable {
  var total = 0
  var notes = LogNotes()
  var draft: LogNotes?
  var rooms: [LogRoom] = [LogRoom(id: "a"), LogRoom(id: "b")]
  var archive = LogShelf()
}

struct LogPost: StateUpdater, Codable {
  let text: String
  func updateState(_ state: inout LogRoom) { state.posts.append(text) }
}

struct LogAdd: StateUpdater, Codable, Equatable {
  let amount: Int
  // Wrapping: the log fuzzer replays any amount a mutated log gives, and a trap here would be the fixture's.
  func updateState(_ state: inout LogAppState) { state.total &+= amount }
}

struct LogOpenDraft: StateUpdater, Codable {
  func updateState(_ state: inout LogAppState) { state.draft = LogNotes() }
}

struct LogWrite: StateUpdater, Codable {
  let line: String
  func updateState(_ state: inout LogNotes) { state.lines.append(line) }
}

/// Not Codable: written by name only.
struct LogReset: StateUpdater {
  func updateState(_ state: inout LogAppState) { state.total = 0 }
}

struct LogAddTwice: SideEffect {
  func sideEffect(_ context: SideEffectContext<LogAppState, EmptySideEffectDependencyContainer>) async throws {
    try await context.dispatch(LogAdd(amount: 1))
    try await context.dispatch(LogAdd(amount: 2))
  }
}

typealias LogStore = Store<LogAppState, EmptySideEffectDependencyContainer>

func logRegistry() -> ReplayRegistry<LogAppState> {
  var registry = ReplayRegistry<LogAppState>()
  registry.register(LogAdd.self, as: "add")
  registry.register(LogOpenDraft.self, as: "draft.open")
  registry.register(LogWrite.self, as: "notes.write", at: \.notes)
  registry.register(LogWrite.self, as: "draft.write", at: \.draft)
  registry.register(LogWrite.self, as: "archive.write", at: \.archive.notes)
  registry.register(LogPost.self, as: "rooms.post", onElementsOf: \.rooms)
  return registry
}

/// A session with root, scoped and optional-scoped commits, a side effect, and checkpoints.
func recordLogSession(includeUnregistered: Bool = false) async throws -> (LogStore, Recording<LogAppState>) {
  let recorder = StoreRecorder<LogAppState>(checkpointInterval: 2)
  let store = LogStore(initialState: LogAppState(total: 10), interceptors: [recorder.interceptor])
  try await store.dispatch(LogAdd(amount: 5))
  try await store.scope(\.notes, dependencies: \.self).dispatch(LogWrite(line: "first"))
  try await store.dispatch(LogOpenDraft())
  try await store.scope(\.draft, dependencies: \.self).dispatch(LogWrite(line: "draft"))
  if includeUnregistered { try await store.dispatch(LogReset()) }
  try await store.dispatch(LogAddTwice())
  // A scope made in two steps, and scopes on elements.
  try await store.scope(\.archive, dependencies: \.self).scope(\.notes, dependencies: \.self).dispatch(
    LogWrite(line: "old"))
  try await store.scope(\.rooms, id: "b", dependencies: \.self).dispatch(LogPost(text: "hello b"))
  try await store.scope(\.rooms, id: "a", dependencies: \.self).dispatch(LogPost(text: "hello a"))
  return (store, recorder.recording())
}

// MARK: - Tests

@Suite("Recording log: JSON Lines", .timeLimit(.failsafeMinutes(3)))
struct RecordingLogTests {
  @Test func aSessionWrittenAndReadBack_replaysToTheSameStates() async throws {
    let (store, recording) = try await recordLogSession()
    let text = try RecordingLog.encode(recording, registry: logRegistry())
    let lines = text.split(separator: "\n")
    // The header, 9 commits, 4 checkpoints (every second commit) and the final one (after commit 9), one side
    // effect.
    #expect(lines.count == 16)
    #expect(lines[0].contains(#""format":"katana.recording""#) && lines[0].contains(#""version":2"#))
    #expect(lines[0].contains(#""stateType":"KatanaTests.LogAppState""#))
    #expect(lines[2].contains(#""scope":"LogAppState.notes""#) && lines[2].contains(#""type":"notes.write""#))

    let read = try RecordingLog.decode(text, registry: logRegistry())
    #expect(read.initialState == recording.initialState)
    #expect(read.commits.map(\.sequence) == recording.commits.map(\.sequence))
    #expect(read.commits.map(\.cause) == recording.commits.map(\.cause))
    #expect(read.checkpoints.map(\.sequence) == [2, 4, 6, 8, 9])
    #expect(text.contains(#""element":"b""#) && text.contains(#""scope":"LogAppState.rooms[id: _]""#))
    #expect(read.commits.map(\.scope) == recording.commits.map(\.scope))
    #expect(try read.replayedStates() == recording.replayedStates())
    #expect(try read.replayedState() == store.state)
    #expect(read.effects.count == 1)
    if case .completed? = read.effects.first?.outcome {} else { Issue.record("the side effect's outcome was lost") }

    let fresh = LogStore(initialState: read.initialState)
    try await read.replay(into: fresh)
    #expect(fresh.state == store.state)
  }

  @Test func anUnregisteredUpdater_isWrittenByName_andReplayStopsAtIt() async throws {
    let (_, recording) = try await recordLogSession(includeUnregistered: true)
    let text = try RecordingLog.encode(recording, registry: logRegistry())
    #expect(text.contains(#""registered":false"#) && text.contains("LogReset"))
    let read = try RecordingLog.decode(text, registry: logRegistry())
    #expect {
      try read.replayedState()
    } throws: { error in
      guard case ReplayError.unknownType(5, let name) = error else { return false }
      return name.contains("LogReset")
    }
    // Into a store: everything before it is committed, nothing after.
    let fresh = LogStore(initialState: read.initialState)
    await #expect(throws: ReplayError.self) { try await read.replay(into: fresh) }
    #expect(
      fresh.state
        == (try Recording(initialState: read.initialState, commits: Array(read.commits.prefix(4)))
          .replayedState()))

    // A registry that does not know a name written in full reads it as unknown too.
    var partial = ReplayRegistry<LogAppState>()
    partial.register(LogAdd.self, as: "add")
    let unknown = try RecordingLog.decode(text, registry: partial)
    #expect {
      try unknown.replayedState()
    } throws: { error in
      guard case ReplayError.unknownType(2, "notes.write") = error else { return false }
      return true
    }
  }

  @Test func everyBadLog_getsItsTypedError() async throws {
    let (_, recording) = try await recordLogSession()
    let text = try RecordingLog.encode(recording, registry: logRegistry())
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    lines.removeLast()  // The empty string after the last newline.
    /// The error reading `lines` gives, as the case and its arguments.
    func read(_ lines: [String], newline: Bool = true) -> String {
      do {
        _ = try RecordingLog.decode(lines.joined(separator: "\n") + (newline ? "\n" : ""), registry: logRegistry())
        return "no error"
      } catch {
        switch error {
        case .empty: return "empty"
        case .notARecording(let found): return "notARecording \(found)"
        case .newerVersion(let found, let supported): return "newerVersion \(found) \(supported)"
        case .wrongStateType(let expected, let found): return "wrongStateType \(expected) \(found)"
        case .truncatedLine(let line): return "truncatedLine \(line)"
        case .malformedLine(let line, let reason): return "malformedLine \(line) \(reason)"
        case .encodingFailed: return "encodingFailed"
        case .missingInitialState(let after): return "missingInitialState \(after)"
        case .unverifiedEnd(let lastCommit): return "unverifiedEnd \(lastCommit)"
        case .missingDigestFunction(let line): return "missingDigestFunction \(line)"
        case .invalidRecording: return "invalidRecording"
        case .finalStateNotReplayable: return "finalStateNotReplayable"
        }
      }
    }
    func replacing(_ index: Int, _ old: String, _ new: String) -> [String] {
      var copy = lines
      copy[index] = copy[index].replacingOccurrences(of: old, with: new)
      return copy
    }
    #expect(read(lines) == "no error")
    #expect(read([], newline: false) == "empty")
    #expect(read(replacing(0, "katana.recording", "something.else")) == "notARecording something.else")
    #expect(read(replacing(0, #""version":2"#, #""version":3"#)) == "newerVersion 3 2")
    #expect(read(replacing(0, #""version":2"#, #""version":0"#)).hasPrefix("malformedLine 1 version 0"))
    #expect(
      read(replacing(0, #""stateType":"KatanaTests.LogAppState""#, #""stateType":"X""#))
        == "wrongStateType KatanaTests.LogAppState X")
    // A version-1 log named the state type by its short name.
    #expect(
      read(replacing(0, #""version":2}"#, #""version":1}"#)) == "wrongStateType LogAppState KatanaTests.LogAppState")
    #expect(
      read(
        replacing(0, #""stateType":"KatanaTests.LogAppState","version":2"#, #""stateType":"LogAppState","version":1"#))
        == "no error")

    var cut = lines
    cut[cut.count - 1] = String(cut[cut.count - 1].prefix(20))
    #expect(read(cut, newline: false) == "truncatedLine \(lines.count)")

    var garbled = lines
    garbled[3] = "{not json"
    #expect(read(garbled).hasPrefix("malformedLine 4 "))
    #expect(read(replacing(1, #""time":"#, #""tick":"#)).hasPrefix("malformedLine 2 missing field \"time\""))
    var outOfOrder = lines
    outOfOrder.swapAt(1, 2)
    #expect(read(outOfOrder) == "malformedLine 3 commit 1 follows commit 2")
    #expect(read(replacing(2, #""scope":"LogAppState.notes""#, #""scope":null"#)).hasPrefix("malformedLine 3 "))
    // A header without its state, and a checkpoint without its state.
    var header = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
    header["initialState"] = nil
    let stateless = String(decoding: try JSONSerialization.data(withJSONObject: header), as: UTF8.self)
    #expect(
      read([stateless] + lines.dropFirst())
        == "malformedLine 1 the header has neither \"initialState\" nor \"continues\"")
    let checkpoint = try #require(lines.firstIndex { $0.hasPrefix(#"{"checkpoint""#) })
    #expect(
      read(replacing(checkpoint, #""state":"#, #""status":"#))
        == "malformedLine \(checkpoint + 1) a checkpoint with neither \"state\" nor \"digest\"")
  }

  @Test func drainedRecordings_writtenAsContinuingLogs_chainWithoutTheirStates() async throws {
    let recorder = StoreRecorder<LogAppState>(checkpointInterval: 2)
    let store = LogStore(initialState: LogAppState(total: 10), interceptors: [recorder.interceptor])
    var logs: [String] = []
    for round in 0..<3 {
      try await store.dispatch(LogAdd(amount: round))
      try await store.scope(\.notes, dependencies: \.self).dispatch(LogWrite(line: "round \(round)"))
      try await store.dispatch(LogAdd(amount: 1))
      logs.append(
        try RecordingLog.encode(try await recorder.drain(store), registry: logRegistry(), continuing: round > 0))
    }
    #expect(logs[0].contains(#""initialState""#))
    #expect(!logs[1].contains(#""initialState""#) && logs[1].hasPrefix("{") && logs[1].contains(#""continues":3"#))
    // Each continuing log starts from the state the previous one ends with.
    var state = try RecordingLog.decode(logs[0], registry: logRegistry()).replayedState()
    for log in logs.dropFirst() {
      #expect(throws: RecordingLogError.self) { try RecordingLog.decode(log, registry: logRegistry()) }
      state = try RecordingLog.decode(log, registry: logRegistry(), initialState: state).replayedState()
    }
    #expect(state == store.state)
    do {
      _ = try RecordingLog.decode(logs[2], registry: logRegistry())
      Issue.record("a continuing log was read without its initial state")
    } catch {
      #expect(
        error.description == "The log continues another one from the state after commit 6; pass that state to read it.")
    }
    // A continuing log whose first commit is not the one after its pointer is refused.
    let shifted = logs[1].replacingOccurrences(of: #""continues":3"#, with: #""continues":2"#)
    #expect(throws: RecordingLogError.self) {
      try RecordingLog.decode(shifted, registry: logRegistry(), initialState: state)
    }
  }

  @Test func digestCheckpoints_keepTheLogSmall_andStillCatchADivergence() async throws {
    let (store, recording) = try await recordLogSession()
    @Sendable func digest(_ state: LogAppState) -> String {
      "total=\(state.total) notes=\(state.notes.lines.count) rooms=\(state.rooms.map(\.posts.count))"
    }
    let text = try RecordingLog.encode(recording, registry: logRegistry(), digest: digest)
    let checkpointLines = text.split(separator: "\n").filter { $0.hasPrefix(#"{"checkpoint""#) }
    #expect(checkpointLines.count == 5 && checkpointLines.allSatisfy { $0.contains(#""digest":"total="#) })
    #expect(!checkpointLines.contains { $0.contains(#""state""#) })
    let read = try RecordingLog.decode(text, registry: logRegistry(), digest: digest)
    #expect(read.checkpoints.isEmpty && read.digests.map(\.sequence) == [2, 4, 6, 8, 9])
    #expect(try read.replayedState() == store.state)

    // A digest that does not match what replay produces: the first checkpoint reports it, nothing past it.
    let tampered = text.replacingOccurrences(of: #""amount":5"#, with: #""amount":6"#)
    let wrong = try RecordingLog.decode(tampered, registry: logRegistry(), digest: digest)
    #expect {
      try wrong.replayedStates()
    } throws: { error in
      guard case ReplayError.diverged(2, let expected, let replayed) = error else { return false }
      return expected.contains("total=15") && replayed.contains("total=16")
    }
    // Without the function nothing would check the log: refused at its first digest.
    #expect {
      try RecordingLog.decode(tampered, registry: logRegistry())
    } throws: { error in
      guard case RecordingLogError.missingDigestFunction(let line) = error else { return false }
      return line == 1 + (text.split(separator: "\n").firstIndex { $0.hasPrefix(#"{"checkpoint""#) } ?? -1)
    }
  }

  @Test func replayIntoAStoreAtAnotherState_appliesNothing() async throws {
    let (_, recording) = try await recordLogSession()
    let store = LogStore(initialState: LogAppState(total: 99))
    await #expect {
      try await recording.replay(into: store)
    } throws: { error in
      guard case ReplayError.wrongInitialState = error else { return false }
      return true
    }
    #expect(store.state == LogAppState(total: 99))
  }
}
