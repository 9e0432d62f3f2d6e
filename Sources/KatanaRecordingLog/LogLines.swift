import Foundation
import Katana

// The lines of a log, as written and as read. Reading checks every number before it is converted: a log is
// untrusted input, and a number that JSON allows may not be one that `Duration` or `Int` arithmetic does.

/// Every key a line may have.
enum LogKey: String, CodingKey {
  case format, version, stateType, initialState, continues
  case commit, time, type, scope, element, updater, registered, cause
  case checkpoint, state, digest
  case effect, start, end, outcome, error
}

/// The ranges a log's numbers must fall in.
enum LogBounds {
  /// The largest time a log gives, in seconds (about 31.7 million years): far beyond any session, and far inside
  /// what `Duration` holds.
  static let maximumSeconds = 1e15

  /// `seconds` as a duration, if it is a time a log may give: finite, from 0 to ``maximumSeconds``.
  static func duration(_ seconds: Double) -> Duration? {
    guard seconds.isFinite, seconds >= 0, seconds <= maximumSeconds else { return nil }
    return .seconds(seconds)
  }

  /// Why `seconds` is not a time a log may give, or nil if it is.
  static func problem(with seconds: Double) -> String? {
    duration(seconds) == nil ? "\(seconds) is not a time in seconds from 0 to \(maximumSeconds)" : nil
  }

  /// Decodes the time at `key`, checked.
  static func decodeTime(
    _ container: KeyedDecodingContainer<LogKey>, forKey key: LogKey
  ) throws -> Duration {
    let seconds = try container.decode(Double.self, forKey: key)
    guard let duration = duration(seconds) else {
      throw DecodingError.dataCorruptedError(
        forKey: key, in: container, debugDescription: problem(with: seconds) ?? "not a time")
    }
    return duration
  }

  /// Decodes the number at `key`, if present, checked to be at least 1 (commits and side effects are numbered
  /// from 1).
  static func decodeNumber(
    _ container: KeyedDecodingContainer<LogKey>, forKey key: LogKey
  ) throws -> Int? {
    guard let number = try container.decodeIfPresent(Int.self, forKey: key) else { return nil }
    guard number >= 1 else {
      throw DecodingError.dataCorruptedError(
        forKey: key, in: container, debugDescription: "\(number) is not a number from 1 up")
    }
    return number
  }
}

/// The first line's fields that say what the log is, read before anything else.
struct HeaderProbe: Decodable {
  let format: String
  let version: Int
  let stateType: String
}

/// The first line.
struct Header<S: Codable>: Codable {
  let format: String
  let version: Int
  let stateType: String
  /// Absent in a continuing log.
  let initialState: S?
  /// In a continuing log: the commit whose state it starts from.
  let continues: Int?
}

/// What a line is: the one key that names its kind.
enum LineKind {
  case header
  case commit(Int)
  case checkpoint(Int)
  case effect

  /// The keys that name a kind.
  static let keys: [LogKey] = [.format, .commit, .checkpoint, .effect]
}

extension LineKind: Decodable {
  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: LogKey.self)
    let present = Self.keys.filter { container.contains($0) }
    guard let key = present.first, present.count == 1 else {
      let reason =
        present.isEmpty
        ? "neither a commit, a checkpoint nor a side effect"
        : "a line is one kind, and this one has \(present.map { "\"\($0.stringValue)\"" }.joined(separator: " and "))"
      throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: reason))
    }
    switch key {
    case .format: self = .header
    case .commit:
      guard let number = try LogBounds.decodeNumber(container, forKey: .commit) else {
        throw DecodingError.valueNotFound(
          Int.self, DecodingError.Context(codingPath: [key], debugDescription: "a commit line without its number"))
      }
      self = .commit(number)
    case .checkpoint: self = .checkpoint(try container.decode(Int.self, forKey: .checkpoint))
    default: self = .effect
    }
  }
}

/// A checkpoint line: the state after a commit, or its digest.
struct CheckpointLine<S: Codable>: Encodable {
  let checkpoint: Int
  /// Either the state or its digest.
  let state: S?
  let digest: String?
}

/// A checkpoint line as read: exactly one of the state and the digest.
enum DecodedCheck<S: Codable>: Decodable {
  case state(S)
  case digest(String)

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: LogKey.self)
    switch (container.contains(.state), container.contains(.digest)) {
    case (true, false): self = .state(try container.decode(S.self, forKey: .state))
    case (false, true): self = .digest(try container.decode(String.self, forKey: .digest))
    case (true, true):
      throw DecodingError.dataCorrupted(
        DecodingError.Context(codingPath: [], debugDescription: "a checkpoint with both \"state\" and \"digest\""))
    case (false, false):
      throw DecodingError.dataCorrupted(
        DecodingError.Context(codingPath: [], debugDescription: "a checkpoint with neither \"state\" nor \"digest\""))
    }
  }
}

/// A commit line as written.
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
  let time: Duration
  let cause: Int?
  let updater: any Dispatchable

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: LogKey.self)
    time = try LogBounds.decodeTime(container, forKey: .time)
    cause = try LogBounds.decodeNumber(container, forKey: .cause)
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

/// A side effect's line, as written and as read.
struct EffectLine: Codable {
  /// The outcomes a line may give.
  static let outcomes: Set<String> = ["completed", "failed", "cancelled", "running"]

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

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: LogKey.self)
    guard let effect = try LogBounds.decodeNumber(container, forKey: .effect) else {
      throw DecodingError.keyNotFound(
        LogKey.effect, DecodingError.Context(codingPath: [], debugDescription: "a side effect without its number"))
    }
    self.effect = effect
    type = try container.decode(String.self, forKey: .type)
    scope = try container.decodeIfPresent(String.self, forKey: .scope)
    cause = try LogBounds.decodeNumber(container, forKey: .cause)
    start = try container.decode(Double.self, forKey: .start)
    end = try container.decodeIfPresent(Double.self, forKey: .end)
    outcome = try container.decode(String.self, forKey: .outcome)
    error = try container.decodeIfPresent(String.self, forKey: .error)
    for (key, value) in [(LogKey.start, start), (.end, end)] {
      guard let value, let problem = LogBounds.problem(with: value) else { continue }
      throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: problem)
    }
    guard Self.outcomes.contains(outcome) else {
      throw DecodingError.dataCorruptedError(
        forKey: .outcome, in: container,
        debugDescription: "\"\(clipped(outcome))\" is none of \(Self.outcomes.sorted().joined(separator: ", "))")
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
    // The times were checked when the line was read.
    return RecordedEffect(
      id: effect, sideEffect: UnresolvedUpdater(typeName: type), cause: cause,
      start: LogBounds.duration(start) ?? .zero, end: end.flatMap(LogBounds.duration), outcome: outcome)
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

/// `duration` in seconds.
func seconds(_ duration: Duration) -> Double {
  let (seconds, attoseconds) = duration.components
  return Double(seconds) + Double(attoseconds) / 1e18
}

/// `text`, cut to a length an error message can quote.
func clipped(_ text: String, to length: Int = 120) -> String {
  text.utf8.count <= length ? text : text.prefix(length) + "…"
}
