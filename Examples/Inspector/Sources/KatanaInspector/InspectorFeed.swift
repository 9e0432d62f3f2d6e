import Katana

/// One item on the inspector's timeline, as the page receives it.
struct TimelineItem: Encodable, Sendable, Equatable {
  /// `"commit"` or `"sideEffect"`.
  let kind: String
  /// The commit's sequence number, or the side effect's id.
  let id: Int
  /// The item's type, without its module (a scoped item's feature type).
  let type: String
  /// The scope it was dispatched through; nil for the root.
  let scope: String?
  /// The side effect that dispatched it (its id), if any.
  let cause: Int?
  /// When it was committed or started, in microseconds since the recorder was attached.
  let start: Int64
  /// How long a side effect ran, in microseconds; nil for a commit or a side effect still running.
  let duration: Int64?
  /// `"completed"`, `"cancelled"`, `"failed: <error>"`; `"committed"` for a commit; nil while running.
  let outcome: String?
  /// True when this item updates a side effect the page already has (it ended).
  let update: Bool
}

/// What the page is sent in one message: the next items, in commit order for commits and start order for side
/// effects, and how many commits it never got.
struct FeedBatch: Sendable, Equatable {
  var items: [TimelineItem] = []
  /// Commits that left the recorder's window before this connection took them (the page was too slow), in all.
  var dropped: Int = 0
  /// The last commit sent so far.
  var lastSequence: Int = 0
}

/// One connection's cursor over the recorder: which commits and side effects it has sent. A pure state machine:
/// it is given a recording, returns what to send, and keeps no reference to the store.
struct InspectorFeed {
  /// The most items one batch carries; the rest wait for the next batch.
  let maximumBatch: Int
  /// The last commit sent; nil before the first batch.
  private(set) var lastSequence: Int?
  /// The last side effect sent.
  private var lastEffectID = 0
  /// Side effects sent while they ran: sent again when they end.
  private var running: Set<Int> = []
  /// Commits that left the window unsent, in all.
  private(set) var dropped = 0
  /// ``dropped`` as the last batch reported it.
  private var lastReportedDropped = 0

  init(maximumBatch: Int) {
    self.maximumBatch = max(1, maximumBatch)
  }

  /// The items of `recording` not sent yet (at most ``maximumBatch`` commits), and what was lost since the last
  /// call; nil if there is nothing new.
  mutating func next<S: State>(from recording: Recording<S>) -> FeedBatch? {
    var items: [TimelineItem] = []
    let commits = recording.commits
    if let first = commits.first?.sequence {
      // The first batch starts at the window's oldest commit: what came before was never this page's.
      let last = lastSequence ?? (first - 1)
      if last + 1 < first {
        dropped += first - (last + 1)
      }
      let start = max(0, last + 1 - first)
      if start < commits.count {
        let end = min(commits.count, start + maximumBatch)
        items.reserveCapacity(end - start)
        for commit in commits[start..<end] {
          items.append(Self.item(commit))
        }
        lastSequence = commits[end - 1].sequence
      } else {
        lastSequence = last
      }
    }
    // Side effects: new ones, and running ones that ended.
    for effect in recording.effects where effect.id > lastEffectID || running.contains(effect.id) {
      if effect.id > lastEffectID {
        items.append(Self.item(effect, update: false))
        lastEffectID = effect.id
        if effect.end == nil { running.insert(effect.id) }
      } else if effect.end != nil {
        items.append(Self.item(effect, update: true))
        running.remove(effect.id)
      }
    }
    // The window drops the oldest side effects first: those that left it while running are forgotten.
    if let oldest = recording.effects.first?.id {
      running = running.filter { $0 >= oldest }
    }
    guard !items.isEmpty || dropped != lastReportedDropped else { return nil }
    lastReportedDropped = dropped
    return FeedBatch(items: items, dropped: dropped, lastSequence: lastSequence ?? 0)
  }

  /// Whether the recording holds commits this feed has not sent.
  func hasMore<S: State>(in recording: Recording<S>) -> Bool {
    guard let last = recording.commits.last?.sequence else { return false }
    return last > (lastSequence ?? 0)
  }

  static func item(_ commit: RecordedCommit) -> TimelineItem {
    TimelineItem(
      kind: "commit", id: commit.sequence, type: typeName(commit.base), scope: commit.scope?.description,
      cause: commit.cause, start: microseconds(commit.time), duration: nil, outcome: "committed", update: false)
  }

  static func item(_ effect: RecordedEffect, update: Bool) -> TimelineItem {
    let scoped = effect.sideEffect as? any ScopedDispatchable
    let outcome: String? =
      switch effect.outcome {
      case nil: nil
      case .completed: "completed"
      case .cancelled: "cancelled"
      case .failed(let error): "failed: \(error)"
      }
    return TimelineItem(
      kind: "sideEffect", id: effect.id, type: typeName(scoped?.base ?? effect.sideEffect),
      scope: scoped?.scope.description, cause: effect.cause, start: microseconds(effect.start),
      duration: effect.end.map { microseconds($0 - effect.start) }, outcome: outcome, update: update)
  }

  /// The type's name without its module: what a person filters by.
  static func typeName(_ item: any Dispatchable) -> String {
    String(describing: type(of: item))
  }

  static func microseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
  }
}
