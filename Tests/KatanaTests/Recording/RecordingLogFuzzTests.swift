import Foundation
import Katana
import KatanaRecordingLog
import KatanaTestSupport
import Testing

// The log reader fuzzed with mutations of real logs, each input read and replayed in this process: a trap is the
// whole run failing. Every input must give a typed error naming a line at or after the first one it changed, or a
// recording that replays to the state the original session had after the recording's last commit (a log cut at a
// line's end after a check is a shorter, verified log). Anything else is a silent wrong state, reported with its
// seed and its text.

/// A real log, and what its session's states were.
struct LogFuzzSeed: Sendable {
  let name: String
  let bytes: [UInt8]
  /// The state a continuing log starts from.
  let initialState: LogAppState?
  let digest: (@Sendable (LogAppState) -> String)?
  /// The state before the first commit (at the commit before it) and after each commit, by sequence number.
  let states: [Int: LogAppState]
  /// The state a log replays to, if it replays.
  let final: LogAppState?
  /// Where its newlines are.
  let newlines: [Int]

  init(
    _ name: String, _ text: String, recording: Recording<LogAppState>, initialState: LogAppState? = nil,
    digest: (@Sendable (LogAppState) -> String)? = nil, replays: Bool = true
  ) {
    self.name = name
    bytes = Array(text.utf8)
    self.initialState = initialState
    self.digest = digest
    var states: [Int: LogAppState] = [:]
    var state = recording.initialState
    let first = recording.commits.first?.sequence ?? 1
    states[first - 1] = state
    for commit in recording.commits {
      // In memory every updater replays, even one the log writes by name only.
      guard let next = try? Recording(initialState: state, commits: [commit]).replayedState() else { break }
      state = next
      states[commit.sequence] = state
    }
    self.states = states
    final = replays ? state : nil
    let bytes = Array(text.utf8)
    newlines = bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") }
  }
}

/// A digest that covers every field: replay checks no more than its digest does.
@Sendable func fullLogDigest(_ state: LogAppState) -> String {
  String(describing: state)
}

/// `recording` with times that are the same on every run, so that a seed's input is too.
func withFixedTimes(_ recording: Recording<LogAppState>) -> Recording<LogAppState> {
  Recording(
    initialState: recording.initialState,
    commits: recording.commits.map {
      RecordedCommit(
        sequence: $0.sequence, time: .milliseconds(250 * $0.sequence), updater: $0.updater, cause: $0.cause)
    },
    checkpoints: recording.checkpoints,
    effects: recording.effects.map { effect in
      RecordedEffect(
        id: effect.id, sideEffect: effect.sideEffect, cause: effect.cause, start: .milliseconds(125 * effect.id),
        end: effect.end.map { _ in .milliseconds(125 * effect.id + 60) }, outcome: effect.outcome)
    })
}

