import Foundation
import Hummingbird
import HummingbirdTesting
import Katana
import NIOConcurrencyHelpers
import NIOCore
import OrderedCollections
import Testing
import TodoServer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A crash loses no acknowledged change: the real server, as a child process, killed with SIGKILL under load.
@Suite("Durability", .timeLimit(.minutes(2)))
struct DurabilityTests {
  static let connections = 32
  /// The most creates sent in all; the kill comes long before.
  static let maximumCreates = 2_000
  /// The kill comes once this many creates have been acknowledged.
  static let acknowledgedBeforeKill = 300

  @Test func sigkillDuringCreates_loseNoAcknowledgedCreate_andLeaveASoundDatabase() async throws {
    try await withDatabasePath { path in
      let server = try await ChildServer.start(databasePath: path)
      // Whatever happens below, the child does not outlive the test.
      defer { server.sigkill() }
      let acknowledged = NIOLockedValueBox<[UUID]>([])
      let sent = NIOLockedValueBox(0)

      // Creates from many connections until the server dies (or the bound is reached); SIGKILL once enough
      // were acknowledged. Requests in flight at the kill fail: only 2xx responses count.
      try await withThrowingTaskGroup(of: Void.self) { group in
        for connection in 0..<Self.connections {
          group.addTask {
            try? await TestClient.withClient(host: "127.0.0.1", port: server.port) { client in
              while sent.withLockedValue({ sent in
                sent += 1
                return sent <= Self.maximumCreates
              }) {
                let response = try await client.post(
                  "/todos", body: ByteBuffer(string: #"{"title": "connection \#(connection)"}"#))
                guard response.status == .created, let body = response.body else { continue }
                let todo = try JSONDecoder().decode(Todo.self, from: Data(body.readableBytesView))
                let count = acknowledged.withLockedValue { acknowledged in
                  acknowledged.append(todo.id)
                  return acknowledged.count
                }
                if count == Self.acknowledgedBeforeKill { server.sigkill() }
              }
            }
          }
        }
        try await group.waitForAll()
      }
      let status = try await server.waitForExit()

      let ids = acknowledged.withLockedValue { $0 }
      #expect(status == SIGKILL, "the server was expected to die of SIGKILL")
      #expect(ids.count >= Self.acknowledgedBeforeKill)
      #expect(sent.withLockedValue { $0 } <= Self.maximumCreates + Self.connections)
      #expect(try integrityCheck(at: path) == ["ok"])
      let stored = try databaseState(at: path)
      let missing = Set(ids).subtracting(stored.todos.keys)
      #expect(missing.isEmpty, "\(missing.count) acknowledged creates are missing after the crash")
      // The database may hold more (committed, but the response was lost with the process), never fewer.
      #expect(stored.sequence == Int64(stored.todos.count))

      // A new server starts from it and serves every acknowledged to-do.
      try await withLiveServer(databasePath: path) { server in
        #expect(server.store.state == stored)
      }
    }
  }
}
