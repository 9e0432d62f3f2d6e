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
    // The state before it, replayed from the nearest checkpoint, then the commit itself.
    let found: S?
    do {
      found = try recording.replayedState(after: sequence - 1)
    } catch {
      throw .replay(error)
    }
    guard let previous = found else { throw .notKept(sequence, kept: kept) }
    do {
      let state = try Recording(initialState: previous, commits: [recording.commits[sequence - first]])
        .replayedState(equal: nil)
      return (state, previous)
    } catch {
      throw .replay(error)
    }
  }

  /// The states after commit `sequence` and after the commit before it, as they would be without the commits in
  /// `skipped` (a skipped commit changes nothing; the others apply to what the skipped ones left): what the page
  /// shows when a person toggles commits off. Replayed from the last checkpoint before the first skipped commit.
  static func states<S: State>(at sequence: Int, in recording: Recording<S>, skipping skipped: Set<Int>)
    throws(Failure) -> (S, S?)
  {
    guard let firstSkipped = skipped.filter({ $0 <= sequence }).min() else {
      return try states(at: sequence, in: recording)
    }
    guard let first = recording.commits.first?.sequence else { throw .notKept(sequence, kept: nil) }
    let base = first - 1
    let kept = base...(base + recording.commits.count)
    guard kept.contains(sequence) else { throw .notKept(sequence, kept: kept) }
    if sequence == base { return (recording.initialState, nil) }
    // Checkpoints before the first skipped commit still hold.
    var state = recording.initialState
    var startSequence = base
    for checkpoint in recording.checkpoints.reversed()
    where checkpoint.sequence < firstSkipped && checkpoint.sequence < sequence && checkpoint.sequence >= base {
      state = checkpoint.state
      startSequence = checkpoint.sequence
      break
    }
    let applied = recording.commits[(startSequence + 1 - first)..<(sequence - first)].filter {
      !skipped.contains($0.sequence)
    }
    do {
      state = try Recording(initialState: state, commits: Array(applied)).replayedState(equal: nil)
      guard !skipped.contains(sequence) else { return (state, state) }
      let after = try Recording(initialState: state, commits: [recording.commits[sequence - first]])
        .replayedState(equal: nil)
      return (after, state)
    } catch {
      throw .replay(error)
    }
  }
}
