import Katana

/// The state after a commit, and the one before it, rebuilt from a recording: replayed from the nearest
/// checkpoint (or the recording's initial state), so that a lookup applies at most a checkpoint interval of
/// updaters, off the store.
enum CommitStates {
  /// Why a state cannot be shown.
  enum Failure: Error, CustomStringConvertible {
    case notKept(Int, kept: ClosedRange<Int>?)
    case replay(ReplayError)

    var description: String {
      switch self {
      case .notKept(let sequence, let kept?):
        "Commit \(sequence) is not in the recorder's window, which keeps \(kept.lowerBound) to \(kept.upperBound)."
      case .notKept(let sequence, nil):
        "Commit \(sequence) is not in the recorder's window, which is empty."
      case .replay(let error):
        "The recording cannot be replayed: \(error)"
      }
    }
  }

  /// The states after commit `sequence` and after the commit before it (nil when `sequence` is the state before
  /// the window's first commit, which has no previous state kept).
  static func states<S: State>(at sequence: Int, in recording: Recording<S>) throws(Failure) -> (S, S?) {
    guard let first = recording.commits.first?.sequence else { throw .notKept(sequence, kept: nil) }
    let base = first - 1
    let kept = base...(base + recording.commits.count)
    guard kept.contains(sequence) else { throw .notKept(sequence, kept: kept) }
    if sequence == base { return (recording.initialState, nil) }
    // Start from the last checkpoint before the previous commit, so that both states come from one replay.
    var start = recording.initialState
    var startSequence = base
    for checkpoint in recording.checkpoints.reversed()
    where checkpoint.sequence <= sequence - 1 && checkpoint.sequence >= base {
      start = checkpoint.state
      startSequence = checkpoint.sequence
      break
    }
    let commits = Array(recording.commits[(startSequence + 1 - first)..<(sequence + 1 - first)])
    let states: [S]
    do {
      states = try Recording(initialState: start, commits: commits).replayedStates(equal: nil)
    } catch {
      throw .replay(error)
    }
    let previous = states.count >= 2 ? states[states.count - 2] : start
    return (states[states.count - 1], previous)
  }
}
