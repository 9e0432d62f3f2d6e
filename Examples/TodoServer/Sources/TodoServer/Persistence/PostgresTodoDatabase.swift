import Foundation
import Katana
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// For several server instances on one database: the to-dos in PostgreSQL, through postgres-nio.
///
/// - Schema: `todos` (one row per live to-do, `position` keeping creation order), `todo_changes` (every
///   committed change, by sequence number), `todo_sequence` (the number of the last change) and `audit_log`
///   (each instance's ``AuditLog``). Created at
///   start-up if missing, under an advisory lock so that instances starting together do not race.
/// - Each change: one transaction locks the to-do it is about (`SELECT … FOR UPDATE`), lets the side effect
///   decide against the row as the database has it, then, in one statement, takes the next sequence number
///   (`UPDATE todo_sequence … RETURNING`), writes the row and the `todo_changes` entry, and notifies the
///   channel `todo_changes`. The `todo_sequence` row stays locked until the commit, so numbers are given in
///   commit order with no gaps: when change `n + 1` is visible, change `n` is too.
/// - Applying: a committed change is not applied by the request that made it. Every instance's
///   ``ChangeFeed`` reads `todo_changes` in sequence order (woken by the notification) and applies each
///   change once; the request waits until its own instance has applied its change, then responds.
///
/// Run ``runClient()`` and the feed for as long as the database is in use;
/// ``TodoBackend/postgres(configuration:instrumentation:logger:options:)`` sets this up.
public final class PostgresTodoDatabase: TodoDatabase {
  /// How the database behaves; the defaults suit a server.
  public struct Options: Sendable {
    /// How long start-up may wait for the database before it fails (the pool retries connecting until then).
    public var startupTimeout: Duration = .seconds(15)
    /// How often the feed reads the change table even without a notification: a safety net, notifications
    /// are the normal wake-up.
    public var pollInterval: Duration = .seconds(1)
    /// How long a write may take to commit, waiting for a connection included. After it the request answers
    /// 503: ``TodoDatabaseError/unavailable(_:)`` if the transaction had not reached its commit (it then rolls
    /// back, whenever the database answers), ``TodoDatabaseError/outcomeUnknown(todoID:)`` if it had.
    public var writeTimeout: Duration = .seconds(5)
    /// How long a request then waits for its instance to apply its committed change before it fails with
    /// ``TodoDatabaseError/notApplied(_:)`` (the feed is cut off from the database). A write request therefore
    /// answers within `writeTimeout + applyTimeout`.
    public var applyTimeout: Duration = .seconds(5)
    /// The most changes the feed applies in one state update.
    public var batchSize: Int = 512
    /// The feed's first wait before reconnecting after its connection broke; it doubles up to
    /// ``maximumReconnectDelay``.
    public var reconnectDelay: Duration = .milliseconds(50)
    /// The longest wait between two reconnection attempts of the feed.
    public var maximumReconnectDelay: Duration = .seconds(2)
    /// How long the feed may go without completing a read of the change table (it reads at least every
    /// ``pollInterval``: that read is its heartbeat) before it gives its connection up and reconnects. This is
    /// how it notices a connection that broke silently: the server frozen or cut off, a query that never
    /// answers. It also bounds connecting and starting to listen.
    public var feedStallTimeout: Duration = .seconds(4)
    /// How long the health check waits for the database's last sequence number.
    public var healthTimeout: Duration = .seconds(1)

    /// The defaults.
    public init() {}
  }

  /// The connection pool: it works only while ``runClient()`` runs.
  public let client: PostgresClient
  /// What applies the database's changes to the store.
  public let feed: ChangeFeed
  let options: Options
  private let logger: Logger
  private let isClosed = NIOLockedValueBox(false)
  /// Reaches 1 when ``runClient()`` starts the pool: queries made before would wait with a warning.
  private let clientStarted = SequenceGate()

