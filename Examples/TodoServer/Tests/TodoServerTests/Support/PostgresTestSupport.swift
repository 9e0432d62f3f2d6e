import Foundation
import Katana
import Logging
import PostgresNIO
import Testing
import TodoServer

/// The PostgreSQL server the PostgreSQL tests use, from `TODO_TEST_POSTGRES_URL`. The tests create a fresh
/// database there for each test and drop it afterwards.
enum PostgresTestServer {
  static let environmentVariable = "TODO_TEST_POSTGRES_URL"

  /// The URL, if the environment sets one.
  static var url: String? {
    ProcessInfo.processInfo.environment[environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
  }

  /// Why the PostgreSQL tests are skipped when no URL is set.
  static let skipReason: Comment = """
    PostgreSQL tests skipped: TODO_TEST_POSTGRES_URL is not set. Set it to a server where the tests may create \
    databases, or start a throwaway one from the repository's root with: eval "$(.ci/postgres start)"
    """
}

/// Creates an empty database on the test server, runs `body` with a configuration that connects to it, and
/// drops the database afterwards.
func withFreshPostgresDatabase<Result>(
  _ body: (PostgresClient.Configuration) async throws -> Result
) async throws -> Result {
  let url = try #require(PostgresTestServer.url, "set \(PostgresTestServer.environmentVariable)")
  let server = try DatabaseURL(url).configuration
  let name = "todo_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
  try await withPostgresClient(server) { client in
    try await client.query("CREATE DATABASE \(unescaped: name)")
  }
  var configuration = server
  configuration.database = name
  configuration.options.maximumConnections = 10
  do {
    let result = try await body(configuration)
    try await dropDatabase(name, on: server)
    return result
  } catch {
    try? await dropDatabase(name, on: server)
    throw error
  }
}

private func dropDatabase(_ name: String, on server: PostgresClient.Configuration) async throws {
  try await withPostgresClient(server) { client in
    try await client.query("DROP DATABASE IF EXISTS \(unescaped: name) WITH (FORCE)")
  }
}

/// Runs `body` with a running client of `configuration`.
@discardableResult
func withPostgresClient<Result>(
  _ configuration: PostgresClient.Configuration, _ body: (PostgresClient) async throws -> Result
) async throws -> Result {
  let client = PostgresClient(configuration: configuration)
  return try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { await client.run() }
    defer { group.cancelAll() }
    return try await body(client)
  }
}

/// The state stored in the database, read with a client of its own.
func databaseState(_ configuration: PostgresClient.Configuration) async throws -> TodoState {
  let database = PostgresTodoDatabase(client: PostgresClient(configuration: configuration), logger: quietLogger())
  return try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { await database.runClient() }
    defer { group.cancelAll() }
    return try await database.loadState()
  }
}

/// Runs `body` with one server instance on the database of `configuration`, on loopback.
func withPostgresServer<Result: Sendable>(
  _ configuration: PostgresClient.Configuration,
  options: PostgresTodoDatabase.Options = PostgresTodoDatabase.Options(),
  _ body: @Sendable (LiveServer) async throws -> Result
) async throws -> Result {
  let backend = TodoBackend.postgres(configuration: configuration, logger: quietLogger(), options: options)
  return try await withLiveServer(backend: backend, body)
}

extension LiveServer {
  /// The instance's PostgreSQL database.
  var postgres: PostgresTodoDatabase {
    get throws { try #require(backend.database as? PostgresTodoDatabase) }
  }

  /// Waits (at most 30 s) until this instance's store has applied the change numbered `sequence`.
  func waitUntilApplied(_ sequence: Int64) async throws {
    let feed = try postgres.feed
    try await withFailsafe(.seconds(30), "the store to apply change \(sequence)") {
      try await feed.waitUntilApplied(sequence)
    }
  }
}

/// The number of the last change committed to the database.
func lastSequence(_ configuration: PostgresClient.Configuration) async throws -> Int64 {
  try await withPostgresClient(configuration) { client in
    var last: Int64 = -1
    for try await value in try await client.query("SELECT last_sequence FROM todo_sequence").decode(Int64.self) {
      last = value
    }
    return last
  }
}
