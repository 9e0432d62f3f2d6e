import Katana
import Testing

/// Turns a recorded session into a regression test: replays `recording` and checks that every state it recorded
/// comes out again, and, if given, the final state.
///
/// ```swift
/// @Test func bugReport1234() throws {
///   let recording = try RecordingLog.decode(bugReportLog, registry: .app)
///   expectReplay(recording, endsAt: AppState(todos: [...]))
/// }
/// ```
///
/// A failure is recorded at the caller's line, once: the first commit whose updater cannot be applied, or the
/// first checkpoint where the replayed state differs from the recorded one (with each field that differs), or a
/// final state other than `expected`. Helpers that call it pass their own caller's `fileID`, `filePath`, `line`
/// and `column` on, so that the failure points at the test.
///
/// - Returns: The replayed final state, or nil if replay stopped.
@discardableResult
public func expectReplay<S: State & Equatable>(
  _ recording: Recording<S>, endsAt expected: S? = nil, fileID: String = #fileID, filePath: String = #filePath,
  line: Int = #line, column: Int = #column
) -> S? {
  let location = sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
  let states: [S]
  do {
    states = try recording.replayedStates(equal: nil)
  } catch {
    recordIssue("The recording does not replay: \(error)", at: location)
    return nil
  }
  let first = recording.commits.first?.sequence ?? 1
  for checkpoint in recording.checkpoints {
    let index = checkpoint.sequence - first
    guard states.indices.contains(index), states[index] != checkpoint.state else { continue }
    let difference = StateDiff.lines(expected: checkpoint.state, actual: states[index])
    recordIssue(
      "After commit \(checkpoint.sequence) the replayed state differs from the recorded one (recorded → replayed):\n"
        + difference.map { "  " + $0 }.joined(separator: "\n"), at: location)
    return nil
  }
  let final = states.last ?? recording.initialState
  if let expected, final != expected {
    let difference = StateDiff.lines(expected: expected, actual: final)
    recordIssue(
      "The replayed session ends at another state (expected → replayed):\n"
        + difference.map { "  " + $0 }.joined(separator: "\n"), at: location)
  }
  return final
}
