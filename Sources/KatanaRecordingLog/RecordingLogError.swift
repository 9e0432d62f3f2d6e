import Katana

/// Why a log could not be written or read. Reading stops at the first bad line and returns nothing.
///
/// A log is untrusted input: whatever its bytes, reading it returns a recording or throws one of these (a line
/// that would make a recording replay to a state its checks do not vouch for is refused here, before replay).
public enum RecordingLogError: Error, CustomStringConvertible {
  /// The text has no line at all.
  case empty
  /// The first line is not a recording's header (its `format` field).
  case notARecording(found: String)
  /// The log was written by a newer version of the format.
  case newerVersion(found: Int, supported: Int)
  /// The log records a store of another state type: `found` is the name its header gives, `expected` the registry's
  /// ``ReplayRegistry/stateType`` (for a version-1 log, the state type's short name).
  case wrongStateType(expected: String, found: String)
  /// The last line is cut off (a log whose writer stopped mid-line).
  case truncatedLine(line: Int)
  /// A line is not valid JSON, lacks a field, has a number out of range, or is out of place.
  case malformedLine(line: Int, reason: String)
  /// The log continues another one, from the state after commit `after`, and no initial state was given.
  case missingInitialState(after: Int)
  /// The log's last commit, `lastCommit`, is not followed by a checkpoint or a digest: nothing would check what it
  /// and the commits after the last check did. A log this package writes always ends with one; a version-1 log
  /// ends with one only if the recorder happened to keep a checkpoint at its last commit.
  case unverifiedEnd(lastCommit: Int)
  /// Line `line` is a digest checkpoint, and the log was read without the digest function that checks it.
  case missingDigestFunction(line: Int)
  /// Writing: an updater's or the state's own encoding threw.
  case encodingFailed(sequence: Int, typeName: String, underlying: any Error)
  /// Writing: the recording is not one a log can hold (its commits are not numbered consecutively from 1 up, or a
  /// time is negative or beyond the format's range); nothing was written.
  case invalidRecording(reason: String)
  /// Writing: the recording keeps no checkpoint at its last commit, and replaying it up to there (to write the
  /// state a log ends with) failed; nothing was written.
  case finalStateNotReplayable(lastCommit: Int, error: ReplayError)

  /// A sentence saying what is wrong, where, and what to do.
  public var description: String {
    switch self {
    case .empty: "The log is empty."
    case .notARecording(let found): "The log's first line is not a Katana recording (format \"\(found)\")."
    case .newerVersion(let found, let supported):
      "The log has version \(found); this package reads versions up to \(supported)."
    case .wrongStateType(let expected, let found):
      "The log records a store of \(found), not \(expected). If it is the same state type under another name (the "
        + "type was renamed or moved), create the registry with ReplayRegistry(stateType: \"\(found)\")."
    case .truncatedLine(let line): "Line \(line), the last one, is cut off."
    case .malformedLine(let line, let reason): "Line \(line): \(reason)."
    case .missingInitialState(let after):
      "The log continues another one from the state after commit \(after); pass that state to read it."
    case .unverifiedEnd(let lastCommit):
      "The log ends with commit \(lastCommit) and no checkpoint or digest after it, so nothing checks its last "
        + "commits: it is cut off at a line's end, or was written by version 1 of the format (which ended with a "
        + "checkpoint only if the recorder kept one there). Write the log again from its recording."
    case .missingDigestFunction(let line):
      "Line \(line) is a digest checkpoint: pass the function the log was written with (decode's digest: "
        + "parameter), without which nothing checks the log."
    case .encodingFailed(let sequence, let typeName, let underlying):
      "Encoding \(typeName) (commit \(sequence)) threw \(underlying)."
    case .invalidRecording(let reason): "The recording cannot be written as a log: \(reason)."
    case .finalStateNotReplayable(let lastCommit, let error):
      "The recording keeps no checkpoint at its last commit, \(lastCommit), and replaying it to write one failed: "
        + "\(error)"
    }
  }
}
