import NIOConcurrencyHelpers

/// Whether a write's transaction may still commit, decided once by whichever comes first: the transaction
/// reaching its `COMMIT`, or the request giving up on it (its deadline, or its cancellation).
///
/// The request can answer "nothing was saved" only if it gave up first: the transaction then refuses to
/// commit when it gets there (it may be stuck on a dead connection and get there late, or never). If the
/// commit came first, its outcome is unknown until the database answers.
final class WriteFate: Sendable {
  enum State: Equatable {
    /// Neither has happened yet.
    case running
    /// The transaction has sent, or is about to send, its `COMMIT`.
    case committing
    /// The request gave up before the commit: the transaction will roll back.
    case abandoned
  }

  private let state = NIOLockedValueBox(State.running)

  /// Called by the transaction right before it commits; false means it must roll back instead.
  func beginCommit() -> Bool {
    state.withLockedValue { state in
      guard state == .running else { return false }
      state = .committing
      return true
    }
  }

  /// Called by the request when it gives up; returns the state it found: `.running` (now abandoned, nothing
  /// will be saved) or `.committing` (the outcome is unknown).
  func abandon() -> State {
    state.withLockedValue { state in
      let found = state
      if state == .running { state = .abandoned }
      return found
    }
  }

  /// The current state.
  var current: State { state.withLockedValue { $0 } }
}