/// The real logs the fuzzer mutates: every kind of line and of log the writer makes.
func logFuzzSeeds() async throws -> [LogFuzzSeed] {
  var seeds: [LogFuzzSeed] = []
  let session = withFixedTimes(try await recordLogSession().1)
  let plain = try RecordingLog.encode(session, registry: logRegistry())
  seeds.append(LogFuzzSeed("plain (root, scoped, optional, elements, a side effect)", plain, recording: session))
  seeds.append(
    LogFuzzSeed(
      "digests", try RecordingLog.encode(session, registry: logRegistry(), digest: fullLogDigest),
      recording: session, digest: fullLogDigest))
  // A version-1 log that ends with a check (its header as version 1 wrote it).
  let v1 = plain.replacingOccurrences(
    of: #""stateType":"KatanaTests.LogAppState","version":2"#, with: #""stateType":"LogAppState","version":1"#)
  seeds.append(LogFuzzSeed("version 1", v1, recording: session))
  // A version-1 log as most were written: fewer commits than the recorder's checkpoint interval, so no checkpoint at
  // all, and no check after the last commit. Every reading of it is refused; a reader that took it would replay
  // any change to it.
  let recorder1 = StoreRecorder<LogAppState>()
  let store1 = LogStore(initialState: LogAppState(total: 7), interceptors: [recorder1.interceptor])
  try await store1.dispatch(LogAdd(amount: 4))
  try await store1.scope(\.notes, dependencies: \.self).dispatch(LogWrite(line: "v"))
  try await store1.dispatch(LogAdd(amount: 2))
  let version1 = withFixedTimes(recorder1.recording())
  var unverified = logLines(
    try RecordingLog.encode(version1, registry: logRegistry()).replacingOccurrences(
      of: #""stateType":"KatanaTests.LogAppState","version":2"#, with: #""stateType":"LogAppState","version":1"#))
  #expect(unverified.last?.hasPrefix(#"{"checkpoint":3,"#) == true)
  unverified.removeLast()
  seeds.append(
    LogFuzzSeed(
      "version 1, not ending verified", logText(unverified), recording: version1, replays: false))
  let unregistered = withFixedTimes(try await recordLogSession(includeUnregistered: true).1)
  seeds.append(
    LogFuzzSeed(
      "an updater by name only", try RecordingLog.encode(unregistered, registry: logRegistry()),
      recording: unregistered, replays: false))

  // Checkpoints at every commit, and at none (the writer replays to write the last one).
  for interval in [1, 1_000] {
    let recorder = StoreRecorder<LogAppState>(checkpointInterval: interval)
    let store = LogStore(initialState: LogAppState(total: 3), interceptors: [recorder.interceptor])
    try await store.dispatch(LogAdd(amount: 4))
    try await store.dispatch(LogAddTwice())
    try await store.scope(\.rooms, id: "a", dependencies: \.self).dispatch(LogPost(text: "x"))
    try await store.scope(\.notes, dependencies: \.self).dispatch(LogWrite(line: "y"))
    let recording = withFixedTimes(recorder.recording())
    seeds.append(
      LogFuzzSeed(
        "checkpoint interval \(interval)", try RecordingLog.encode(recording, registry: logRegistry()),
        recording: recording))
  }

  // A continuing log (the second of two drains), with digests, as a sink writes them.
  let recorder = StoreRecorder<LogAppState>(checkpointInterval: 2)
  let store = LogStore(initialState: LogAppState(total: 1), interceptors: [recorder.interceptor])
  try await store.dispatch(LogAdd(amount: 2))
  try await store.dispatch(LogOpenDraft())
  let first = withFixedTimes(try await recorder.drain(store))
  try await store.scope(\.draft, dependencies: \.self).dispatch(LogWrite(line: "z"))
  try await store.dispatch(LogAddTwice())
  try await store.scope(\.rooms, id: "b", dependencies: \.self).dispatch(LogPost(text: "w"))
  let second = withFixedTimes(try await recorder.drain(store))
  seeds.append(
    LogFuzzSeed(
      "continuing", try RecordingLog.encode(second, registry: logRegistry(), continuing: true),
      recording: second, initialState: try first.replayedState()))
  seeds.append(
    LogFuzzSeed(
      "continuing, digests",
      try RecordingLog.encode(second, registry: logRegistry(), continuing: true, digest: fullLogDigest),
      recording: second, initialState: try first.replayedState(), digest: fullLogDigest))
  return seeds
}

/// Seeded mutations of a log's bytes.
struct LogMutator {
  var generator: SeededGenerator

  /// Numbers a log may not take, or only just.
  static let numbers = [
    "1e30", "-1", "0", "-0", "1", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
    "1.7976931348623157e308", "4.9e-324", "1e400", "1e15", "1.0000000000000002e15", "NaN", "\"NaN\"", "Infinity",
    "-Infinity", "1.5", "2", "3", "null", "\"1\"", "true",
  ]
  /// The numbers at the edges of what a log's fields take.
  static let boundaries = [
    "9223372036854775807", "9223372036854775807", "9223372036854775806", "-9223372036854775808", "-1", "0",
    "1e30", "1.7976931348623157e308", "1e15",
  ]
  /// Values of another type, or deeper than a decoder takes.
  static let values = [
    "null", "true", "\"x\"", "\"\"", "[]", "{}", "{\"a\":1}", "[1,2]", "0", "-1", "1e30",
    String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
  ]
  /// A line nested 100,000 deep.
  static let deepLine = Array((String(repeating: "[", count: 100_000) + "\n").utf8)
  static let keys = LogKeyNames.all + ["x", "", "Commit", "commit ", "state\u{0}"]
  static let bytes: [UInt8] = Array("{}[]\",:\n\r09-.e\\ a".utf8) + [0, 0x7F, 0x80, 0xC3, 0xFF]

  mutating func int(_ bound: Int) -> Int {
    Int(generator.next() % UInt64(max(bound, 1)))
  }

  mutating func pick<T>(_ values: [T]) -> T {
    values[int(values.count)]
  }

  /// The log's lines, without their `\n` (the last one is empty if the log ends with a newline).
  static func lines(_ bytes: [UInt8]) -> [[UInt8]] {
    var lines: [[UInt8]] = []
    var start = 0
    var index = 0
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: "\n") {
        lines.append(Array(bytes[start..<index]))
        start = index + 1
      }
      index += 1
    }
    lines.append(Array(bytes[start...]))
    return lines
  }

  static func joined(_ lines: [[UInt8]]) -> [UInt8] {
    var bytes: [UInt8] = []
    for (index, line) in lines.enumerated() {
      if index > 0 { bytes.append(UInt8(ascii: "\n")) }
      bytes += line
    }
    return bytes
  }

  /// Where each `"key":` of the log starts (the quote) and ends (after the colon).
  static func keyPositions(_ bytes: [UInt8]) -> [(Int, Int)] {
    var positions: [(Int, Int)] = []
    var lastQuote: Int?
    var index = 0
    while index + 1 < bytes.count {
      if bytes[index] == UInt8(ascii: "\"") {
        if bytes[index + 1] == UInt8(ascii: ":"), let start = lastQuote { positions.append((start, index + 2)) }
        lastQuote = index
      }
      index += 1
    }
    return positions
  }

  /// Whether `byte` can be part of a JSON number.
  static func isNumberByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"),
      UInt8(ascii: "+"), UInt8(ascii: "-"):
      true
    default: false
    }
  }

  /// The end of the JSON value that starts at `start` (strings, numbers, literals and balanced brackets).
  static func valueEnd(_ bytes: [UInt8], from start: Int) -> Int? {
    var index = start
    var depth = 0
    var inString = false
    while index < bytes.count {
      let byte = bytes[index]
      if inString {
        if byte == UInt8(ascii: "\\") {
          index += 1
        } else if byte == UInt8(ascii: "\"") {
          inString = false
          if depth == 0 { return index + 1 }
        }
      } else {
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
          if depth == 0 { return index }
          depth -= 1
          if depth == 0 { return index + 1 }
        case UInt8(ascii: ","), UInt8(ascii: "\n"):
          if depth == 0 { return index }
        default: break
        }
      }
      index += 1
    }
    return nil
  }

  /// Mutations that keep the log the same log: reading it must give the same recording.
  mutating func equivalent(_ bytes: [UInt8]) -> (name: String, bytes: [UInt8]) {
    switch int(4) {
    case 0:
      return ("CRLF", Array(String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8))
    case 1: return ("byte order mark", [0xEF, 0xBB, 0xBF] + bytes)
    case 2: return ("no final newline", bytes.last == UInt8(ascii: "\n") ? Array(bytes.dropLast()) : bytes)
    default:
      // Spaces between tokens: after every colon outside strings is enough to move every byte.
      var spaced: [UInt8] = []
      var inString = false
      var escaped = false
      for byte in bytes {
        spaced.append(byte)
        if inString {
          if escaped {
            escaped = false
          } else if byte == UInt8(ascii: "\\") {
            escaped = true
          } else if byte == UInt8(ascii: "\"") {
            inString = false
          }
        } else if byte == UInt8(ascii: "\"") {
          inString = true
        } else if byte == UInt8(ascii: ":") {
          spaced.append(UInt8(ascii: " "))
        }
      }
      return ("spaces after colons", spaced)
    }
  }

  /// One mutation that may change what the log says.
  mutating func mutate(_ bytes: [UInt8]) -> (name: String, bytes: [UInt8]) {
    var bytes = bytes
    guard !bytes.isEmpty else { return ("junk into an empty log", Array("{}\n".utf8)) }
    switch int(17) {
    case 0:
      let index = int(bytes.count)
      bytes[index] ^= UInt8(1 << int(8))
      return ("bit flip at \(index)", bytes)
    case 1:
      let index = int(bytes.count)
      bytes[index] = pick(Self.bytes)
      return ("byte \(bytes[index]) at \(index)", bytes)
    case 2:
      let index = int(bytes.count + 1)
      bytes.insert(pick(Self.bytes), at: index)
      return ("byte inserted at \(index)", bytes)
    case 3:
      var lines = Self.lines(bytes)
      let index = int(lines.count)
      lines.remove(at: index)
      return ("line \(index + 1) deleted", Self.joined(lines))
    case 4:
      var lines = Self.lines(bytes)
      let index = int(lines.count)
      lines.insert(lines[index], at: index)
      return ("line \(index + 1) duplicated", Self.joined(lines))
    case 5:
      var lines = Self.lines(bytes)
      let (one, other) = (int(lines.count), int(lines.count))
      lines.swapAt(one, other)
      return ("lines \(one + 1) and \(other + 1) swapped", Self.joined(lines))
    case 6:
      var lines = Self.lines(bytes)
      let line = lines.remove(at: int(lines.count))
      let index = int(lines.count + 1)
      lines.insert(line, at: index)
      return ("a line moved to \(index + 1)", Self.joined(lines))
    case 8, 16:
      // A field's value set to a boundary, the field picked by name (half the time among the log's own numeric
      // fields: the header's rare `continues` comes up as often as any), in its first line (the first commit's
      // number is the one no previous commit bounds) or any.
      let keys = Self.keyPositions(bytes)
      var names = Set(keys.map { String(decoding: bytes[($0.0 + 1)..<($0.1 - 2)], as: UTF8.self) })
      if int(2) == 0 { names.formIntersection(LogKeyNames.numeric) }
      guard !names.isEmpty else { return ("no key", bytes) }
      let name = pick(names.sorted())
      let named = keys.filter { String(decoding: bytes[($0.0 + 1)..<($0.1 - 2)], as: UTF8.self) == name }
      let (_, start) = int(2) == 0 ? named[0] : pick(named)
      guard let end = Self.valueEnd(bytes, from: start), end >= start else { return ("no value", bytes) }
      let number = pick(Self.boundaries)
      bytes.replaceSubrange(start..<end, with: Array(number.utf8))
      return ("\(name) at \(start) set to \(number)", bytes)
    case 7:
      // A number: a run of digits (with its sign, point and exponent).
      var starts: [Int] = []
      var previous: UInt8 = 0
      var index = 0
      while index < bytes.count {
        let byte = bytes[index]
        let isStart = (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
        if isStart && !Self.isNumberByte(previous) { starts.append(index) }
        previous = byte
        index += 1
      }
      guard !starts.isEmpty else { return ("no number", bytes) }
      let start = pick(starts)
      var end = start + 1
      while end < bytes.count, Self.isNumberByte(bytes[end]) { end += 1 }
      let number = pick(Self.numbers)
      bytes.replaceSubrange(start..<end, with: Array(number.utf8))
      return ("number at \(start) replaced by \(number)", bytes)
    case 9:
      let index = int(bytes.count)
      return ("cut at \(index)", Array(bytes[..<index]))
    case 10:
      let keys = Self.keyPositions(bytes)
      guard !keys.isEmpty else { return ("no key", bytes) }
      let (start, end) = pick(keys)
      let key = pick(Self.keys)
      bytes.replaceSubrange(start..<end, with: Array("\"\(key)\":".utf8))
      return ("key at \(start) renamed \(key)", bytes)
    case 11:
      let keys = Self.keyPositions(bytes)
      guard !keys.isEmpty else { return ("no key", bytes) }
      let (_, start) = pick(keys)
      guard let end = Self.valueEnd(bytes, from: start), end >= start else { return ("no value", bytes) }
      let value = pick(Self.values)
      bytes.replaceSubrange(start..<end, with: Array(value.utf8))
      return ("value at \(start) replaced by \(value.prefix(20))", bytes)
    case 12:
      // A key given twice: the decoder takes one of them.
      let lines = Self.lines(bytes)
      let index = int(lines.count)
      guard let brace = lines[index].firstIndex(of: UInt8(ascii: "{")) else { return ("no object", bytes) }
      var changed = lines
      let field = "\"\(pick(LogKeyNames.all))\":\(pick(Self.numbers)),"
      changed[index].insert(contentsOf: Array(field.utf8), at: brace + 1)
      return ("line \(index + 1) given \(field)", Self.joined(changed))
    case 13:
      let junk: [UInt8] =
        switch int(5) {
        case 0: (0..<(1 + int(40))).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        case 1: Self.lines(bytes)[0] + [UInt8(ascii: "\n")]
        case 2: Array("{}\n".utf8)
        case 3: Self.deepLine
        default: pick(Self.lines(bytes)) + [UInt8(ascii: "\n")]
        }
      return ("junk appended", bytes + junk)
    case 14:
      var lines = Self.lines(bytes)
      let index = int(lines.count + 1)
      lines.insert([], at: index)
      return ("blank line at \(index + 1)", Self.joined(lines))
    default:
      return equivalent(bytes)
    }
  }
}