  /// A database reached through `client`; the change feed listens on a connection of its own, made with
  /// `feedConnection` (nil: one of the pool's, for a database whose feed does not run).
  public init(
    client: PostgresClient, feedConnection: PostgresConnection.Configuration? = nil, options: Options = Options(),
    logger: Logger
  ) {
    self.client = client
    self.options = options
    self.logger = logger
    self.feed = ChangeFeed(client: client, connection: feedConnection, options: options, logger: logger)
  }

  /// Runs the connection pool until the task is cancelled or graceful shutdown; the database works only
  /// meanwhile. (``TodoBackend`` runs it as a service.)
  public func runClient() async {
    clientStarted.advance(to: 1)
    await client.run()
  }

  // MARK: - Schema

  /// Creates the tables if they are missing. Instances that start together serialise on an advisory lock.
  func migrate() async throws {
    try await client.withTransaction(logger: logger) { connection in
      try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLockKey))", logger: logger)
      for statement in Self.schema {
        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
      }
    }
  }

  /// An arbitrary key for `pg_advisory_xact_lock`, so that instances migrate one at a time.
  private static let migrationLockKey: Int64 = 0x746f_646f_7365_7276

  private static let schema = [
    """
    CREATE TABLE IF NOT EXISTS todos (
      id UUID PRIMARY KEY,
      title TEXT NOT NULL,
      completed BOOLEAN NOT NULL,
      position BIGINT NOT NULL UNIQUE
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS todo_changes (
      sequence BIGINT PRIMARY KEY,
      kind TEXT NOT NULL CHECK (kind IN ('created', 'completed', 'deleted')),
      todo_id UUID NOT NULL,
      title TEXT,
      completed BOOLEAN,
      committed_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS todo_sequence (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      last_sequence BIGINT NOT NULL
    )
    """,
    "INSERT INTO todo_sequence (id, last_sequence) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
    """
    CREATE TABLE IF NOT EXISTS audit_log (
      session UUID NOT NULL,
      first_commit BIGINT NOT NULL,
      last_commit BIGINT NOT NULL,
      instance TEXT NOT NULL,
      log TEXT NOT NULL,
      written_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      PRIMARY KEY (session, first_commit)
    )
    """,
  ]

  // MARK: - TodoDatabase

  /// Creates the schema if needed, then reads every to-do and the sequence number from one snapshot
  /// (a repeatable-read transaction), so that the state is exactly the database after that change.
  ///
  /// - Throws: ``TodoDatabaseError/unreachable(_:)`` if the database does not answer within
  ///   ``Options/startupTimeout``; the database's error otherwise.
  public func loadState() async throws -> TodoState {
    try await withDeadline(
      options.startupTimeout, orThrow: TodoDatabaseError.unreachable("no answer within \(options.startupTimeout)")
    ) { [self] in
      try await clientStarted.wait(until: 1)
      try await migrate()
      return try await client.withTransaction(logger: logger) { connection in
        try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
        var sequence: Int64?
        for try await last in try await connection.query(
          "SELECT last_sequence FROM todo_sequence WHERE id = 1", logger: logger
        ).decode(Int64.self) {
          sequence = last
        }
        guard let sequence else { throw TodoDatabaseError.corrupt(reason: "the table todo_sequence has no row.") }
        var todos: [Todo] = []
        for try await (id, title, completed) in try await connection.query(
          "SELECT id, title, completed FROM todos ORDER BY position", logger: logger
        ).decode((UUID, String, Bool).self) {
          todos.append(Todo(id: id, title: title, completed: completed))
        }
        return TodoState(todos: todos, sequence: sequence)
      }
    }
  }

  /// The write path of ``TodoDatabase``, bounded in time whatever the database does: see
  /// ``Options/writeTimeout`` and ``Options/applyTimeout``.
  ///
  /// - Throws: What `decide` throws; ``TodoDatabaseError/closed`` after ``close()``;
  ///   ``TodoDatabaseError/unavailable(_:)`` (nothing saved), ``TodoDatabaseError/outcomeUnknown(todoID:)``
  ///   (maybe saved) or ``TodoDatabaseError/notApplied(_:)`` (saved) if the database fails or is too slow;
  ///   postgres-nio's error for a failure that is not about reaching the database.
  public func write<Result: Sendable>(
    todoID: UUID?,
    request: String?,
    decide: @escaping @Sendable (Todo?) throws -> (change: TodoChange?, result: Result),
    context: SideEffectContext<TodoState, TodoDependencies>
  ) async throws -> Result {
    guard !isClosed.withLockedValue({ $0 }) else { throw TodoDatabaseError.closed }
    let fate = WriteFate()
    let changedID = NIOLockedValueBox(todoID)
    let outcome: Swift.Result<(SequencedChange?, Result), any Error>
    do {
      outcome = try await withDeadline(options.writeTimeout, orThrow: WriteTimedOut()) { [client, logger] in
        try await Self.transaction(
          client: client, todoID: todoID, decide: decide, fate: fate, changedID: changedID, logger: logger)
      }
    } catch {
      throw Self.failure(
        error, fate: fate, todoID: changedID.withLockedValue { $0 }, timeout: options.writeTimeout, logger: logger)
    }
    let (committed, result) = try outcome.get()
    if let committed {
      // Committed: respond once this instance's store has it, so that the client reads its own write here.
      do {
        let feed = feed
        try await withDeadline(options.applyTimeout, orThrow: TodoDatabaseError.notApplied(committed.sequence)) {
          try await feed.waitUntilApplied(committed.sequence)
        }
      } catch is CancellationError {
        // The request is gone, and it must not report "nothing was changed": the change is committed, and the
        // feed applies it.
      } catch TodoDatabaseError.closed {
        // The feed stopped (shutdown) before applying it: committed all the same, so not "nothing was saved".
        throw TodoDatabaseError.notApplied(committed.sequence)
      }
    }
    return result
  }

  /// One write's transaction (see ``PostgresTodoDatabase``); commits only if `fate` lets it.
  private static func transaction<Result: Sendable>(
    client: PostgresClient, todoID: UUID?,
    decide: @escaping @Sendable (Todo?) throws -> (change: TodoChange?, result: Result),
    fate: WriteFate, changedID: NIOLockedValueBox<UUID?>, logger: Logger
  ) async throws -> Swift.Result<(SequencedChange?, Result), any Error> {
    // `decide`'s refusal is returned, not thrown, so that postgres-nio does not wrap it: the transaction then
    // commits having changed nothing, which releases the row lock like a rollback would.
    try await client.withTransaction(logger: logger) { connection in
      var current: Todo?
      if let todoID {
        for try await (title, completed) in try await connection.query(
          "SELECT title, completed FROM todos WHERE id = \(todoID) FOR UPDATE", logger: logger
        ).decode((String, Bool).self) {
          current = Todo(id: todoID, title: title, completed: completed)
        }
      }
      let decided: (change: TodoChange?, result: Result)
      do {
        decided = try decide(current)
      } catch {
        return .failure(error)
      }
      guard let change = decided.change else { return .success((nil, decided.result)) }
      changedID.withLockedValue { $0 = change.todoID }
      var sequence: Int64?
      for try await number in try await connection.query(Self.statement(storing: change), logger: logger)
        .decode(Int64.self)
      {
        sequence = number
      }
      guard let sequence else { throw TodoDatabaseError.corrupt(reason: "the table todo_sequence has no row.") }
      // The request may have given up already, and told its client that nothing was saved: then roll back.
      guard fate.beginCommit() else { throw WriteAbandoned() }
      return .success((SequencedChange(sequence: sequence, change: change), decided.result))
    }
  }

  /// What a write that failed in its transaction reports, from what the transaction reached.
  private static func failure(
    _ error: any Error, fate: WriteFate, todoID: UUID?, timeout: Duration, logger: Logger
  ) -> any Error {
    switch error {
    case is WriteTimedOut, is CancellationError:
      // The transaction goes on without us; from now on it rolls back instead of committing.
      if fate.abandon() == .committing {
        logger.warning("A write's commit got no answer within \(timeout); its outcome is unknown")
        return TodoDatabaseError.outcomeUnknown(todoID: todoID)
      }
      if error is CancellationError { return error }
      logger.warning("A write got no answer from the database within \(timeout); nothing was saved")
      return TodoDatabaseError.unavailable("no answer within \(timeout)")
    case let error as PostgresTransactionError:
      if let inner = error.closureError as? TodoDatabaseError { return inner }
      let cause = error.beginError ?? error.closureError ?? error.commitError ?? error
      guard isAboutReachingTheDatabase(cause) else { return error }
      if error.commitError != nil, fate.current == .committing {
        logger.warning("A write's commit failed (\(String(reflecting: cause))); its outcome is unknown")
        return TodoDatabaseError.outcomeUnknown(todoID: todoID)
      }
      logger.warning("A write failed before its commit (\(String(reflecting: cause))); nothing was saved")
      return TodoDatabaseError.unavailable(reason(cause))
    default:
      // Failing to lease a connection, or to connect: the transaction never began.
      guard isAboutReachingTheDatabase(error) else { return error }
      logger.warning("A write could not reach the database (\(String(reflecting: error))); nothing was saved")
      return TodoDatabaseError.unavailable(reason(error))
    }
  }

  /// Whether `error` says the database could not be reached, went away, or refused work for the time being
  /// (shutting down, starting up, out of connections, a conflict or timeout of its own), rather than that the
  /// request or this server is wrong.
  static func isAboutReachingTheDatabase(_ error: any Error) -> Bool {
    guard let error = error as? PSQLError else {
      // The pool's own errors (its circuit breaker), and the channel's I/O errors; not a decoding error.
      return !(error is PostgresDecodingError)
    }
    guard error.code == .server else { return true }
    // SQLSTATE classes: 08 connection exception, 53 insufficient resources, 57 operator intervention (shutdown,
    // statement timeout), 40 transaction rollback (serialization, deadlock), 55P03 lock not available.
    let state = error.serverInfo?[.sqlState] ?? ""
    return ["08", "53", "57", "40"].contains(String(state.prefix(2))) || state == "55P03"
  }

  /// A short reason for a message to clients, without the server's details.
  private static func reason(_ error: any Error) -> String {
    if let error = error as? PSQLError, error.code == .server {
      return "the database refused the work: \(error.serverInfo?[.message] ?? "no message")"
    }
    return "the connection to the database failed"
  }

  /// Whether this instance has applied every change the database has; asks the database for its last number
  /// within ``Options/healthTimeout``.
  public func health(applied: () -> Int64) async -> DatabaseHealth {
    let client = client
    let last: Int64?
    do {
      last = try await withDeadline(options.healthTimeout, orThrow: WriteTimedOut()) {
        var last: Int64?
        for try await value in try await client.query("SELECT last_sequence FROM todo_sequence WHERE id = 1")
          .decode(Int64.self)
        {
          last = value
        }
        return last
      }
    } catch {
      last = nil
    }
    // Read after the database answered: caught up means "had every change the database had then".
    let status = feed.currentStatus
    return DatabaseHealth(
      applied: applied(), database: last, feedConnected: status.isListening,
      secondsSinceCaughtUp: status.lastCaughtUp.map { Self.seconds($0.duration(to: .now)) },
      feedBackendProcessID: status.backendProcessID)
  }

  private static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }

  /// Inserts the entry (an entry already there is left as it is), within ``Options/writeTimeout``.
  ///
  /// - Throws: ``TodoDatabaseError/unavailable(_:)`` if the database does not answer in time; the database's
  ///   error otherwise.
  public func appendAuditLog(_ entry: AuditLogEntry) async throws {
    let client = client
    let logger = logger
    try await withDeadline(options.writeTimeout, orThrow: TodoDatabaseError.unavailable("no answer in time")) {
      _ = try await client.query(
        """
        INSERT INTO audit_log (session, first_commit, last_commit, instance, log)
        VALUES (\(entry.session), \(Int64(entry.firstCommit)), \(Int64(entry.lastCommit)), \(entry.instance), \(entry.log))
        ON CONFLICT (session, first_commit) DO NOTHING
        """,
        logger: logger)
    }
  }

  public func auditLog(session: UUID) async throws -> [AuditLogEntry] {
    var entries: [AuditLogEntry] = []
    for try await (first, last, instance, log) in try await client.query(
      """
      SELECT first_commit, last_commit, instance, log FROM audit_log WHERE session = \(session) ORDER BY first_commit
      """,
      logger: logger
    ).decode((Int64, Int64, String, String).self) {
      entries.append(
        AuditLogEntry(
          instance: instance, session: session, firstCommit: Int(first), lastCommit: Int(last), log: log))
    }
    return entries
  }

  /// Refuses later writes. (The feed and the pool stop with their services.)
  public func close() async {
    isClosed.withLockedValue { $0 = true }
  }

  // MARK: - Statements

  /// One statement that takes the next sequence number, applies `change` to `todos`, records it in
  /// `todo_changes`, and notifies the feeds (delivered at commit), returning the number.
  ///
  /// Data-modifying `WITH` clauses all run, whether or not the final `SELECT` reads them.
  static func statement(storing change: TodoChange) -> PostgresQuery {
    switch change {
    case .created(let todo):
      """
      WITH numbered AS (\(unescaped: nextSequence)),
        written AS (
          INSERT INTO todos (id, title, completed, position)
          SELECT \(todo.id), \(todo.title), \(todo.completed), last_sequence FROM numbered),
        recorded AS (
          INSERT INTO todo_changes (sequence, kind, todo_id, title, completed)
          SELECT last_sequence, 'created', \(todo.id), \(todo.title), \(todo.completed) FROM numbered
          RETURNING sequence)
      SELECT sequence FROM recorded, pg_notify('todo_changes', '')
      """
    case .completed(let id):
      """
      WITH numbered AS (\(unescaped: nextSequence)),
        written AS (UPDATE todos SET completed = TRUE WHERE id = \(id)),
        recorded AS (
          INSERT INTO todo_changes (sequence, kind, todo_id) SELECT last_sequence, 'completed', \(id) FROM numbered
          RETURNING sequence)
      SELECT sequence FROM recorded, pg_notify('todo_changes', '')
      """
    case .deleted(let id):
      """
      WITH numbered AS (\(unescaped: nextSequence)),
        written AS (DELETE FROM todos WHERE id = \(id)),
        recorded AS (
          INSERT INTO todo_changes (sequence, kind, todo_id) SELECT last_sequence, 'deleted', \(id) FROM numbered
          RETURNING sequence)
      SELECT sequence FROM recorded, pg_notify('todo_changes', '')
      """
    }
  }

  /// Takes the next number and locks the `todo_sequence` row until the transaction ends: the next writer
  /// waits here, so numbers follow commit order.
  private static let nextSequence =
    "UPDATE todo_sequence SET last_sequence = last_sequence + 1 WHERE id = 1 RETURNING last_sequence"

  /// The changes after `sequence`, at most `limit`, in order.
  static func changes(after sequence: Int64, limit: Int) -> PostgresQuery {
    """
    SELECT sequence, kind, todo_id, title, completed FROM todo_changes
    WHERE sequence > \(sequence) ORDER BY sequence LIMIT \(limit)
    """
  }

  /// A `todo_changes` row as a change.
  static func change(
    sequence: Int64, kind: String, todoID: UUID, title: String?, completed: Bool?
  ) throws -> SequencedChange {
    let change: TodoChange
    switch (kind, title, completed) {
    case ("created", let title?, let completed?):
      change = .created(todo: Todo(id: todoID, title: title, completed: completed))
    case ("completed", _, _):
      change = .completed(id: todoID)
    case ("deleted", _, _):
      change = .deleted(id: todoID)
    default:
      throw TodoDatabaseError.corrupt(reason: "the change \(sequence) ('\(kind)') lacks its to-do's fields.")
    }
    return SequencedChange(sequence: sequence, change: change)
  }
}

/// A write's transaction did not finish within ``PostgresTodoDatabase/Options/writeTimeout``.
struct WriteTimedOut: Error {}

/// The request gave up on its write before the commit: the transaction rolls back.
struct WriteAbandoned: Error {}
