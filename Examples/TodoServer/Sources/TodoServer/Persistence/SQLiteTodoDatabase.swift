import Foundation
import GRDB
import Katana
import NIOConcurrencyHelpers
import Tracing

/// The embedded default: the to-dos in one SQLite file, through GRDB, owned by one server process.
///
/// - Schema: `todos` (one row per live to-do, `position` keeping creation order), `todo_sequence` (the
///   number of the last change) and `audit_log` (the store's ``AuditLog``). Migrations run when the database
///   opens.
/// - Each change: one transaction reads the to-do it is about, lets the side effect decide, writes the row,
///   and increments the sequence number. GRDB's writer runs one transaction at a time; right after the commit,
///   still on the writer, the change is handed to the store with `send`, which fixes its place in the store's
///   mailbox. The store therefore applies changes in commit order, and the side effect returns once it has.
/// - Durability: WAL journal with `synchronous = NORMAL`. A committed change survives a crash of the server
///   (SIGKILL included: the tests check it) but a power cut may lose the last transactions; set
///   `synchronous = FULL` in ``init(path:)`` if that matters more than write speed.
public final class SQLiteTodoDatabase: TodoDatabase {
  private let writer: any DatabaseWriter
  /// Set on the writer (so after the write in progress), read by every write.
  private let isClosed = NIOLockedValueBox(false)

  /// Opens (or creates) the database at `path`, and migrates it to this version's schema.
  ///
  /// - Throws: GRDB's `DatabaseError` if the file cannot be opened or is not an SQLite database.
  public init(path: String) throws {
    var configuration = Configuration()
    configuration.label = "todos"
    configuration.prepareDatabase { db in
      try db.execute(sql: "PRAGMA synchronous = NORMAL")
    }
    let pool = try DatabasePool(path: path, configuration: configuration)
    try Self.migrator.migrate(pool)
    self.writer = pool
  }

  private init(writer: any DatabaseWriter) throws {
    try Self.migrator.migrate(writer)
    self.writer = writer
  }

  /// A database in memory: nothing survives the process. For stores that need no persistence (unit tests of
  /// the side effects, previews).
  ///
  /// - Throws: GRDB's `DatabaseError` if SQLite cannot allocate it.
  public static func inMemory() throws -> SQLiteTodoDatabase {
    try SQLiteTodoDatabase(writer: DatabaseQueue())
  }

  // MARK: - Schema