/// The keys a log's lines have.
enum LogKeyNames {
  static let numeric: Set = ["version", "continues", "commit", "time", "cause", "checkpoint", "effect", "start", "end"]
  static let all = [
    "format", "version", "stateType", "initialState", "continues", "commit", "time", "type", "scope", "element",
    "updater", "registered", "cause", "checkpoint", "state", "digest", "effect", "start", "end", "outcome", "error",
  ]
}

/// What reading and replaying one input gave.
enum LogFuzzOutcome: CustomStringConvertible {
  case replayed(LogAppState, lastCommit: Int?)
  case logError(RecordingLogError)
  case replayError(ReplayError)

  var description: String {
    switch self {
    case .replayed(let state, let lastCommit):
      "replayed to \(state) (last commit: \(lastCommit.map(String.init) ?? "none"))"
    case .logError(let error): "RecordingLogError: \(error)"
    case .replayError(let error): "ReplayError: \(error)"
    }
  }

  /// The outcome's case, to count them.
  var kind: String {
    switch self {
    case .replayed: "replayed"
    case .logError(let error):
      switch error {
      case .empty: "empty"
      case .notARecording: "notARecording"
      case .newerVersion: "newerVersion"
      case .wrongStateType: "wrongStateType"
      case .truncatedLine: "truncatedLine"
      case .malformedLine: "malformedLine"
      case .missingInitialState: "missingInitialState"
      case .unverifiedEnd: "unverifiedEnd"
      case .missingDigestFunction: "missingDigestFunction"
      case .encodingFailed, .invalidRecording, .finalStateNotReplayable: "a writing error"
      }
    case .replayError(let error):
      switch error {
      case .notReplayable: "ReplayError.notReplayable"
      case .updaterFailed: "ReplayError.updaterFailed"
      case .diverged: "ReplayError.diverged"
      case .unknownType: "ReplayError.unknownType"
      case .wrongInitialState: "ReplayError.wrongInitialState"
      }
    }
  }
}

