import Foundation
import Katana

/// Where the to-dos live: the store's state is restored from it, and every change is written to it before
/// the store applies it.
///
/// Two engines implement it:
/// - ``SQLiteTodoDatabase``, the embedded default: one server process owns the file. The database's writer
///   runs one transaction at a time and hands each committed change to the store before the next
///   transaction starts, so the store applies changes in commit order.
/// - ``PostgresTodoDatabase``, for several server instances on one database. Each committed change gets a
///   sequence number from the database; every instance's ``ChangeFeed`` applies all changes (its own
///   included) in that order, exactly once.
///
/// It also keeps the store's audit log (``AuditLogSink``), when the server keeps one.
public protocol TodoDatabase: AuditLogSink {
  /// Reads the state: every to-do in creation order, and the sequence number of the last change. The store's
  /// state initializer calls it (see ``makeTodoStore(database:interceptors:)``).
  func loadState() async throws -> TodoState

  /// Writes one change in a transaction and returns once the store has applied it.
  ///
  /// In the transaction: reads the to-do `todoID` (locking it until the transaction ends), calls `decide`
  /// with it, and stores the change `decide` returns with the next sequence number. `decide` throwing, or
  /// returning no change, writes nothing. `request` names the HTTP request that asked for the change
  /// (`"POST /todos #12"`): the store's commit of it carries the name where the engine commits it from the write
  /// (SQLite), so that the inspector and the audit log show which request made each change.
  ///
  /// - Throws: What `decide` throws; ``TodoDatabaseError/closed`` after ``close()``; the engine's error if
  ///   the database fails.
  func write<Result: Sendable>(
    todoID: UUID?,
    request: String?,
    decide: @escaping @Sendable (Todo?) throws -> (change: TodoChange?, result: Result),
    context: SideEffectContext<TodoState, TodoDependencies>
  ) async throws -> Result

  /// Refuses later writes with ``TodoDatabaseError/closed`` before they touch the database or the state.
  /// Calling it again does nothing.
  ///
  /// The server calls it at shutdown, once the HTTP server has drained its requests. SQLite also waits for
  /// the write in progress, if any, and closes the file.
  func close() async

  /// Whether an instance has every change the database has, and how far behind it is; asks the database,
  /// within a short bound, then calls `applied` for the number of the last change the instance's store
  /// applied (after, so that "caught up" means "had every change the database had when it answered").
  func health(applied: () -> Int64) async -> DatabaseHealth
}

/// What a ``TodoDatabase`` reports when it cannot do its job.
public enum TodoDatabaseError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The database was closed (the server is shutting down): the change was not written.
  case closed
  /// The database's history has a hole: the change numbered `expected` is missing. A change was removed by
  /// hand, or the database was restored from a backup older than this instance's state: restart the
  /// instance (it then reloads its state).
  case missingChange(expected: Int64)
  /// The database holds something this server cannot read; `reason` says what.
  case corrupt(reason: String)
  /// The database did not answer in time at start-up; `reason` says more.
  case unreachable(String)
  /// The change numbered `sequence` was committed, but this instance did not apply it in time (its change feed
  /// is cut off from the database): other instances have it, and this one will once its feed reconnects.
  case notApplied(Int64)
  /// The database could not be reached or failed before the change was committed (`reason` says how):
  /// nothing was saved, and the same request can be sent again.
  case unavailable(String)
  /// The database stopped answering while the change was being committed: it may or may not be saved.
  /// `todoID` is the to-do the change is about (for a create, the id the new to-do has if it was saved).
  case outcomeUnknown(todoID: UUID?)

  /// What happened and what to do about it.
  public var description: String {
    switch self {
    case .closed:
      "The database is closed: the server is shutting down, and takes no more changes."
    case .missingChange(let expected):
      "The database's change \(expected) is missing, so this instance cannot apply later ones. Restart it to "
        + "reload its state from the database."
    case .corrupt(let reason):
      "The database holds data this server cannot read: \(reason)"
    case .notApplied(let sequence):
      "The change was saved (number \(sequence)), but this server has not caught up with the database yet: "
        + "read it back in a moment; do not repeat it."
    case .unavailable(let reason):
      "The database is unavailable (\(reason)); nothing was saved. Retry in a few seconds."
    case .outcomeUnknown(let todoID?):
      "The database stopped answering while the change was being saved: it may or may not have been saved. "
        + "Read /todos/\(todoID) before repeating it."
    case .outcomeUnknown(nil):
      "The database stopped answering while the change was being saved: it may or may not have been saved. "
        + "Read it back before repeating it."
    case .unreachable(let reason):
      "The database did not answer (\(reason)): check that it runs and that the server's database URL is right."
    }
  }
}
