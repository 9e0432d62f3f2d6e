import Foundation
import Katana
import KatanaRecordingLog
import KatanaTestSupport
import Testing

// MARK: - Fixtures: two features whose state types share their short name

enum LogFeatureA {
  struct Counter: State, Codable, Equatable {
    var value = 0
  }

  struct Add: StateUpdater, Codable {
    let amount: Int
    func updateState(_ state: inout Counter) { state.value += amount }
  }
}

enum LogFeatureB {
  struct Counter: State, Codable, Equatable {
    var value = 0
  }

  /// Written under the same name as `LogFeatureA.Add`, and does the opposite.
  struct Sub: StateUpdater, Codable {
    let amount: Int
    func updateState(_ state: inout Counter) { state.value -= amount }
  }
}

// MARK: - Helpers

/// The lines of a log, without the empty piece after its final newline.
func logLines(_ text: String) -> [String] {
  var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  if lines.last == "" { lines.removeLast() }
  return lines
}

/// Lines joined back into a log, each ending with a newline.
func logText(_ lines: [String]) -> String {
  lines.map { $0 + "\n" }.joined()
}

/// `line` (one JSON object) with `edit` applied to its fields.
func editingLine(_ line: String, _ edit: (inout [String: Any]) -> Void) throws -> String {
  var object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
  edit(&object)
  return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
}

/// The index of the first line that starts with the key `key` (the encoder sorts keys, so each kind of line starts
/// with the key that names it, or `cause` for a commit).
func firstLine(of kind: String, in lines: [String]) throws -> Int {
  try #require(lines.firstIndex { $0.contains("\"\(kind)\":") && !$0.contains("\"format\":") })
}

/// The line a `malformedLine` error names, or nil for any other outcome.
func malformedLineNumber<S: State & Codable>(
  _ text: String, registry: ReplayRegistry<S>, initialState: S? = nil
) -> Int? {
  do {
    _ = try RecordingLog.decode(text, registry: registry, initialState: initialState)
    return nil
  } catch {
    guard case .malformedLine(let line, _) = error else { return nil }
    return line
  }
}

// MARK: - Tests