@Suite("Recording log fuzzer: mutations of real logs, read and replayed in-process", .timeLimit(.failsafeMinutes(5)))
struct RecordingLogFuzzTests {
  /// Inputs per run: 4,000 in CI (times `KATANA_SOAK`), or the one `KATANA_LOG_FUZZ_SEED` names.
  static var inputs: [UInt64] {
    if let value = ProcessInfo.processInfo.environment["KATANA_LOG_FUZZ_SEED"], let seed = UInt64(value) {
      return [seed]
    }
    return (0..<UInt64(4_000 * soakFactor)).map { 0x10_6F_0A &+ $0 }
  }

  /// Reads `bytes` (as bytes, or as the text they decode to) and replays what it read.
  static func read(
    _ bytes: [UInt8], seed: LogFuzzSeed, asText: Bool, withDigest: Bool = true
  ) -> LogFuzzOutcome {
    let digest = withDigest ? seed.digest : nil
    let recording: Recording<LogAppState>
    do {
      recording =
        asText
        ? try RecordingLog.decode(
          String(decoding: bytes, as: UTF8.self), registry: logRegistry(), initialState: seed.initialState,
          digest: digest)
        : try RecordingLog.decode(Data(bytes), registry: logRegistry(), initialState: seed.initialState, digest: digest)
    } catch {
      return .logError(error)
    }
    do {
      return .replayed(try recording.replayedState(), lastCommit: recording.commits.last?.sequence)
    } catch {
      return .replayError(error)
    }
  }

