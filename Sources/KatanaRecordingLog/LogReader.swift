import Foundation
import Katana

/// Reads a log: splits it into lines on its bytes, and checks each line, in order, against the lines before it.
///
/// A log is untrusted input (a bug report's attachment, a row of a database). Reading it never traps and goes
/// over its bytes a bounded number of times (each line is handed to `JSONDecoder` twice: once for its kind, once
/// for its fields); it keeps nothing but its lines' values. Every number is checked before it is converted,
/// sequence numbers are compared without arithmetic that could overflow, and nothing is sized from a count the log
/// gives.
struct LogReader<S: State & Codable> {
  let registry: ReplayRegistry<S>
  let initialState: S?
  let digest: (@Sendable (S) -> String)?
  private let decoder: JSONDecoder

  init(registry: ReplayRegistry<S>, initialState: S?, digest: (@Sendable (S) -> String)?) {
    self.registry = registry
    self.initialState = initialState
    self.digest = digest
    decoder = JSONDecoder()
    decoder.userInfo[registryKey] = AnyRegistry(lookup: { registry.byName[$0] })
  }

  /// Where the reader is: what the next line may be.
  private struct Place {
    /// The last commit read, if any.
    var lastCommit: Int?
    /// Whether a check (a checkpoint or a digest) follows ``lastCommit``.
    var lastCommitChecked = false
    /// Whether a side effect was read: only side effects may follow.
    var inEffects = false
  }

  func read(_ bytes: Data) throws(RecordingLogError) -> Recording<S> {
    var lines = LogLines(bytes)
    guard let first = lines.next() else { throw .empty }
    let (header, start) = try readHeader(first)
    var commits: [RecordedCommit] = []
    var checkpoints: [Recording<S>.Checkpoint] = []
    var digests: [Recording<S>.DigestCheckpoint] = []
    var effects: [RecordedEffect] = []
    var place = Place()
    while let line = lines.next() {
      let number = line.number
      switch try decode(LineKind.self, line) {
      case .header:
        throw .malformedLine(line: number, reason: "a second header (a log has one, on its first line)")
      case .commit(let sequence):
        guard !place.inEffects else {
          throw .malformedLine(
            line: number, reason: "commit \(sequence) after a side effect (side effects follow every commit)")
        }
        // `sequence` is at least 1 (checked when read): `sequence - 1` cannot overflow, where `last + 1` could.
        if let last = place.lastCommit {
          guard sequence - 1 == last else {
            throw .malformedLine(line: number, reason: "commit \(sequence) follows commit \(last)")
          }
        } else if let continues = header.continues, sequence - 1 != continues {
          throw .malformedLine(
            line: number, reason: "commit \(sequence) is the first of a log that continues from commit \(continues)")
        }
        let decoded = try decode(DecodedCommit.self, line)
        commits.append(
          RecordedCommit(sequence: sequence, time: decoded.time, updater: decoded.updater, cause: decoded.cause))
        place.lastCommit = sequence
        place.lastCommitChecked = false
      case .checkpoint(let sequence):
        guard !place.inEffects, let last = place.lastCommit, sequence == last else {
          let before = place.inEffects ? "a side effect" : place.lastCommit.map { "commit \($0)" } ?? "the header"
          throw .malformedLine(
            line: number,
            reason: "checkpoint \(sequence) follows \(before), not commit \(sequence) (a checkpoint follows its commit)"
          )
        }
        switch try decode(DecodedCheck<S>.self, line) {
        case .state(let state):
          checkpoints.append(Recording.Checkpoint(sequence: sequence, state: state))
        case .digest(let value):
          // Without the function nothing checks a digest: a log checked by digests cannot be trusted without it.
          guard digest != nil else { throw .missingDigestFunction(line: number) }
          digests.append(Recording.DigestCheckpoint(sequence: sequence, digest: value))
        }
        place.lastCommitChecked = true
      case .effect:
        // After an unchecked commit, this is the log's last commit: the log's end says so.
        effects.append(try decode(EffectLine.self, line).recordedEffect)
        place.inEffects = true
      }
    }
    if let last = place.lastCommit, !place.lastCommitChecked {
      throw .unverifiedEnd(lastCommit: last)
    }
    return Recording(
      initialState: start, commits: commits, checkpoints: checkpoints, effects: effects, digests: digests,
      digest: digest)
  }

