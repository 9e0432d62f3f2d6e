import Foundation
import Katana

/// A `Recording` as text: JSON Lines, one JSON object per line, versioned.
///
/// ```swift
/// var registry = ReplayRegistry<AppState>()
/// registry.register(AddTodo.self, as: "todos.add")
/// let text = try RecordingLog.encode(recorder.recording(), registry: registry)
/// // ... attach `text` to a bug report; later, anywhere:
/// let recording = try RecordingLog.decode(text, registry: registry)
/// let state = try recording.replayedState()
/// ```
///
/// The lines, in order (fields not listed are absent or `null`):
/// 1. The header: `{"format": "katana.recording", "version": 1, "stateType": "AppState", "initialState": {...}}`.
///    `stateType` is the state's type name (`String(describing:)`), checked when the log is read;
///    `initialState` the state before the first commit. A log that continues another one (written with
///    `continuing: true`, for a sink that appends drained recordings) has `"continues": 41` instead of
///    `initialState`: a pointer to the state after commit 41, which the log it continues ends with; the reader
///    passes that state in.
/// 2. One line per commit, in commit order: `{"commit": 12, "time": 0.25, "type": "todos.add", "scope": null,
///    "updater": {...}, "cause": 3}`. `commit` is the sequence number (consecutive); `time` the seconds on the
///    store's clock since the recorder was attached; `type` the registered name, or the Swift type name if the
///    updater was not registered (then `updater` is absent and `"registered": false`); `scope` where the updater
///    applies, as registered (`"AppState.cart"`, `"AppState.rooms[id: _]"` for any element of a collection), or the
///    scope's own description for an unregistered one, null for the root; `element` the element's id, for a scope
///    on an element; `updater` the updater's own encoding; `cause` the number of the side effect that dispatched
///    it.
/// 3. A line per checkpoint, right after its commit: `{"checkpoint": 12, "state": {...}}`, or, in a log written
///    with a `digest` function, `{"checkpoint": 12, "digest": "..."}`: the function's value for that state, which
///    replay checks when the reader passes the same function.
/// 4. A line per side effect, after the commits: `{"effect": 3, "type": "MyApp.LoadUser", "scope": null,
///    "cause": null, "start": 0.1, "end": 0.3, "outcome": "completed"}`; `outcome` is `completed`, `failed` (with
///    `"error"`, the error's description), `cancelled`, or `running`.
///
/// Reading a log checks everything and applies nothing: a newer version, another state type, a line that is not
/// JSON, cut off, out of order or missing a field is a `RecordingLogError` naming its line. An updater of a type
/// the registry does not know is read as a stand-in at which replay stops with
/// `ReplayError/unknownType(sequence:typeName:)`.
public enum RecordingLog {
  /// The version this package writes, and the newest it reads.
  public static let version = 1
  /// The header's `format` field.
  public static let format = "katana.recording"

