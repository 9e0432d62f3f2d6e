import Foundation
import Katana
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// Applies the database's changes to one instance's store, in sequence order, each exactly once: the other
/// instances' changes and this instance's own.
///
/// ``run(store:)`` holds one connection of the pool, on which it listens to the channel `todo_changes`, and
/// reads `todo_changes` after the last sequence number the store has applied:
/// - when it connects (catching up after a start, a restart or a reconnect),
/// - on each notification (every committed change notifies; several notifications may share one read),
/// - every ``PostgresTodoDatabase/Options/pollInterval``, in case a notification was missed.
///
/// Each read is applied with one ``CommitChanges`` dispatch; ``TodoState/apply(_:)`` skips changes the state
/// already has, and numbers have no gaps (see ``PostgresTodoDatabase``), so reading "after the state's
/// number" never skips or repeats one. If the connection breaks, the feed reconnects with a growing delay
/// and catches up; requests waiting for their change wait meanwhile. A connection that breaks without saying
/// so (the server frozen or cut off, a query that never answers) is noticed by the read of every
/// ``PostgresTodoDatabase/Options/pollInterval``, the feed's heartbeat: when no read has completed for
/// ``PostgresTodoDatabase/Options/feedStallTimeout``, the feed gives the connection up and reconnects.
public final class ChangeFeed: Sendable {
  private let client: PostgresClient
  private let options: PostgresTodoDatabase.Options
  private let logger: Logger
  private let progress = SequenceGate()
  private let status = NIOLockedValueBox(Status())

  /// What the feed is doing, for tests and diagnostics.
  public struct Status: Sendable {
    /// How many times the feed has connected and started listening.
    public var connections = 0
    /// The server process id (`pg_backend_pid()`) of the connection the feed listens on, while connected.
    public var backendProcessID: Int32?
    /// Whether the feed is listening now.
    public var isListening = false
    /// When the feed last finished reading every change the database had.
    public var lastCaughtUp: ContinuousClock.Instant?
  }

  /// The feed's own connection, if set; otherwise the feed takes one from the pool.
  private let connectionConfiguration: PostgresConnection.Configuration?

  init(
    client: PostgresClient, connection: PostgresConnection.Configuration?, options: PostgresTodoDatabase.Options,
    logger: Logger
  ) {
    self.client = client
    self.connectionConfiguration = connection
    self.options = options
    self.logger = logger
  }

  /// What the feed is doing now.
  public var currentStatus: Status {
    status.withLockedValue { $0 }
  }

  /// Returns once the store has applied the change numbered `sequence`.
  ///
  /// - Throws: `CancellationError` if the waiting task is cancelled; ``TodoDatabaseError/closed`` once the
  ///   feed has stopped (the change is committed in the database all the same).
  public func waitUntilApplied(_ sequence: Int64) async throws {
    try await progress.wait(until: sequence)
  }

  /// Applies the database's changes to `store` until the task is cancelled (or the store shuts down), then
  /// fails the requests still waiting with ``TodoDatabaseError/closed``.
  ///
  /// Call it once the store is ready: it starts from the state's sequence number.
  public func run(store: TodoStore) async {
    progress.advance(to: store.state.sequence)
    defer { progress.stop() }
    var delay = options.reconnectDelay
    while !Task.isCancelled {
      let connectionsBefore = currentStatus.connections
      do {
        try await session(store: store)
      } catch {
        status.withLockedValue {
          $0.backendProcessID = nil
          $0.isListening = false
        }
        if Task.isCancelled { return }
        if let error = error as? StoreError {
          logger.info("Change feed stopped: \(error)")
          return
        }
        // A connection that worked for a while starts the delays over.
        if currentStatus.connections > connectionsBefore { delay = options.reconnectDelay }
        logger.warning(
          "Change feed interrupted (\(String(reflecting: error))); reconnecting in \(delay)")
        try? await Task.sleep(for: delay)
        delay = min(delay * 2, options.maximumReconnectDelay)
      }
    }
  }

