import Foundation
import Katana

/// Writes a recording as a log: the lines ``RecordingLog`` documents, ending with a check of the state after the
/// last commit, so that what a reader accepts is checked to its end.
struct LogWriter<S: State & Codable> {
  let registry: ReplayRegistry<S>
  let continuing: Bool
  let digest: ((S) -> String)?
  private let encoder: JSONEncoder
  private var text = ""

  init(registry: ReplayRegistry<S>, continuing: Bool, digest: ((S) -> String)?) {
    self.registry = registry
    self.continuing = continuing
    self.digest = digest
    encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
  }

  mutating func write(_ recording: Recording<S>) throws(RecordingLogError) -> String {
    try Self.check(recording)
    let first = recording.commits.first?.sequence ?? 1
    try write(
      Header(
        format: RecordingLog.format, version: RecordingLog.version, stateType: registry.stateType,
        initialState: continuing ? nil : recording.initialState, continues: continuing ? first - 1 : nil),
      sequence: first - 1, typeName: registry.stateType)

    // The checks after each commit: its checkpoints (as states, or as digests with `digest`), then the digests the
    // recording carries (a log read with digests, written again). A check of a commit the recording does not
    // have would never be checked: it is left out.
    let checkpoints = Dictionary(grouping: recording.checkpoints, by: \.sequence)
    let digests = Dictionary(grouping: recording.digests, by: \.sequence)
    for commit in recording.commits {
      try write(
        CommitLine(commit: commit, entry: registry.entry(for: commit.base, scope: commit.scope)),
        sequence: commit.sequence, typeName: String(reflecting: type(of: commit.base)))
      var written: Set<String> = []
      for checkpoint in checkpoints[commit.sequence] ?? [] {
        if let digest {
          let value = digest(checkpoint.state)
          guard written.insert(value).inserted else { continue }
          try writeCheck(commit.sequence, state: nil, digest: value)
        } else {
          try writeCheck(commit.sequence, state: checkpoint.state, digest: nil)
        }
      }
      for checkpoint in digests[commit.sequence] ?? [] where written.insert(checkpoint.digest).inserted {
        try writeCheck(commit.sequence, state: nil, digest: checkpoint.digest)
      }
    }
    // A log ends verified: the state after the last commit, if the recording keeps no check there.
    if let last = recording.commits.last, checkpoints[last.sequence] == nil, digests[last.sequence] == nil {
      let state = try Self.finalState(of: recording)
      try writeCheck(last.sequence, state: digest == nil ? state : nil, digest: digest.map { $0(state) })
    }
    for effect in recording.effects {
      try write(EffectLine(effect), sequence: 0, typeName: String(reflecting: type(of: effect.sideEffect)))
    }
    return text
  }

  private mutating func writeCheck(_ sequence: Int, state: S?, digest: String?) throws(RecordingLogError) {
    try write(
      CheckpointLine(checkpoint: sequence, state: state, digest: digest), sequence: sequence,
      typeName: String(reflecting: S.self))
  }

  private mutating func write(_ line: some Encodable, sequence: Int, typeName: String) throws(RecordingLogError) {
    do {
      text += String(decoding: try encoder.encode(line), as: UTF8.self) + "\n"
    } catch {
      throw .encodingFailed(sequence: sequence, typeName: typeName, underlying: error)
    }
  }

  /// Throws if a reader would refuse the log of `recording`: its commits are numbered consecutively from 1 up, and
  /// its times are in the format's range.
  private static func check(_ recording: Recording<S>) throws(RecordingLogError) {
    var previous: Int?
    for commit in recording.commits {
      guard commit.sequence >= 1, previous.map({ commit.sequence - 1 == $0 }) ?? true else {
        let after = previous.map { "follows commit \($0)" } ?? "is numbered below 1"
        throw .invalidRecording(reason: "commit \(commit.sequence) \(after) (commits are numbered consecutively)")
      }
      if let problem = LogBounds.problem(with: seconds(commit.time)) {
        throw .invalidRecording(reason: "commit \(commit.sequence)'s time: \(problem)")
      }
      previous = commit.sequence
    }
    for effect in recording.effects {
      for time in [effect.start, effect.end].compactMap({ $0 }) {
        guard let problem = LogBounds.problem(with: seconds(time)) else { continue }
        throw .invalidRecording(reason: "side effect \(effect.id)'s time: \(problem)")
      }
    }
  }

  /// The state after the recording's last commit: replayed from its last checkpoint (or its initial state).
  private static func finalState(of recording: Recording<S>) throws(RecordingLogError) -> S {
    let sequences = Set(recording.commits.map(\.sequence))
    let base = recording.checkpoints.filter { sequences.contains($0.sequence) }.max { $0.sequence < $1.sequence }
    let commits = base.map { base in recording.commits.filter { $0.sequence > base.sequence } } ?? recording.commits
    do {
      return try Recording(initialState: base?.state ?? recording.initialState, commits: commits)
        .replayedState(equal: nil)
    } catch {
      throw .finalStateNotReplayable(lastCommit: recording.commits.last?.sequence ?? 0, error: error)
    }
  }
}