  private static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1") { db in
      try db.execute(
        sql: """
          CREATE TABLE todos (
            id TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL,
            completed BOOLEAN NOT NULL,
            position INTEGER NOT NULL UNIQUE
          );
          CREATE TABLE todo_sequence (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last_sequence INTEGER NOT NULL
          );
          INSERT INTO todo_sequence (id, last_sequence) VALUES (1, 0);
          """)
    }
    migrator.registerMigration("v2: audit log") { db in
      try db.execute(
        sql: """
          CREATE TABLE audit_log (
            session TEXT NOT NULL,
            first_commit INTEGER NOT NULL,
            last_commit INTEGER NOT NULL,
            instance TEXT NOT NULL,
            log TEXT NOT NULL,
            written_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
            PRIMARY KEY (session, first_commit)
          );
          """)
    }
    return migrator
  }

  // MARK: - TodoDatabase

  /// Reads every to-do and the sequence number in one read transaction (a consistent snapshot).
  public func loadState() async throws -> TodoState {
    try await writer.read { db in
      let sequence = try Self.lastSequence(db)
      let rows = try Row.fetchAll(db, sql: "SELECT id, title, completed FROM todos ORDER BY position")
      return TodoState(todos: try rows.map(Self.todo(from:)), sequence: sequence)
    }
  }

  public func write<Result: Sendable>(
    todoID: UUID?,
    request: String?,
    decide: @escaping @Sendable (Todo?) throws -> (change: TodoChange?, result: Result),
    context: SideEffectContext<TodoState, TodoDependencies>
  ) async throws -> Result {
    guard !isClosed.withLockedValue({ $0 }) else { throw TodoDatabaseError.closed }
    // The request's trace, for the updater's span (the updater runs outside the request's task).
    let traceContext = ServiceContext.current
    let isClosed = isClosed
    let (handle, result): (DispatchHandle<Void>?, Result)
    do {
      (handle, result) = try await writer.writeWithoutTransaction { db in
        guard !isClosed.withLockedValue({ $0 }) else { throw TodoDatabaseError.closed }
        var decided: (change: SequencedChange?, result: Result)?
        try db.inTransaction {
          let current = try todoID.flatMap { try Self.fetchTodo(db, id: $0) }
          let (change, result) = try decide(current)
          decided = (try change.map { try Self.store($0, in: db) }, result)
          return .commit
        }
        guard let decided else { preconditionFailure("inTransaction returned without running its body") }
        // Committed. Still on the writer, so before the next transaction starts: hand the change to the store,
        // which fixes its place in the mailbox. (`send`, not `dispatch`: the store applies it even if the
        // request is cancelled now.)
        let handle = decided.change.map {
          context.send(CommitChanges([$0], traceContext: traceContext, request: request))
        }
        return (handle, decided.result)
      }
    } catch is DatabaseError where isClosed.withLockedValue({ $0 }) {
      // Closed while this write waited for the writer: GRDB refuses a closed database with its own error.
      throw TodoDatabaseError.closed
    }
    // Only a store shut down in between (a forced shutdown; a graceful one closes the database first) fails
    // this; the change is then in the database and in the state of the next start.
    try await handle?.value
    return result
  }

  /// The store is the database on SQLite (one writer hands every commit to it): this reads the last number,
  /// for the same report as PostgreSQL's.
  public func health(applied: () -> Int64) async -> DatabaseHealth {
    let database = try? await writer.read { db in
      try Int64.fetchOne(db, sql: "SELECT last_sequence FROM todo_sequence")
    }
    return DatabaseHealth(
      applied: applied(), database: database ?? nil, feedConnected: true, secondsSinceCaughtUp: nil)
  }

  /// Inserts the entry (an entry already there is left as it is). The writer runs it between two changes.
  public func appendAuditLog(_ entry: AuditLogEntry) async throws {
    try await writer.write { db in
      try db.execute(
        sql: """
          INSERT OR IGNORE INTO audit_log (session, first_commit, last_commit, instance, log)
          VALUES (?, ?, ?, ?, ?)
          """,
        arguments: [entry.session.uuidString, entry.firstCommit, entry.lastCommit, entry.instance, entry.log])
    }
  }

  public func auditLog(session: UUID) async throws -> [AuditLogEntry] {
    try await writer.read { db in
      try Row.fetchAll(
        db,
        sql: """
          SELECT first_commit, last_commit, instance, log FROM audit_log WHERE session = ? ORDER BY first_commit
          """,
        arguments: [session.uuidString]
      ).map { row in
        AuditLogEntry(
          instance: row["instance"], session: session, firstCommit: row["first_commit"],
          lastCommit: row["last_commit"], log: row["log"])
      }
    }
  }

  public func close() async {
    let isClosed = isClosed
    _ = try? await writer.writeWithoutTransaction { _ in isClosed.withLockedValue { $0 = true } }
    try? writer.close()
  }

  // MARK: - Rows

  private static func lastSequence(_ db: Database) throws -> Int64 {
    guard let sequence = try Int64.fetchOne(db, sql: "SELECT last_sequence FROM todo_sequence WHERE id = 1") else {
      throw TodoDatabaseError.corrupt(reason: "the table todo_sequence has no row.")
    }
    return sequence
  }

  private static func fetchTodo(_ db: Database, id: UUID) throws -> Todo? {
    try Row.fetchOne(db, sql: "SELECT id, title, completed FROM todos WHERE id = ?", arguments: [id.uuidString])
      .map(todo(from:))
  }

  private static func todo(from row: Row) throws -> Todo {
    let text: String = row["id"]
    guard let id = UUID(uuidString: text) else {
      throw TodoDatabaseError.corrupt(reason: "the to-do id '\(text)' is not a UUID.")
    }
    return Todo(id: id, title: row["title"], completed: row["completed"])
  }

  /// Writes `change` and gives it the next sequence number, in the caller's transaction.
  private static func store(_ change: TodoChange, in db: Database) throws -> SequencedChange {
    try db.execute(sql: "UPDATE todo_sequence SET last_sequence = last_sequence + 1 WHERE id = 1")
    let sequence = try lastSequence(db)
    switch change {
    case .created(let todo):
      try db.execute(
        sql: "INSERT INTO todos (id, title, completed, position) VALUES (?, ?, ?, ?)",
        arguments: [todo.id.uuidString, todo.title, todo.completed, sequence])
    case .completed(let id):
      try db.execute(sql: "UPDATE todos SET completed = 1 WHERE id = ?", arguments: [id.uuidString])
    case .deleted(let id):
      try db.execute(sql: "DELETE FROM todos WHERE id = ?", arguments: [id.uuidString])
    }
    return SequencedChange(sequence: sequence, change: change)
  }
}