  /// The line a reading error names, if it names one.
  static func line(of error: RecordingLogError) -> Int? {
    switch error {
    case .malformedLine(let line, _), .truncatedLine(let line), .missingDigestFunction(let line): line
    default: nil
    }
  }

  /// Why `outcome`, read from `seed` changed from line `firstChanged` on, is wrong, or nil.
  static func failure(
    of outcome: LogFuzzOutcome, seed: LogFuzzSeed, firstChanged: Int, withDigest: Bool
  ) -> String? {
    switch outcome {
    case .replayed(let state, let lastCommit):
      // A log replays to the state its session had after the log's last commit (or before its first).
      guard let lastCommit else {
        // No commit, and the header changed: nothing in such a log can be checked, by any reader.
        if firstChanged == 1 { return nil }
        return seed.states[seed.states.keys.min() ?? 0] == state ? nil : "silent wrong state: \(outcome)"
      }
      return seed.states[lastCommit] == state ? nil : "silent wrong state: \(outcome)"
    case .logError(.missingDigestFunction) where !withDigest:
      return nil
    case .logError(let error):
      // Every line before the first changed one reads as it did in the original log.
      guard let line = line(of: error), line < firstChanged else { return nil }
      return "the error names line \(line), before line \(firstChanged), the first changed: \(error)"
    case .replayError:
      return nil
    }
  }

