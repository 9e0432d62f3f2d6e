import Foundation
import Katana
import KatanaRecordingLog
import Logging
import OrderedCollections
import ServiceLifecycle

/// An audit trail of everything one server instance's store did, kept in the database: every commit, in the
/// order the store made it, with the change it applied; from it, ``rebuild(_:)`` computes the state after any
/// commit, without running anything again.
///
/// A `StoreRecorder` attached to the store (``attach(to:)``) records each commit; every ``Options/flushInterval``
/// the log drains it (between two commits, so that no commit is missed or written twice) and appends what it
/// got to the database as one ``AuditLogEntry``: a `RecordingLog` of those commits. The first entry of a session
/// carries the state the store started from; each next one points at the state the previous one ends with, so
/// that entries stay small. Checkpoints are written as digests of the state (``digest(of:)``), which
/// ``rebuild(_:)`` checks.
///
/// When the database refuses an entry (it is down, or closed), the entry is kept and written again at the next
/// flush, in order; nothing is lost while at most ``Options/maximumPendingCommits`` commits wait. Past that, the
/// oldest waiting entries are dropped (counted in ``lostCommits`` and logged as an error), and the next entry
/// written carries its own initial state: ``rebuild(_:)`` still reaches the store's state, and says which
/// commits are missing.
///
/// Recording costs each commit a few tens of nanoseconds on the store's path (an awaited dispatch with the recorder
/// attached about 2.2 times one without, in Katana's Performance article); a drain moves the recording out of the
/// recorder without copying it, and the encoding and the writing happen in the log's own task, outside the store.
public actor AuditLog {
  /// How the log behaves.
  public struct Options: Sendable {
    /// The name of this server instance, kept with each entry (the session id tells restarts apart).
    public var instance: String
    /// How often the log drains the store's commits and writes them.
    public var flushInterval: Duration = .milliseconds(500)
    /// The most commits kept in memory while the database refuses entries (and the most the recorder keeps
    /// between two flushes).
    public var maximumPendingCommits = 100_000
    /// A digest of the state is written every this many commits.
    public var checkpointInterval = 1_000

    /// The defaults, for the instance named `instance`.
    public init(instance: String) {
      self.instance = instance
    }
  }

  /// This run of the store: the key of its entries, with their first commit.
  public nonisolated let session = UUID()
  /// How the log behaves.
  public nonisolated let options: Options
  private nonisolated let recorder: StoreRecorder<TodoState>
  private let sink: any AuditLogSink
  private let logger: Logger

  /// Drained commits not written yet, in commit order.
  private var pending: [Recording<TodoState>] = []
  /// The last commit drained, and the last one written.
  private var lastDrained = 0
  private var lastWritten: Int?
  /// Whether the last write failed (logged once, until a write succeeds).
  private var failing = false
  /// Flushes run one at a time, in the order they were asked for: each waits for the previous one.
  private var lastFlush: Task<Void, Never>?

  /// Commits dropped before they were written (see ``AuditLog``).
  public private(set) var lostCommits = 0
  /// Commits written to the database.
  public private(set) var writtenCommits = 0

  /// A log that writes to `sink` (the server's database).
  public init(options: Options, sink: any AuditLogSink, logger: Logger) {
    self.options = options
    self.sink = sink
    self.logger = logger
    recorder = StoreRecorder(
      capacity: max(1, options.maximumPendingCommits), checkpointInterval: max(1, options.checkpointInterval))
  }

  /// Makes `store` write its commits to this log's recorder (``StoreRecorder/attach(to:)``): call it once, right
  /// after making the store.
  ///
  /// - Throws: `RecorderError.anotherStore` if this log already records another store.
  public nonisolated func attach(to store: TodoStore) throws {
    try recorder.attach(to: store)
  }

  /// The older way to record the store's commits: an interceptor, the last of the store's interceptors. Prefer
  /// ``attach(to:)``, which keeps the store's fast paths.
  public nonisolated var interceptor: StoreInterceptor { recorder.interceptor }

  /// Drains the commits `store` made since the last flush and writes every entry not written yet, in order.
  /// Flushes run one at a time.
  ///
  /// - Throws: What the database throws (the entries stay pending); `StoreError` if the store has shut down or
  ///   failed to start; `CancellationError` if the calling task is cancelled first.
  public func flush(_ store: TodoStore) async throws {
    let previous = lastFlush
    let flush = Task { [self] in
      await previous?.value
      try await drainAndWrite(store)
    }
    lastFlush = Task { _ = await flush.result }
    try await withTaskCancellationHandler {
      try await flush.value
    } onCancel: {
      flush.cancel()
    }
  }

  private func drainAndWrite(_ store: TodoStore) async throws {
    let recording = try await recorder.drain(store)
    if let first = recording.commits.first, let last = recording.commits.last {
      // The recorder drops its oldest commits when more than its capacity come between two flushes.
      lostCommits += first.sequence - (lastDrained + 1)
      lastDrained = last.sequence
      pending.append(recording)
      dropPendingBeyondBound()
    }
    try await writePending()
  }

  /// Drops the oldest pending entries while more than the bound wait (the newest is always kept).
  private func dropPendingBeyondBound() {
    var count = pending.reduce(0) { $0 + $1.commits.count }
    while count > options.maximumPendingCommits, pending.count > 1 {
      let dropped = pending.removeFirst()
      count -= dropped.commits.count
      lostCommits += dropped.commits.count
      logger.error(
        "Audit log: dropped commits \(dropped.commits.first!.sequence)-\(dropped.commits.last!.sequence), which the database did not take in time"
      )
    }
  }

  private func writePending() async throws {
    while let recording = pending.first, let first = recording.commits.first, let last = recording.commits.last {
      let entry: AuditLogEntry
      do {
        // Continuing entries point at the previous entry's last state; after a loss, the entry carries its own.
        let log = try RecordingLog.encode(
          recording, registry: Self.registry, continuing: lastWritten == first.sequence - 1, digest: Self.digest(of:))
        entry = AuditLogEntry(
          instance: options.instance, session: session, firstCommit: first.sequence, lastCommit: last.sequence,
          log: log)
      } catch {
        // Not expected (every part of the state and the updater encodes); the entry cannot be written ever.
        pending.removeFirst()
        lostCommits += recording.commits.count
        logger.error("Audit log: commits \(first.sequence)-\(last.sequence) could not be encoded: \(error)")
        continue
      }
      do {
        try await sink.appendAuditLog(entry)
      } catch {
        if !failing {
          logger.warning("Audit log: the database did not take an entry; it is kept and written later: \(error)")
        }
        failing = true
        throw error
      }
      if failing { logger.info("Audit log: writing again") }
      failing = false
      pending.removeFirst()
      lastWritten = last.sequence
      writtenCommits += recording.commits.count
    }
  }

  // MARK: - Reading

  /// The updaters an audit log holds, by the names it writes them with.
  static let registry: ReplayRegistry<TodoState> = {
    var registry = ReplayRegistry<TodoState>()
    registry.register(CommitChanges.self, as: "todos.commit")
    return registry
  }()

  /// The digest of `state` written at the log's checkpoints: the state's sequence number and to-do count, and a
  /// 64-bit FNV-1a hash of its JSON encoding (the same on every machine and run).
  public static func digest(of state: TodoState) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in (try? encoder.encode(state)) ?? Data() {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return "\(state.sequence)/\(state.todos.count)/" + String(hash, radix: 16)
  }

  /// What ``rebuild(_:)`` computes from a session's entries.
  public struct Rebuilt: Sendable {
    /// The state after the last commit of the entries.
    public let state: TodoState
    /// The state after each commit, in order, with the commit's number.
    public let states: [(commit: Int, state: TodoState)]
    /// Commits the log does not have (dropped while the database was refusing entries), in order.
    public let missing: [ClosedRange<Int>]
  }

  /// Replays a session's entries (``AuditLogSink/auditLog(session:)``) and returns the state after every
  /// commit, checking each digest on the way.
  ///
  /// - Throws: ``AuditLogError`` for an entry that cannot be read or replayed, or that continues an entry the log
  ///   does not have.
  public static func rebuild(_ entries: [AuditLogEntry]) throws(AuditLogError) -> Rebuilt {
    var state: TodoState?
    var states: [(commit: Int, state: TodoState)] = []
    var missing: [ClosedRange<Int>] = []
    var lastCommit: Int?
    for entry in entries.sorted(by: { $0.firstCommit < $1.firstCommit }) {
      let continues = lastCommit.map { $0 == entry.firstCommit - 1 } ?? false
      if let lastCommit, !continues {
        guard entry.firstCommit > lastCommit else { throw .overlapping(firstCommit: entry.firstCommit) }
        missing.append((lastCommit + 1)...(entry.firstCommit - 1))
      }
      let recording: Recording<TodoState>
      do {
        recording = try RecordingLog.decode(
          entry.log, registry: registry, initialState: continues ? state : nil, digest: digest(of:))
      } catch {
        if case .missingInitialState(let after) = error { throw .continuesMissingEntry(after: after) }
        throw .unreadable(firstCommit: entry.firstCommit, error)
      }
      do {
        let replayed = try recording.replayedStates()
        states += zip(recording.commits.map(\.sequence), replayed).map { ($0, $1) }
        state = replayed.last ?? recording.initialState
      } catch {
        throw .replayFailed(error)
      }
      lastCommit = entry.lastCommit
    }
    return Rebuilt(state: state ?? TodoState(), states: states, missing: missing)
  }
}

