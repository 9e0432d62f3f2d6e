import Foundation
import Hummingbird
import HummingbirdTesting
import Katana
import Logging
import NIOCore
import OrderedCollections
import TodoServer

/// Runs `body` with the URL of a journal file in a fresh directory, and removes the directory afterwards.
func withJournalURL<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("todo-server-tests-\(UUID().uuidString)", isDirectory: true)
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  return try await body(directory.appendingPathComponent("todos.jsonl"))
}

/// A running server: a client connected to it over loopback, and the store behind it.
struct LiveServer: Sendable {
  let client: any TestClientProtocol
  let store: TodoStore

  /// The server's port on loopback, for extra connections.
  var port: Int { client.port! }
}

/// Starts the real application on a free loopback port with a journal at `journalURL`, runs `body`, and stops
/// the server gracefully: when this returns, the journal is closed and the store shut down.
func withLiveServer<Result: Sendable>(
  journalURL: URL, _ body: @Sendable (LiveServer) async throws -> Result
) async throws -> Result {
  let store = makeTodoStore(journal: TodoJournal(fileURL: journalURL))
  // HummingbirdTesting's live mode waits for the server's port without a bound, and a store that fails to
  // start keeps the server from binding one: fail here instead.
  try await store.waitUntilReady()
  let application = makeTodoApplication(store: store, logger: quietLogger())
  return try await application.test(.live) { client in
    try await body(LiveServer(client: client, store: store))
  }
}

/// A logger that prints only warnings and errors.
func quietLogger() -> Logger {
  var logger = Logger(label: "todo-server-tests")
  logger.logLevel = .warning
  return logger
}

/// Reads every change in the journal file, in order, without changing the file.
func journalChanges(at url: URL) throws -> [TodoChange] {
  let data = try Data(contentsOf: url)
  return try data.split(separator: UInt8(ascii: "\n")).map { try JSONDecoder().decode(TodoChange.self, from: $0) }
}

/// The state a restarted server would have: a fresh journal's `load()` (which compacts the file).
func restoredState(from url: URL) throws -> TodoState {
  let journal = TodoJournal(fileURL: url)
  defer { journal.close() }
  return try journal.load()
}

/// Writes `lines` to the file at `url`, each followed by a line break, plus `tail` with no line break.
func writeJournal(_ lines: [String], tail: String = "", to url: URL) throws {
  let text = lines.map { $0 + "\n" }.joined() + tail
  try Data(text.utf8).write(to: url)
}

/// The JSON of a change, as the journal writes it.
func journalLine(_ change: TodoChange) throws -> String {
  String(decoding: try JSONEncoder().encode(change), as: UTF8.self)
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

  /// The `code` of an error body, or nil if the body is not an API error.
  var errorCode: String? {
    struct ErrorBody: Decodable {
      struct Detail: Decodable {
        let code: String
        let message: String
      }
      let error: Detail
    }
    return (try? decoded(as: ErrorBody.self))?.error.code
  }
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