  /// Connects, listens and applies changes until the connection fails or stalls; returns only by throwing.
  ///
  /// The session runs beside a watchdog that ends it when no read of the change table has completed for
  /// ``PostgresTodoDatabase/Options/feedStallTimeout`` (connecting and `LISTEN` count as the first read). The
  /// watchdog does not wait for the session to end (a query on a dead connection may never answer): it closes
  /// the connection, which ends whatever can be ended, and the feed starts a new session on a new connection.
  private func session(store: TodoStore) async throws {
    let heartbeat = NIOLockedValueBox(ContinuousClock.now)
    let connection = NIOLockedValueBox<PostgresConnection?>(nil)
    do {
      try await race { [self] in
        try await withConnection { established in
          connection.withLockedValue { $0 = established }
          try await listen(on: established, store: store, heartbeat: heartbeat)
        }
      } against: { [options] in
        while true {
          try await Task.sleep(for: options.pollInterval / 4)
          if heartbeat.withLockedValue({ $0 }).duration(to: .now) > options.feedStallTimeout {
            throw FeedStalled(timeout: options.feedStallTimeout)
          }
        }
      }
    } catch {
      if let stuck = connection.withLockedValue({ $0 }) {
        // Not awaited: closing a connection to a frozen server can wait as long as the server.
        Task { try? await stuck.close() }
      }
      throw error
    }
  }

  /// Runs `body` with a connection of the feed's own (closed afterwards, so that every reconnection is a new
  /// connection), or with one of the pool's if no configuration was given.
  ///
  /// A connection of its own, because the pool has been seen to hand out again, right after the server
  /// dropped it, the very connection the feed had lost, on which the next query never answered.
  private func withConnection(_ body: (PostgresConnection) async throws -> Void) async throws {
    guard let connectionConfiguration else {
      try await client.withConnection(body)
      return
    }
    let id = status.withLockedValue { $0.connections }
    let connection = try await PostgresConnection.connect(
      configuration: connectionConfiguration, id: id, logger: logger)
    do {
      try await body(connection)
    } catch {
      try? await connection.close()
      throw error
    }
    try? await connection.close()
  }

  /// Listens on `connection`, catches up, then applies changes at each wake-up; returns only by throwing.
  private func listen(
    on connection: PostgresConnection, store: TodoStore, heartbeat: NIOLockedValueBox<ContinuousClock.Instant>
  ) async throws {
    var processID: Int32?
    for try await pid in try await connection.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self) {
      processID = pid
    }
    try await connection.listen(on: "todo_changes") { [processID] notifications in
      status.withLockedValue {
        $0.connections += 1
        $0.backendProcessID = processID
        $0.isListening = true
      }
      logger.debug("Change feed listening", metadata: ["backend": "\(processID.map(String.init) ?? "?")"])
      try await applyChanges(on: connection, store: store, notifications: notifications, heartbeat: heartbeat)
    }
  }

  /// Catches up, then applies changes at each notification and poll; returns only by throwing.
  private func applyChanges(
    on connection: PostgresConnection, store: TodoStore, notifications: PostgresNotificationSequence,
    heartbeat: NIOLockedValueBox<ContinuousClock.Instant>
  ) async throws {
    let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        for try await _ in notifications { wake.yield() }
        throw NotificationsEnded()
      }
      group.addTask { [options] in
        while true {
          try await Task.sleep(for: options.pollInterval)
          wake.yield()
        }
      }
      group.addTask { [self] in
        // Listening has started, so every commit from now on notifies: catch up on the ones before.
        try await catchUp(on: connection, store: store, heartbeat: heartbeat)
        for await _ in wakeups {
          try await catchUp(on: connection, store: store, heartbeat: heartbeat)
        }
        try Task.checkCancellation()
      }
      defer { group.cancelAll() }
      try await group.next()
    }
  }

  /// Applies every change after the state's sequence number, in batches.
  private func catchUp(
    on connection: PostgresConnection, store: TodoStore, heartbeat: NIOLockedValueBox<ContinuousClock.Instant>
  ) async throws {
    while true {
      let applied = store.state.sequence
      var changes: [SequencedChange] = []
      for try await (sequence, kind, todoID, title, completed) in try await connection.query(
        PostgresTodoDatabase.changes(after: applied, limit: options.batchSize), logger: logger
      ).decode((Int64, String, UUID, String?, Bool?).self) {
        changes.append(
          try PostgresTodoDatabase.change(
            sequence: sequence, kind: kind, todoID: todoID, title: title, completed: completed))
      }
      guard let last = changes.last else {
        // Every change the database had when it answered is applied: the heartbeat.
        let now = ContinuousClock.now
        heartbeat.withLockedValue { $0 = now }
        status.withLockedValue { $0.lastCaughtUp = now }
        return
      }
      try await store.dispatch(CommitChanges(changes))
      let reached = store.state.sequence
      progress.advance(to: reached)
      // A batch applied is progress too: a long catch-up is not a stall.
      heartbeat.withLockedValue { $0 = .now }
      guard reached == last.sequence else {
        // Numbers have no gaps, so this means a row of `todo_changes` was removed: stop rather than skip it.
        throw TodoDatabaseError.missingChange(expected: reached + 1)
      }
      if changes.count < options.batchSize {
        let now = ContinuousClock.now
        heartbeat.withLockedValue { $0 = now }
        status.withLockedValue { $0.lastCaughtUp = now }
        return
      }
    }
  }
}