  /// Writes `recording` as JSON Lines (each line ends with a newline).
  ///
  /// - Parameters:
  ///   - recording: What to write.
  ///   - registry: The replayable updaters' names.
  ///   - continuing: Write a pointer to the initial state (the state after the commit before the first one)
  ///     instead of the state itself: for a log that continues another one, such as the recordings a sink drains
  ///     one after the other (`StoreRecorder.drain(_:)`). Reading it takes that state.
  ///   - digest: Write each checkpoint as this function's value for its state instead of the state: a log that
  ///     stays small however big the state is, and that replay still checks. Use a function with the same value
  ///     on every machine and run (a hash of the state's encoding with a fixed algorithm, say; not `hashValue`,
  ///     which changes from one run to the next).
  /// - Throws: `RecordingLogError/encodingFailed(sequence:typeName:underlying:)` if an updater's or the state's
  ///   own encoding throws.
  public static func encode<S: State & Codable>(
    _ recording: Recording<S>, registry: ReplayRegistry<S>, continuing: Bool = false,
    digest: ((S) -> String)? = nil
  ) throws(RecordingLogError) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    var text = ""
    func write(_ line: some Encodable, sequence: Int, typeName: String) throws(RecordingLogError) {
      do {
        text += String(decoding: try encoder.encode(line), as: UTF8.self) + "\n"
      } catch {
        throw .encodingFailed(sequence: sequence, typeName: typeName, underlying: error)
      }
    }
    let first = (recording.commits.first?.sequence ?? 1) - 1
    try write(
      Header(
        format: format, version: version, stateType: stateTypeName(S.self),
        initialState: continuing ? nil : recording.initialState, continues: continuing ? first : nil),
      sequence: first, typeName: stateTypeName(S.self))
    var checkpoints = recording.checkpoints[...]
    for commit in recording.commits {
      let entry = registry.entry(for: commit.base, scope: commit.scope)
      try write(
        CommitLine(commit: commit, entry: entry), sequence: commit.sequence,
        typeName: String(reflecting: type(of: commit.base)))
      while let checkpoint = checkpoints.first, checkpoint.sequence <= commit.sequence {
        checkpoints.removeFirst()
        try write(
          CheckpointLine(
            checkpoint: checkpoint.sequence, state: digest == nil ? checkpoint.state : nil,
            digest: digest.map { $0(checkpoint.state) }),
          sequence: checkpoint.sequence, typeName: stateTypeName(S.self))
      }
    }
    for effect in recording.effects {
      try write(EffectLine(effect), sequence: 0, typeName: String(reflecting: type(of: effect.sideEffect)))
    }
    return text
  }

  /// Reads a log written by ``encode(_:registry:continuing:digest:)`` (this version or an older one).
  ///
  /// - Parameters:
  ///   - text: The log.
  ///   - registry: The replayable updaters' names.
  ///   - initialState: The state a continuing log starts from (the state the log it continues ends with); a log
  ///     that carries its initial state ignores it.
  ///   - digest: The function the log's digest checkpoints were written with: the recording checks the replayed
  ///     states with it. Without it, the digests are read but not checked.
  /// - Throws: `RecordingLogError`; nothing is returned from a log with any bad line.
  public static func decode<S: State & Codable>(
    _ text: String, registry: ReplayRegistry<S>, initialState: S? = nil, digest: (@Sendable (S) -> String)? = nil
  ) throws(RecordingLogError) -> Recording<S> {
    let decoder = JSONDecoder()
    decoder.userInfo[registryKey] = AnyRegistry(lookup: { registry.byName[$0] })
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    // A log ends with a newline: the last element is empty unless the last line was cut off.
    let cutOff = lines.last.map { !$0.isEmpty } ?? false
    if !cutOff { lines.removeLast() }
    guard let first = lines.first else { throw .empty }
    let lastNumber = lines.count

    func decodeLine<T: Decodable>(_ type: T.Type, _ line: Substring, number: Int) throws(RecordingLogError) -> T {
      do {
        return try decoder.decode(T.self, from: Data(line.utf8))
      } catch {
        if cutOff && number == lastNumber { throw .truncatedLine(line: number) }
        throw .malformedLine(line: number, reason: describe(error))
      }
    }

    let probe = try decodeLine(HeaderProbe.self, first, number: 1)
    guard probe.format == format else { throw .notARecording(found: probe.format) }
    guard probe.version <= version else { throw .newerVersion(found: probe.version, supported: version) }
    guard probe.stateType == stateTypeName(S.self) else {
      throw .wrongStateType(expected: stateTypeName(S.self), found: probe.stateType)
    }
    let header = try decodeLine(Header<S>.self, first, number: 1)
    guard let start = header.initialState ?? initialState else {
      guard let continues = header.continues else {
        throw .malformedLine(line: 1, reason: "the header has neither \"initialState\" nor \"continues\"")
      }
      throw .missingInitialState(after: continues)
    }
    var commits: [RecordedCommit] = []
    var checkpoints: [Recording<S>.Checkpoint] = []
    var digests: [Recording<S>.DigestCheckpoint] = []
    var effects: [RecordedEffect] = []
    for (offset, line) in lines.enumerated().dropFirst() {
      let number = offset + 1
      let kind = try decodeLine(LineKind.self, line, number: number)
      if let sequence = kind.commit {
        if let last = commits.last, sequence != last.sequence + 1 {
          throw .malformedLine(line: number, reason: "commit \(sequence) follows commit \(last.sequence)")
        }
        if commits.isEmpty, let continues = header.continues, sequence != continues + 1 {
          throw .malformedLine(line: number, reason: "commit \(sequence) follows commit \(continues)")
        }
        let decoded = try decodeLine(DecodedCommit.self, line, number: number)
        commits.append(
          RecordedCommit(
            sequence: sequence, time: .seconds(decoded.time), updater: decoded.updater, cause: decoded.cause))
      } else if kind.checkpoint != nil {
        let decoded = try decodeLine(CheckpointLine<S>.self, line, number: number)
        if let state = decoded.state {
          checkpoints.append(Recording.Checkpoint(sequence: decoded.checkpoint, state: state))
        } else if let value = decoded.digest {
          digests.append(Recording.DigestCheckpoint(sequence: decoded.checkpoint, digest: value))
        } else {
          throw .malformedLine(line: number, reason: "a checkpoint with neither \"state\" nor \"digest\"")
        }
      } else if kind.effect != nil {
        effects.append(try decodeLine(EffectLine.self, line, number: number).recordedEffect)
      } else {
        throw .malformedLine(line: number, reason: "neither a commit, a checkpoint nor a side effect")
      }
    }
    return Recording(
      initialState: start, commits: commits, checkpoints: checkpoints, effects: effects, digests: digests,
      digest: digest)
  }

  static func stateTypeName(_ type: Any.Type) -> String {
    String(describing: type)
  }

  private static func describe(_ error: any Error) -> String {
    switch error {
    case DecodingError.keyNotFound(let key, _): "missing field \"\(key.stringValue)\""
    case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
      DecodingError.dataCorrupted(let context):
      context.codingPath.isEmpty
        ? context.debugDescription
        : "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
    case let error as RecordingLogError: error.description
    default: String(describing: error)
    }
  }
}

