import Katana

/// What a feed reads as it follows a recording: the commits after a number, and the side effects changed since a
/// version. A ``StoreRecorder`` as the store goes on, or a recording opened from a file.
protocol FeedReadable {
  func commits(after sequence: Int) -> [RecordedCommit]
  func effects(changedSince version: Int) -> (effects: [RecordedEffect], version: Int)
}

extension StoreRecorder: FeedReadable {}

/// What an inspector shows: a store and its recorder (``LiveSource``), or a recording opened from a log, without a
/// store (``RecordingSource``, read-only).
protocol InspectorSource<S>: FeedReadable, Sendable {
  associatedtype S: State & Encodable
  /// The most commits the page can be sent (the recorder's window).
  var capacity: Int { get }
  /// Whether a page may move a store in time (false for a recording opened from a log).
  var canTravel: Bool { get }
  /// Whether the store shows a recorded state (time travel).
  var isAwayFromLive: Bool { get }
  /// The items the store refused since it last went away from live (kept after it comes back, until it goes away
  /// again).
  var refusedWhileAway: Int { get }
  /// Everything kept: the state before the oldest commit, the commits, the checkpoints and the side effects.
  func recording() -> Recording<S>
  /// Moves the store to the state after commit `sequence`.
  func travel(to sequence: Int) async throws
  /// Brings the store back to live.
  func returnToLive() async throws
}

/// A store as it goes on, through the recorder attached to it.
struct LiveSource<S: State & Encodable, D: SideEffectDependencyContainer>: InspectorSource {
  let store: Store<S, D>
  let recorder: StoreRecorder<S>

  var capacity: Int { recorder.capacity }
  var canTravel: Bool { true }
  var isAwayFromLive: Bool { recorder.isAwayFromLive }
  var refusedWhileAway: Int { recorder.refusedWhileAway }

  func commits(after sequence: Int) -> [RecordedCommit] {
    recorder.commits(after: sequence)
  }

  func effects(changedSince version: Int) -> (effects: [RecordedEffect], version: Int) {
    recorder.effects(changedSince: version)
  }

  func recording() -> Recording<S> {
    recorder.recording()
  }

  func travel(to sequence: Int) async throws {
    try await recorder.travel(store, to: sequence)
  }

  func returnToLive() async throws {
    try await recorder.returnToLive(store)
  }
}

/// A recording opened from a log (a bug report's attachment): the page shows it whole, and nothing moves.
struct RecordingSource<S: State & Encodable>: InspectorSource {
  let opened: Recording<S>

  var capacity: Int { max(1, opened.commits.count) }
  var canTravel: Bool { false }
  var isAwayFromLive: Bool { false }
  var refusedWhileAway: Int { 0 }

  func commits(after sequence: Int) -> [RecordedCommit] {
    guard let first = opened.commits.first?.sequence else { return [] }
    // Commits are numbered consecutively (a log's reader checks it): the ones after `sequence` are a suffix.
    let skip = min(opened.commits.count, max(0, sequence - first + 1))
    return Array(opened.commits[skip...])
  }

  func effects(changedSince version: Int) -> (effects: [RecordedEffect], version: Int) {
    // Every side effect of a finished recording is there at once: version 1 has them all.
    (version == 0 ? opened.effects : [], 1)
  }

  func recording() -> Recording<S> {
    opened
  }

  func travel(to sequence: Int) async throws {
    throw InspectorRequestError.readOnly
  }

  func returnToLive() async throws {
    throw InspectorRequestError.readOnly
  }
}

/// Why the inspector could not do what its page asked.
enum InspectorRequestError: Error, CustomStringConvertible {
  /// The inspector shows a recording opened from a log: there is no store to move.
  case readOnly

  var description: String {
    switch self {
    case .readOnly:
      "This inspector shows a recording opened from a log, without a store: there is nothing to move."
    }
  }
}