  @Test func everyMutatedLog_isATypedError_orReplaysToTheSessionsState() async throws {
    let seeds = try await logFuzzSeeds()
    // The logs as written: each replays to its session's state, or stops at its updater written by name only, or
    // (the version-1 log that does not end verified) is refused.
    var asWritten: [String: String] = [:]
    for seed in seeds {
      let outcome = Self.read(seed.bytes, seed: seed, asText: true)
      asWritten[seed.name] = outcome.description
      switch outcome {
      case .replayed(let state, _): #expect(state == seed.final, "\(seed.name)")
      case .replayError(.unknownType), .logError(.unverifiedEnd): #expect(seed.final == nil, "\(seed.name)")
      default: Issue.record("\(seed.name): the log as written gives \(outcome)")
      }
    }
    // `KATANA_LOG_FUZZ_TRACE=1`: each input's seed and mutations before it is read (a trap stops the process
    // before any issue is reported).
    let trace = ProcessInfo.processInfo.environment["KATANA_LOG_FUZZ_TRACE"] != nil
    var kinds: [String: Int] = [:]
    var failures = 0
    var slowest = (duration: Duration.zero, seed: UInt64(0))
    let clock = ContinuousClock()
    let start = clock.now
    for input in Self.inputs {
      var mutator = LogMutator(generator: SeededGenerator(seed: input))
      let seed = seeds[Int(input % UInt64(seeds.count))]
      var bytes = seed.bytes
      var names: [String] = []
      // One in eight inputs only changes how the log is spelled: it must read as the same log.
      let equivalent = mutator.int(8) == 0
      if equivalent {
        let mutation = mutator.equivalent(bytes)
        names = [mutation.name]
        bytes = mutation.bytes
      } else {
        for _ in 0...mutator.int(3) {
          let mutation = mutator.mutate(bytes)
          names.append(mutation.name)
          bytes = mutation.bytes
        }
      }
      // A log with digests is read without its function one time in four: it must be refused.
      let withDigest = seed.digest == nil || mutator.int(4) != 0
      // The first line the mutations changed.
      var same = 0
      while same < bytes.count, same < seed.bytes.count, bytes[same] == seed.bytes[same] { same += 1 }
      let firstChanged = 1 + seed.newlines.prefix { $0 < same }.count

      if trace {
        // On standard error, unbuffered: the line of an input that traps is written before the trap.
        FileHandle.standardError.write(
          Data("[log-fuzz] input \(input): \(seed.name); \(names.joined(separator: ", "))\n".utf8))
      }
      let began = clock.now
      let outcome = Self.read(bytes, seed: seed, asText: mutator.int(2) == 0, withDigest: withDigest)
      let took = clock.now - began
      if took > slowest.duration { slowest = (took, input) }
      kinds[outcome.kind, default: 0] += 1

      let failure =
        if equivalent && withDigest {
          outcome.description == asWritten[seed.name]
            ? nil : "the same log, spelled otherwise, gave \(outcome), not \(asWritten[seed.name] ?? "")"
        } else {
          Self.failure(of: outcome, seed: seed, firstChanged: firstChanged, withDigest: withDigest)
        }
      guard let failure else { continue }
      failures += 1
      let text = String(decoding: bytes, as: UTF8.self)
      Issue.record(
        """
        \(failure)
          log: \(seed.name)\(withDigest ? "" : ", read without its digest function"); \
        mutations: \(names.joined(separator: ", "))
          replay: KATANA_LOG_FUZZ_SEED=\(input) swift test --filter RecordingLogFuzz
          input: \(text.count > 4_000 ? text.prefix(4_000) + "…" : Substring(text))
        """)
      if failures >= 5 { break }
    }
    let breakdown = kinds.sorted { $0.value > $1.value }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    print(
      "[log-fuzz] \(Self.inputs.count) inputs from \(seeds.count) logs, \(failures) failing, in \(clock.now - start) "
        + "(slowest input \(slowest.duration), seed \(slowest.seed)): \(breakdown)")
  }
}