/// Why a log could not be written or read. Reading stops at the first bad line and returns nothing.
public enum RecordingLogError: Error, CustomStringConvertible {
  /// The text has no line at all.
  case empty
  /// The first line is not a recording's header (its `format` field).
  case notARecording(found: String)
  /// The log was written by a newer version of the format.
  case newerVersion(found: Int, supported: Int)
  /// The log records a store of another state type.
  case wrongStateType(expected: String, found: String)
  /// The last line is cut off (a log whose writer stopped mid-line).
  case truncatedLine(line: Int)
  /// A line is not valid JSON, lacks a field, or is out of order.
  case malformedLine(line: Int, reason: String)
  /// The log continues another one, from the state after commit `after`, and no initial state was given.
  case missingInitialState(after: Int)
  /// Writing: an updater's or the state's own encoding threw.
  case encodingFailed(sequence: Int, typeName: String, underlying: any Error)

  /// A sentence saying what is wrong, and where.
  public var description: String {
    switch self {
    case .empty: "The log is empty."
    case .notARecording(let found): "The log's first line is not a Katana recording (format \"\(found)\")."
    case .newerVersion(let found, let supported):
      "The log has version \(found); this package reads versions up to \(supported)."
    case .wrongStateType(let expected, let found): "The log records a store of \(found), not \(expected)."
    case .truncatedLine(let line): "Line \(line), the last one, is cut off."
    case .malformedLine(let line, let reason): "Line \(line): \(reason)."
    case .missingInitialState(let after):
      "The log continues another one from the state after commit \(after); pass that state to read it."
    case .encodingFailed(let sequence, let typeName, let underlying):
      "Encoding \(typeName) (commit \(sequence)) threw \(underlying)."
    }
  }
}

// MARK: - Lines

/// Every key a line may have.
enum LogKey: String, CodingKey {
  case format, version, stateType, initialState, continues
  case commit, time, type, scope, element, updater, registered, cause
  case checkpoint, state, digest
  case effect, start, end, outcome, error
}

struct HeaderProbe: Decodable {
  let format: String
  let version: Int
  let stateType: String
}

struct Header<S: Codable>: Codable {
  let format: String
  let version: Int
  let stateType: String
  /// Absent in a continuing log.
  let initialState: S?
  /// In a continuing log: the commit whose state it starts from.
  let continues: Int?
}

struct LineKind: Decodable {
  let commit: Int?
  let checkpoint: Int?
  let effect: Int?
}

struct CheckpointLine<S: Codable>: Codable {
  let checkpoint: Int
  /// Either the state or its digest.
  let state: S?
  let digest: String?
}