  /// Reads and checks the first line; returns it, and the state the log starts from.
  private func readHeader(_ line: LogLines.Line) throws(RecordingLogError) -> (Header<S>, S) {
    let probe = try decode(HeaderProbe.self, line)
    guard probe.format == RecordingLog.format else { throw .notARecording(found: clipped(probe.format)) }
    guard probe.version <= RecordingLog.version else {
      throw .newerVersion(found: probe.version, supported: RecordingLog.version)
    }
    guard probe.version >= 1 else {
      throw .malformedLine(line: 1, reason: "version \(probe.version) (versions are numbered from 1)")
    }
    // Version 1 named the state type by its short name, which another type may share: read only where it matches.
    let expected = probe.version == 1 ? String(describing: S.self) : registry.stateType
    guard probe.stateType == expected else {
      throw .wrongStateType(expected: expected, found: clipped(probe.stateType))
    }
    let header = try decode(Header<S>.self, line)
    switch (header.initialState, header.continues) {
    case (let state?, nil):
      return (header, state)
    case (nil, let continues?):
      // The first commit is `continues + 1`: a pointer at Int.max has no commit after it.
      guard continues >= 0, continues < Int.max else {
        throw .malformedLine(line: 1, reason: "\"continues\" is \(continues), not a commit a log can continue from")
      }
      guard let initialState else { throw .missingInitialState(after: continues) }
      return (header, initialState)
    case (nil, nil):
      throw .malformedLine(line: 1, reason: "the header has neither \"initialState\" nor \"continues\"")
    case (_?, _?):
      throw .malformedLine(line: 1, reason: "the header has both \"initialState\" and \"continues\"")
    }
  }

  /// Decodes one line as `T`.
  private func decode<T: Decodable>(_ type: T.Type, _ line: LogLines.Line) throws(RecordingLogError) -> T {
    guard !line.bytes.isEmpty else {
      throw .malformedLine(line: line.number, reason: "an empty line (each line of a log is one JSON object)")
    }
    do {
      return try decoder.decode(T.self, from: line.bytes)
    } catch {
      if line.isCutOff { throw .truncatedLine(line: line.number) }
      throw .malformedLine(line: line.number, reason: describe(error))
    }
  }

  private func describe(_ error: any Error) -> String {
    switch error {
    case DecodingError.keyNotFound(let key, _): return "missing field \"\(key.stringValue)\""
    case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
      DecodingError.dataCorrupted(let context):
      var text = context.debugDescription
      // Foundation's own words on where the JSON goes wrong, if it gives them.
      if let underlying = context.underlyingError {
        text += " (\(clipped(String(describing: underlying))))"
      }
      guard !context.codingPath.isEmpty else { return text }
      return "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(text)"
    case let error as RecordingLogError: return error.description
    default: return clipped(String(describing: error))
    }
  }
}

/// A log's lines, split on the byte `\n` (a `\r` before it is dropped, so CRLF line ends read as LF ones), one at a
/// time: nothing is kept per line beyond the one handed out.
struct LogLines: IteratorProtocol {
  struct Line {
    /// Its number, from 1.
    let number: Int
    /// Its bytes, without the line end.
    let bytes: Data
    /// Whether it is the last line and no newline ends it: a line that does not parse is then cut off.
    let isCutOff: Bool
  }

  private let bytes: Data
  private var position: Data.Index
  private var number = 0

  init(_ bytes: Data) {
    self.bytes = bytes
    position = bytes.startIndex
    // A byte order mark, as some editors write at the start of a UTF-8 file, is no part of the first line.
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position += 3 }
  }

  mutating func next() -> Line? {
    guard position < bytes.endIndex else { return nil }
    number += 1
    let newline = bytes[position...].firstIndex(of: UInt8(ascii: "\n"))
    var end = newline ?? bytes.endIndex
    if end > position, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
    let line = Line(number: number, bytes: Data(bytes[position..<end]), isCutOff: newline == nil)
    position = newline.map { $0 + 1 } ?? bytes.endIndex
    return line
  }
}
