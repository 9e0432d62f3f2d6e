import Foundation
import Katana

/// The store of the to-do server.
public typealias TodoStore = Store<TodoState, TodoDependencies>

/// What the side effects of the to-do server use: the database.
public final class TodoDependencies: SideEffectDependencyContainer {
  /// Where changes are persisted, and where they come from.
  public let database: any TodoDatabase

  /// Dependencies that persist to `database`.
  public init(database: any TodoDatabase) {
    self.database = database
  }

  /// Dependencies with an in-memory SQLite database: nothing survives the process.
  ///
  /// The server builds its store with ``makeTodoStore(database:interceptors:)`` instead, which passes the
  /// real database.
  /// If SQLite cannot allocate it, the store fails to start with that error.
  public convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    do {
      let database = try SQLiteTodoDatabase.inMemory()
      self.init(database: database)
    } catch {
      self.init(database: UnavailableDatabase(error: error))
    }
  }
}

/// A database that could not be opened: every use throws the error that prevented it.
private struct UnavailableDatabase: TodoDatabase {
  let error: any Error

  func loadState() async throws -> TodoState {
    throw error
  }

  func write<Result: Sendable>(
    todoID: UUID?,
    request: String?,
    decide: @escaping @Sendable (Todo?) throws -> (change: TodoChange?, result: Result),
    context: SideEffectContext<TodoState, TodoDependencies>
  ) async throws -> Result {
    throw error
  }

  func close() async {}

  func appendAuditLog(_ entry: AuditLogEntry) async throws {
    throw error
  }

  func auditLog(session: UUID) async throws -> [AuditLogEntry] {
    throw error
  }

  func health(applied: () -> Int64) async -> DatabaseHealth {
    DatabaseHealth(applied: applied(), database: nil, feedConnected: false, secondsSinceCaughtUp: nil)
  }
}

/// Creates the store of the to-do server: its state is restored from `database` by the store's async state
/// initializer, and its side effects write every change to `database` before the store applies it.
///
/// Dispatches made while the state loads wait for it. If loading fails, the store never becomes ready and
/// every dispatch throws `StoreError.startupFailed`.
///
/// - Parameters:
///   - database: Where the to-dos live.
///   - interceptors: The store's interceptors, for example ``TodoInstrumentation/interceptors``.
public func makeTodoStore(database: any TodoDatabase, interceptors: [StoreInterceptor] = []) -> TodoStore {
  TodoStore(
    interceptors: interceptors,
    stateInitializer: { try await database.loadState() },
    dependenciesInitializer: { _, _ in TodoDependencies(database: database) })
}
