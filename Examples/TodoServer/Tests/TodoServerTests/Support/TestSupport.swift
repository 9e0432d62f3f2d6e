import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Katana
import Logging
import NIOCore
import OrderedCollections

@testable import TodoServer

/// Runs `body` with the path of an SQLite database file in a fresh directory, and removes the directory
/// afterwards.
func withDatabasePath<Result>(_ body: (String) async throws -> Result) async throws -> Result {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("todo-server-tests-\(UUID().uuidString)", isDirectory: true)
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  return try await body(directory.appendingPathComponent("todos.sqlite").path)
}

/// A running server: a client connected to it over loopback, and the backend behind it.
struct LiveServer: Sendable {
  let client: any TestClientProtocol
  let backend: TodoBackend

  /// The store every request of this server shares.
  var store: TodoStore { backend.store }
  /// The server's port on loopback, for extra connections.
  var port: Int { client.port! }
}

/// Starts the real application for `backend` on a free loopback port, runs `body`, and stops the server
/// gracefully: when this returns, the database is closed and the store shut down.
func withLiveServer<Result: Sendable>(
  backend: TodoBackend, _ body: @Sendable (LiveServer) async throws -> Result
) async throws -> Result {
  let application = makeTodoApplication(backend: backend, logger: quietLogger())
  return try await application.test(.live) { client in
    try await body(LiveServer(client: client, backend: backend))
  }
}

/// ``withLiveServer(backend:_:)`` on SQLite in the file at `path`.
func withLiveServer<Result: Sendable>(
  databasePath path: String, _ body: @Sendable (LiveServer) async throws -> Result
) async throws -> Result {
  let backend = try TodoBackend.sqlite(path: path, logger: quietLogger())
  // HummingbirdTesting's live mode waits for the server's port without a bound, and a store that fails to
  // start keeps the server from binding one: fail here instead.
  try await backend.store.waitUntilReady()
  return try await withLiveServer(backend: backend, body)
}

/// A logger that prints only warnings and errors.
func quietLogger() -> Logger {
  var logger = Logger(label: "todo-server-tests")
  logger.logLevel = .warning
  return logger
}

/// The state stored in the SQLite database at `path`, read with a connection of its own (read-only, so it
/// does not disturb a server using the file).
func databaseState(at path: String) throws -> TodoState {
  var configuration = Configuration()
  configuration.readonly = true
  let queue = try DatabaseQueue(path: path, configuration: configuration)
  defer { try? queue.close() }
  return try queue.read { db in
    let sequence = try Int64.fetchOne(db, sql: "SELECT last_sequence FROM todo_sequence") ?? -1
    let todos = try Row.fetchAll(db, sql: "SELECT id, title, completed FROM todos ORDER BY position").map { row in
      Todo(id: UUID(uuidString: row["id"])!, title: row["title"], completed: row["completed"])
    }
    return TodoState(todos: todos, sequence: sequence)
  }
}

/// What `PRAGMA integrity_check` says of the SQLite database at `path` (`["ok"]` when it is sound).
func integrityCheck(at path: String) throws -> [String] {
  let queue = try DatabaseQueue(path: path)
  defer { try? queue.close() }
  return try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
}

extension ByteBuffer {
  /// A buffer holding `text` as UTF-8.
  static func json(_ text: String) -> ByteBuffer {
    ByteBuffer(string: text)
  }
}

extension TestResponse {
  /// The body decoded as `T`.
  func decoded<T: Decodable>(as type: T.Type) throws -> T {
    try JSONDecoder().decode(T.self, from: Data(body.readableBytesView))
  }

  /// The error body, or nil if the body is not an API error.
  var apiError: (code: String, message: String)? {
    struct ErrorBody: Decodable {
      struct Detail: Decodable {
        let code: String
        let message: String
      }
      let error: Detail
    }
    return (try? decoded(as: ErrorBody.self)).map { ($0.error.code, $0.error.message) }
  }

  /// The `code` of an error body, or nil if the body is not an API error.
  var errorCode: String? { apiError?.code }
}

extension TestClientProtocol {
  /// `POST /todos` with `{"title": title}`, expecting 201; returns the to-do.
  func createTodo(_ title: String) async throws -> Todo {
    let body = String(decoding: try JSONEncoder().encode(["title": title]), as: UTF8.self)
    let response = try await execute(uri: "/todos", method: .post, body: .json(body))
    guard response.status == .created else {
      throw UnexpectedResponse(status: response.status, body: String(buffer: response.body))
    }
    return try response.decoded(as: Todo.self)
  }
}

/// A response a helper did not expect.
struct UnexpectedResponse: Error, CustomStringConvertible {
  let status: HTTPResponse.Status
  let body: String

  var description: String { "Unexpected response \(status.code): \(body)" }
}

/// Runs `body`, failing with ``TimedOut`` if it has not finished after `limit`: the failsafe of waits that
/// could hang.
///
/// `body` is then cancelled but not waited for (the server's own ``withDeadline(_:orThrow:_:)``), so that a
/// wait that ignores cancellation (a future's `get()`, a process's exit) still fails the test in time.
func withFailsafe<Result: Sendable>(
  _ limit: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
  try await withDeadline(limit, orThrow: TimedOut(what: what, limit: limit), body)
}

/// A failsafe expired.
struct TimedOut: Error, CustomStringConvertible {
  let what: String
  let limit: Duration

  var description: String { "Timed out after \(limit): \(what)" }
}