/// Why an audit log could not be rebuilt.
public enum AuditLogError: Error, CustomStringConvertible {
  /// The entry starting at `firstCommit` is not a log this server can read.
  case unreadable(firstCommit: Int, RecordingLogError)
  /// An entry continues from commit `after`, and no entry ends there.
  case continuesMissingEntry(after: Int)
  /// Two entries hold the same commits.
  case overlapping(firstCommit: Int)
  /// Replaying the entries failed, or a state differs from its digest.
  case replayFailed(ReplayError)

  /// What is wrong.
  public var description: String {
    switch self {
    case .unreadable(let first, let error): "The audit log entry from commit \(first) cannot be read: \(error)"
    case .continuesMissingEntry(let after):
      "An audit log entry continues from commit \(after), and no entry ends there."
    case .overlapping(let first): "The audit log has two entries holding commit \(first)."
    case .replayFailed(let error): "The audit log does not replay: \(error)"
    }
  }
}

/// One piece of an audit log: commits `firstCommit...lastCommit` of one session of a store, as a `RecordingLog`.
public struct AuditLogEntry: Sendable, Equatable {
  /// The server instance's name (``AuditLog/Options/instance``).
  public let instance: String
  /// The run of the store it belongs to (``AuditLog/session``).
  public let session: UUID
  /// The first and last commits it holds.
  public let firstCommit: Int
  public let lastCommit: Int
  /// The commits, as a `RecordingLog` (JSON Lines).
  public let log: String

