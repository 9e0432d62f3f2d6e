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

/// One connection's cursor over the recorder: which commits and side effects it has sent. A state machine over
/// what it reads: each call reads only what is new since the last one (``StoreRecorder/commits(after:)`` and
/// ``StoreRecorder/effects(changedSince:)``, which copy nothing else, so a page following a busy store costs the
/// store nothing per poll beyond those entries), returns what to send, and keeps no reference to the store.
struct InspectorFeed {
  /// The most commits one batch carries; the rest wait for the next batch.
  let maximumBatch: Int
  /// The last commit sent; nil before the first batch.
  private(set) var lastSequence: Int?
  /// The highest side-effect number sent.
  private var lastEffectID = 0
  /// What the last read of the side effects returned, to pass to the next.
  private var effectsVersion = 0
  /// Whether the last read left commits unsent (more than a batch's worth were waiting).
  private(set) var hasMore = false
  /// Commits that left the window unsent, in all.
  private(set) var dropped = 0
  /// ``dropped`` as the last batch reported it.
  private var lastReportedDropped = 0
  /// When the first commit sent after the last skip was made: side effects that started before it belong to the
  /// commits skipped, and are skipped with them (the page would otherwise show a run of side effects whose commits
  /// are missing).
  private var skippedUntil: Duration?
  /// Side effects that started after the last commit sent, by id, as last read: held until a commit after them is
  /// sent, or until a read finds no new commit (the store made none since: they are the newest items). A page would
  /// otherwise end its timeline with a run of side effects whose commits it has not got yet. They are at most those
  /// of the commits in the recorder's window that wait (those that leave it unsent are skipped with them).
  private var held: [Int: RecordedEffect] = [:]

  init(maximumBatch: Int) {
    self.maximumBatch = max(1, maximumBatch)
  }

  /// What `recorder` recorded that this feed has not sent yet (at most ``maximumBatch`` commits, and the side effects
  /// that started or ended up to the last of them: one that started after it is held for a later batch), and what was
  /// lost since the last call; nil if there is nothing new.
  mutating func next(from recorder: some FeedReadable) -> FeedBatch? {
    var items: [TimelineItem] = []
    // Commits first, then side effects: the second read has every side effect that started before the newest
    // commit read, however long the first read took or this thread paused between the two (read the other way
    // round, the commits made during the reads, tens of milliseconds on a busy machine, went out without the side
    // effects of their time, and the page's timeline ended with a screen of commits until the next poll). Those that
    // started after the last commit sent are held until a commit after them is.
    let commits = recorder.commits(after: lastSequence ?? 0)
    let (effects, version) = recorder.effects(changedSince: effectsVersion)
    hasMore = false
    // The last commit sent in this batch; nil if the store made no commit since the last read.
    var sentUntil: Duration?
    if let first = commits.first?.sequence {
      // The first batch starts at the window's oldest commit: what came before was never this page's.
      let last = lastSequence ?? (first - 1)
      var start = 0
      if last + 1 < first {
        // The page fell behind the window: it goes on from the newest commits, not from the oldest kept (which
        // would keep it as far behind as the window is long, showing commits about to leave it), and what it
        // skips counts as dropped.
        start = max(0, commits.count - maximumBatch)
        dropped += first - (last + 1) + start
        skippedUntil = commits[start].time
      }
      let end = min(commits.count, start + maximumBatch)
      items.reserveCapacity(end - start)
      for commit in commits[start..<end] {
        items.append(Self.item(commit))
      }
      lastSequence = commits[end - 1].sequence
      hasMore = end < commits.count
      sentUntil = commits[end - 1].time
    }
    // Side effects that started (new to the page) or ended (an update of one it has, unless it started since).
    effectsVersion = version
    for effect in effects {
      let isNew = effect.id > lastEffectID
      lastEffectID = max(lastEffectID, effect.id)
      if held[effect.id] != nil {
        held[effect.id] = effect
        continue
      }
      // One the page never had (it started among skipped commits): its end is no news either.
      if let skippedUntil, isNew, effect.start < skippedUntil { continue }
      if isNew, let sentUntil, effect.start > sentUntil {
        held[effect.id] = effect
        continue
      }
      items.append(Self.item(effect, update: !isNew))
    }
    if !held.isEmpty { items += release(sentUntil: sentUntil) }
    guard !items.isEmpty || dropped != lastReportedDropped else { return nil }
    lastReportedDropped = dropped
    return FeedBatch(items: items, dropped: dropped, lastSequence: lastSequence ?? 0)
  }

  /// The held side effects that started before the last commit sent now (all of them if no commit was read: the
  /// store made none since), oldest first; those that started among commits skipped since are dropped.
  private mutating func release(sentUntil: Duration?) -> [TimelineItem] {
    if let skippedUntil { held = held.filter { $0.value.start >= skippedUntil } }
    let waiting = held.values.sorted { ($0.start, $0.id) < ($1.start, $1.id) }
    let ready = waiting.prefix { effect in sentUntil.map { effect.start <= $0 } ?? true }.count
    for effect in waiting[..<ready] { held[effect.id] = nil }
    return waiting[..<ready].map { Self.item($0, update: false) }
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