struct CommitLine<S: State>: Encodable {
  let commit: RecordedCommit
  let entry: ReplayRegistry<S>.Entry?

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: LogKey.self)
    try container.encode(commit.sequence, forKey: .commit)
    try container.encode(seconds(commit.time), forKey: .time)
    try container.encode(commit.cause, forKey: .cause)
    guard let entry else {
      try container.encode(commit.scope?.description, forKey: .scope)
      try container.encode(String(reflecting: type(of: commit.base)), forKey: .type)
      try container.encode(false, forKey: .registered)
      return
    }
    // The registered place: what reading checks (the scope's own description, for people, may be spelled
    // otherwise when the scope was made in steps).
    try container.encode(entry.place, forKey: .scope)
    try container.encode(entry.name, forKey: .type)
    try entry.encode(commit.base, commit.scope, &container)
  }
}

/// A commit line as read: the updater rebuilt through the registry the decoder carries.
struct DecodedCommit: Decodable {
  let time: Double
  let cause: Int?
  let updater: any Dispatchable

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: LogKey.self)
    time = try container.decode(Double.self, forKey: .time)
    cause = try container.decodeIfPresent(Int.self, forKey: .cause)
    let name = try container.decode(String.self, forKey: .type)
    let registered = try container.decodeIfPresent(Bool.self, forKey: .registered) ?? true
    guard registered, let registry = decoder.userInfo[registryKey] as? AnyRegistry<LogKey>,
      let entry = registry.lookup(name)
    else {
      updater = UnresolvedUpdater(typeName: name)
      return
    }
    let scope = try container.decodeIfPresent(String.self, forKey: .scope)
    guard scope == entry.place else {
      throw DecodingError.dataCorruptedError(
        forKey: .scope, in: container,
        debugDescription: "\(name) is registered for scope \(entry.place ?? "root"), not \(scope ?? "root")")
    }
    updater = try entry.decode(container)
  }
}

struct EffectLine: Codable {
  let effect: Int
  let type: String
  let scope: String?
  let cause: Int?
  let start: Double
  let end: Double?
  let outcome: String
  let error: String?

  init(_ effect: RecordedEffect) {
    self.effect = effect.id
    type = String(reflecting: Swift.type(of: (effect.sideEffect as? any ScopedDispatchable)?.base ?? effect.sideEffect))
    scope = (effect.sideEffect as? any ScopedDispatchable)?.scope.description
    cause = effect.cause
    start = seconds(effect.start)
    end = effect.end.map(seconds)
    switch effect.outcome {
    case .completed?: (outcome, error) = ("completed", nil)
    case .failed(let failure)?: (outcome, error) = ("failed", String(describing: failure))
    case .cancelled?: (outcome, error) = ("cancelled", nil)
    case nil: (outcome, error) = ("running", nil)
    }
  }

  /// The side effect as read back: its item stands in by name.
  var recordedEffect: RecordedEffect {
    let outcome: RecordedEffect.Outcome? =
      switch self.outcome {
      case "completed": .completed
      case "failed": .failed(RecordedError(description: error ?? ""))
      case "cancelled": .cancelled
      default: nil
      }
    return RecordedEffect(
      id: effect, sideEffect: UnresolvedUpdater(typeName: type), cause: cause, start: .seconds(start),
      end: end.map { .seconds($0) }, outcome: outcome)
  }
}

/// An error a log describes: its description, as the recording saw it.
public struct RecordedError: Error, CustomStringConvertible, Sendable {
  /// The error's description when it was recorded.
  public let description: String
}

/// The registry's lookup, as the decoder carries it in its `userInfo`.
struct AnyRegistry<Key: CodingKey>: @unchecked Sendable {
  // Sendable: the closure only reads an immutable copy of a Sendable registry.
  let lookup: (String) -> AnyEntry?

  init<S: State>(lookup: @escaping (String) -> ReplayRegistry<S>.Entry?) where Key == LogKey {
    self.lookup = { name in lookup(name).map { AnyEntry(place: $0.place, decode: $0.decode) } }
  }
}

struct AnyEntry {
  let place: String?
  let decode: @Sendable (KeyedDecodingContainer<LogKey>) throws -> any Dispatchable
}

let registryKey = CodingUserInfoKey(rawValue: "katana.registry")!

func seconds(_ duration: Duration) -> Double {
  let (seconds, attoseconds) = duration.components
  return Double(seconds) + Double(attoseconds) / 1e18
}