  /// Creates an entry.
  public init(instance: String, session: UUID, firstCommit: Int, lastCommit: Int, log: String) {
    self.instance = instance
    self.session = session
    self.firstCommit = firstCommit
    self.lastCommit = lastCommit
    self.log = log
  }
}

/// Where an ``AuditLog`` keeps its entries: the server's database.
public protocol AuditLogSink: Sendable {
  /// Stores `entry`. Storing an entry again (same session and first commit) does nothing, so a write whose
  /// outcome was unknown can be repeated.
  func appendAuditLog(_ entry: AuditLogEntry) async throws
  /// The entries of `session`, in commit order.
  func auditLog(session: UUID) async throws -> [AuditLogEntry]
}

/// Flushes an audit log every ``AuditLog/Options/flushInterval`` once the store is ready, and one last time at
/// graceful shutdown (after the HTTP server stopped, before the database closes).
struct AuditLogService: Service, CustomStringConvertible {
  let auditLog: AuditLog
  let store: TodoStore
  let logger: Logger

  var description: String { "AuditLog" }

  func run() async {
    let interval = auditLog.options.flushInterval
    do {
      try await store.waitUntilReady()
    } catch {
      // The store failed to start (the application reports it), or the group was cancelled: nothing to log.
      return
    }
    await cancelWhenGracefulShutdown {
      while true {
        do {
          try await Task.sleep(for: interval)
        } catch {
          return
        }
        // A failure is logged by the log, which keeps the entries for the next flush.
        try? await auditLog.flush(store)
      }
    }
    do {
      try await auditLog.flush(store)
    } catch {
      logger.error("Audit log: the last flush failed: \(error)")
    }
  }
}