/// The review's bugs 9-12 in the log reader: each test failed (or, for bug 9, trapped) on the reader before the
/// log was treated as untrusted input.
@Suite("Recording log: untrusted input", .timeLimit(.failsafeMinutes(3)))
struct RecordingLogUntrustedInputTests {
  /// Bug 9: numbers that JSON allows and `Duration` or `Int` arithmetic does not.
  @Test func hugeNumbers_areMalformedLines_notTraps() async throws {
    let (_, recording) = try await recordLogSession()
    let lines = logLines(try RecordingLog.encode(recording, registry: logRegistry()))
    let commit = try firstLine(of: "commit", in: lines)
    let effect = try firstLine(of: "effect", in: lines)

    var time = lines
    time[commit] = try editingLine(lines[commit]) { $0["time"] = 1e30 }
    #expect(malformedLineNumber(logText(time), registry: logRegistry()) == commit + 1)
    var start = lines
    start[effect] = try editingLine(lines[effect]) { $0["start"] = 1e30 }
    #expect(malformedLineNumber(logText(start), registry: logRegistry()) == effect + 1)
    var end = lines
    end[effect] = try editingLine(lines[effect]) { $0["end"] = 1e30 }
    #expect(malformedLineNumber(logText(end), registry: logRegistry()) == effect + 1)
    // A first commit numbered Int.max, and the next one.
    var last = lines
    last[commit] = try editingLine(lines[commit]) { $0["commit"] = Int.max }
    #expect(malformedLineNumber(logText(last), registry: logRegistry()) == commit + 2)
    // A continuing log whose header points at Int.max.
    let continuing = logLines(try RecordingLog.encode(recording, registry: logRegistry(), continuing: true))
    var pointer = continuing
    pointer[0] = try editingLine(continuing[0]) { $0["continues"] = Int.max }
    #expect(
      malformedLineNumber(logText(pointer), registry: logRegistry(), initialState: recording.initialState) == 1)
  }

  /// Bug 10: a log whose lines end with CRLF (as a mail client or an editor on Windows may save it).
  @Test func aLogWithCRLFLineEnds_readsAsTheSameLog() async throws {
    let (store, recording) = try await recordLogSession()
    let text = try RecordingLog.encode(recording, registry: logRegistry())
    let crlf = text.replacingOccurrences(of: "\n", with: "\r\n")
    let read = try RecordingLog.decode(crlf, registry: logRegistry())
    #expect(read.commits.count == recording.commits.count)
    #expect(try read.replayedState() == store.state)
  }

  /// Bug 11: a checkpoint moved away from its commit was never checked, nor was an effect line among the commits.
  @Test func checkpointAndEffectLinesOutOfPlace_areMalformedLines() async throws {
    let (_, recording) = try await recordLogSession()
    let lines = logLines(try RecordingLog.encode(recording, registry: logRegistry()))
    let checkpoints = lines.indices.filter { lines[$0].hasPrefix(#"{"checkpoint""#) }
    #expect(checkpoints.count >= 2)
    // The first checkpoint, with a wrong state, moved after the second one.
    var moved = lines
    let wrong = try editingLine(lines[checkpoints[0]]) { object in
      guard var state = object["state"] as? [String: Any] else { return }
      state["total"] = -1
      object["state"] = state
    }
    moved.remove(at: checkpoints[0])
    moved.insert(wrong, at: checkpoints[1])
    #expect(malformedLineNumber(logText(moved), registry: logRegistry()) == checkpoints[1] + 1)
    // A checkpoint of a commit the log does not have.
    var beyond = lines
    beyond.insert(try editingLine(lines[checkpoints[0]]) { $0["checkpoint"] = 99 }, at: checkpoints[0] + 1)
    #expect(malformedLineNumber(logText(beyond), registry: logRegistry()) == checkpoints[0] + 2)
    // A side effect among the commits: the commit after it is out of place.
    let effect = try firstLine(of: "effect", in: lines)
    var early = lines
    early.insert(lines[effect], at: 2)
    #expect(malformedLineNumber(logText(early), registry: logRegistry()) == 4)
  }

  /// Bug 11: nothing after the last checkpoint was checked, so a changed last commit replayed to a wrong state.
  @Test func aChangedLastCommit_isCaught_andALogWithoutAFinalCheckIsRefused() async throws {
    let (store, recording) = try await recordLogSession()
    let text = try RecordingLog.encode(recording, registry: logRegistry())
    #expect(try RecordingLog.decode(text, registry: logRegistry()).replayedState() == store.state)
    // The session's last commit posts "hello a" to room a.
    var lines = logLines(text)
    let lastCommit = try #require(lines.lastIndex { $0.contains(#""commit":"#) })
    var tampered = lines
    tampered[lastCommit] = lines[lastCommit].replacingOccurrences(of: "hello a", with: "hello z")
    #expect(tampered[lastCommit] != lines[lastCommit])
    let read = try RecordingLog.decode(logText(tampered), registry: logRegistry())
    #expect(throws: ReplayError.self) { try read.replayedState() }
    // Without the check after its last commit (as every log of version 1 without a checkpoint there), the end of
    // the log cannot be trusted: refused.
    lines.removeSubrange((lastCommit + 1)...)
    #expect(throws: RecordingLogError.self) { try RecordingLog.decode(logText(lines), registry: logRegistry()) }
  }

  /// Bug 12: the header named the state type by its short name, so another type of that name was read.
  @Test func aLogOfAnotherStateTypeWithTheSameShortName_isRefused() async throws {
    let recorder = StoreRecorder<LogFeatureA.Counter>()
    let store = Store<LogFeatureA.Counter, EmptySideEffectDependencyContainer>(
      initialState: LogFeatureA.Counter(), interceptors: [recorder.interceptor])
    try await store.dispatch(LogFeatureA.Add(amount: 5))
    var registryA = ReplayRegistry<LogFeatureA.Counter>()
    registryA.register(LogFeatureA.Add.self, as: "counter.add")
    var registryB = ReplayRegistry<LogFeatureB.Counter>()
    registryB.register(LogFeatureB.Sub.self, as: "counter.add")
    let text = try RecordingLog.encode(recorder.recording(), registry: registryA)
    #expect(try RecordingLog.decode(text, registry: registryA).replayedState() == LogFeatureA.Counter(value: 5))
    #expect(throws: RecordingLogError.self) { try RecordingLog.decode(text, registry: registryB) }
  }

  /// Bug 12: writing a log read with digests dropped them.
  @Test func aDecodedDigestLog_writtenAgain_keepsItsDigests() async throws {
    let (store, recording) = try await recordLogSession()
    @Sendable func digest(_ state: LogAppState) -> String { String(describing: state) }
    let text = try RecordingLog.encode(recording, registry: logRegistry(), digest: digest)
    let read = try RecordingLog.decode(text, registry: logRegistry(), digest: digest)
    let again = try RecordingLog.encode(read, registry: logRegistry())
    let digestLines = { (text: String) in logLines(text).filter { $0.contains(#""digest":"#) } }
    #expect(!digestLines(text).isEmpty)
    #expect(digestLines(again) == digestLines(text))
    #expect(try RecordingLog.decode(again, registry: logRegistry(), digest: digest).replayedState() == store.state)
  }
}

@Suite("Recording log: hostile input", .timeLimit(.failsafeMinutes(3)))
struct RecordingLogHostileInputTests {
  /// The error reading `lines` gives, as the case and the line it names.
  func outcome(_ lines: [String], digest: (@Sendable (LogAppState) -> String)? = nil) -> String {
    outcome(Data(logText(lines).utf8), digest: digest)
  }

  func outcome(_ data: Data, digest: (@Sendable (LogAppState) -> String)? = nil) -> String {
    do {
      _ = try RecordingLog.decode(data, registry: logRegistry(), digest: digest)
      return "read"
    } catch {
      switch error {
      case .malformedLine(let line, _): return "malformedLine \(line)"
      case .truncatedLine(let line): return "truncatedLine \(line)"
      case .missingDigestFunction(let line): return "missingDigestFunction \(line)"
      case .unverifiedEnd(let last): return "unverifiedEnd \(last)"
      default: return "\(error)"
      }
    }
  }

  @Test func deepNestingHugeValuesAndBytesThatAreNotUTF8_areMalformedLines() async throws {
    let (_, recording) = try await recordLogSession()
    let lines = logLines(try RecordingLog.encode(recording, registry: logRegistry()))
    #expect(outcome(lines) == "read")
    // Nested 100,000 deep (Foundation's decoder stops at 512 levels), a number of a million digits, a 4 MB string.
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    #expect(outcome([lines[0], #"{"commit":1,"updater":\#(deep)}"#] + lines.dropFirst(2)) == "malformedLine 2")
    let digits = String(repeating: "9", count: 1_000_000)
    #expect(outcome([lines[0], #"{"commit":\#(digits)}"#] + lines.dropFirst(2)) == "malformedLine 2")
    let long = try editingLine(lines[1]) { $0["type"] = String(repeating: "x", count: 4_000_000) }
    // Read as a name the registry does not know: replay stops there.
    #expect(outcome([lines[0], long] + lines.dropFirst(2)) == "read")
    // A byte that is not UTF-8, inside a string and between tokens.
    let name = try #require(lines[1].range(of: #""type":""#)).upperBound
    let inString = lines[0].utf8.count + 1 + lines[1].utf8.distance(from: lines[1].startIndex, to: name)
    for index in [inString, lines[0].utf8.count + 1] {
      var bytes = Array(logText(lines).utf8)
      bytes[index] = 0xFF
      #expect(outcome(Data(bytes)) == "malformedLine 2")
    }
    // A UTF-8 byte order mark before the header is no part of it.
    #expect(outcome(Data([0xEF, 0xBB, 0xBF] + Array(logText(lines).utf8))) == "read")
  }

  @Test func linesOfTwoKinds_aSecondHeader_negativeNumbers_andBlankLines_areMalformedLines() async throws {
    let (_, recording) = try await recordLogSession()
    let lines = logLines(try RecordingLog.encode(recording, registry: logRegistry()))
    func replacing(_ index: Int, with line: String) -> [String] {
      var copy = lines
      copy[index] = line
      return copy
    }
    #expect(outcome(replacing(1, with: try editingLine(lines[1]) { $0["checkpoint"] = 1 })) == "malformedLine 2")
    #expect(outcome(Array(lines.prefix(3)) + [lines[0]] + lines.dropFirst(3)) == "malformedLine 4")
    #expect(outcome(replacing(1, with: try editingLine(lines[1]) { $0["commit"] = -1 })) == "malformedLine 2")
    #expect(outcome(replacing(1, with: try editingLine(lines[1]) { $0["commit"] = 0 })) == "malformedLine 2")
    #expect(outcome(replacing(1, with: try editingLine(lines[1]) { $0["time"] = -0.5 })) == "malformedLine 2")
    #expect(outcome(replacing(1, with: try editingLine(lines[1]) { $0["cause"] = 0 })) == "malformedLine 2")
    let effect = try firstLine(of: "effect", in: lines)
    #expect(
      outcome(replacing(effect, with: try editingLine(lines[effect]) { $0["outcome"] = "exploded" }))
        == "malformedLine \(effect + 1)")
    #expect(outcome(Array(lines.prefix(2)) + [""] + lines.dropFirst(2)) == "malformedLine 3")
    // A checkpoint with both its state and a digest.
    let checkpoint = try #require(lines.firstIndex { $0.hasPrefix(#"{"checkpoint""#) })
    #expect(
      outcome(replacing(checkpoint, with: try editingLine(lines[checkpoint]) { $0["digest"] = "x" }))
        == "malformedLine \(checkpoint + 1)")
    // A header with both its state and a pointer, and a pointer below 0.
    #expect(outcome(replacing(0, with: try editingLine(lines[0]) { $0["continues"] = 0 })) == "malformedLine 1")
    let pointer = try editingLine(lines[0]) { object in
      object["initialState"] = nil
      object["continues"] = -1
    }
    #expect(outcome([pointer] + lines.dropFirst()) == "malformedLine 1")
  }

  @Test func aStateTypeName_isStable_andCanBeTheAppsOwn() async throws {
    #expect(ReplayRegistry<LogAppState>().stateType == "KatanaTests.LogAppState")
    #expect(ReplayRegistry<LogFeatureA.Counter>().stateType == "KatanaTests.LogFeatureA.Counter")
    // A private type's name has no part that changes from one run to the next.
    #expect(ReplayRegistry<PrivateLogState>().stateType == "KatanaTests.PrivateLogState")
    // A name of the app's own reads the logs written under it, whatever the type is called now.
    let (store, recording) = try await recordLogSession()
    var named = ReplayRegistry<LogAppState>(stateType: "app.state")
    named.register(LogAdd.self, as: "add")
    named.register(LogOpenDraft.self, as: "draft.open")
    named.register(LogWrite.self, as: "notes.write", at: \.notes)
    named.register(LogWrite.self, as: "draft.write", at: \.draft)
    named.register(LogWrite.self, as: "archive.write", at: \.archive.notes)
    named.register(LogPost.self, as: "rooms.post", onElementsOf: \.rooms)
    let text = try RecordingLog.encode(recording, registry: named)
    #expect(text.hasPrefix("{") && logLines(text)[0].contains(#""stateType":"app.state""#))
    #expect(try RecordingLog.decode(text, registry: named).replayedState() == store.state)
    #expect {
      try RecordingLog.decode(text, registry: logRegistry())
    } throws: { error in
      guard case RecordingLogError.wrongStateType("KatanaTests.LogAppState", "app.state") = error else { return false }
      return true
    }
  }

  @Test func writing_refusesARecordingNoReaderWouldTake_andOneItCannotEndVerified() throws {
    let add = { (sequence: Int) in RecordedCommit(sequence: sequence, time: .zero, updater: LogAdd(amount: 1)) }
    for commits in [
      [add(0)], [add(1), add(3)], [RecordedCommit(sequence: 1, time: .seconds(-1), updater: LogAdd(amount: 1))],
    ] {
      #expect {
        try RecordingLog.encode(Recording(initialState: LogAppState(), commits: commits), registry: logRegistry())
      } throws: { error in
        guard case RecordingLogError.invalidRecording = error else { return false }
        return true
      }
    }
    // The last commit cannot be replayed to write the state after it (an item that is no state updater).
    let recording = Recording(
      initialState: LogAppState(),
      commits: [add(1), RecordedCommit(sequence: 2, time: .zero, updater: LogAddTwice())])
    #expect {
      try RecordingLog.encode(recording, registry: logRegistry())
    } throws: { error in
      guard case RecordingLogError.finalStateNotReplayable(2, .notReplayable(2, _)) = error else { return false }
      return true
    }
    // With a checkpoint there, it is written as it is.
    let kept = Recording(
      initialState: LogAppState(), commits: recording.commits,
      checkpoints: [Recording.Checkpoint(sequence: 2, state: LogAppState(total: 1))])
    #expect(
      try logLines(RecordingLog.encode(kept, registry: logRegistry())).last?.hasPrefix(#"{"checkpoint":2,"#) == true)
  }
}

private struct PrivateLogState: State {}