/// No read of the change table completed in time: the connection is given up.
private struct FeedStalled: Error, CustomStringConvertible {
  let timeout: Duration
  var description: String { "no read of the change table completed within \(timeout)" }
}

/// The notification sequence finished: the connection is no longer listening.
private struct NotificationsEnded: Error, CustomStringConvertible {
  var description: String { "the connection stopped delivering notifications" }
}

/// A number that only grows, and tasks waiting for it to reach a value: how far a store has applied the
/// database's changes, and the requests waiting for theirs.
final class SequenceGate: Sendable {
  private struct State {
    var applied: Int64 = 0
    var isStopped = false
    var nextID = 0
    var waiters: [Int: Waiter] = [:]
  }

  private enum Waiter {
    /// Between `wait` taking an id and registering its continuation.
    case pending
    case waiting(sequence: Int64, CheckedContinuation<Void, any Error>)
    /// Cancelled while pending.
    case cancelled
  }

  private let state = NIOLockedValueBox(State())

  /// Returns once `advance(to:)` has reached `sequence`.
  ///
  /// - Throws: `CancellationError` if the task is cancelled; ``TodoDatabaseError/closed`` after `stop()`.
  func wait(until sequence: Int64) async throws {
    let id: Int? = try state.withLockedValue { state in
      if state.applied >= sequence { return nil }
      if state.isStopped { throw TodoDatabaseError.closed }
      defer { state.nextID += 1 }
      state.waiters[state.nextID] = .pending
      return state.nextID
    }
    guard let id else { return }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let outcome: Swift.Result<Void, any Error>? = state.withLockedValue { state in
          if case .cancelled = state.waiters.removeValue(forKey: id) { return .failure(CancellationError()) }
          if state.applied >= sequence { return .success(()) }
          if state.isStopped { return .failure(TodoDatabaseError.closed) }
          state.waiters[id] = .waiting(sequence: sequence, continuation)
          return nil
        }
        if let outcome { continuation.resume(with: outcome) }
      }
    } onCancel: {
      let continuation: CheckedContinuation<Void, any Error>? = state.withLockedValue { state in
        switch state.waiters[id] {
        case .waiting(_, let continuation):
          state.waiters[id] = nil
          return continuation
        case .pending:
          state.waiters[id] = .cancelled
          return nil
        case .cancelled, nil:
          // Already cancelled, or already resumed.
          return nil
        }
      }
      continuation?.resume(throwing: CancellationError())
    }
  }

  /// Records that the store has applied every change up to `sequence`, and releases the requests waiting for
  /// one of them.
  func advance(to sequence: Int64) {
    let released: [CheckedContinuation<Void, any Error>] = state.withLockedValue { state in
      state.applied = max(state.applied, sequence)
      var released: [CheckedContinuation<Void, any Error>] = []
      for (id, waiter) in state.waiters {
        if case .waiting(let waited, let continuation) = waiter, waited <= state.applied {
          released.append(continuation)
          state.waiters[id] = nil
        }
      }
      return released
    }
    for continuation in released { continuation.resume() }
  }

  /// Fails the requests still waiting, and later ones, with ``TodoDatabaseError/closed``.
  func stop() {
    let released: [CheckedContinuation<Void, any Error>] = state.withLockedValue { state in
      state.isStopped = true
      var released: [CheckedContinuation<Void, any Error>] = []
      for (id, waiter) in state.waiters {
        if case .waiting(_, let continuation) = waiter {
          released.append(continuation)
          state.waiters[id] = nil
        }
      }
      return released
    }
    for continuation in released { continuation.resume(throwing: TodoDatabaseError.closed) }
  }
}
