import Foundation
import Hummingbird
import HummingbirdTesting
import Katana
import NIOCore
import OrderedCollections
import Testing
import TodoServer

/// Many clients creating at once over loopback: no lost update, in the state or in the database.
@Suite("Load", .timeLimit(.minutes(2)))
struct LoadTests {
  static let connections = 128
  static let createsPerConnection = 16

  @Test func concurrentCreates_fromManyConnections_stateAndDatabaseCountEverySuccess() async throws {
    try await withDatabasePath { path in
      let (created, stateAtEnd) = try await withLiveServer(databasePath: path) { server in
        let created = try await withThrowingTaskGroup(of: [UUID].self) { group in
          for connection in 0..<Self.connections {
            group.addTask {
              // One connection per task, as a client process would have; the server sees them all at once.
              try await TestClient.withClient(host: "localhost", port: server.port) { client in
                var created: [UUID] = []
                for index in 0..<Self.createsPerConnection {
                  let response = try await client.post(
                    "/todos", body: ByteBuffer(string: #"{"title": "connection \#(connection) item \#(index)"}"#))
                  if response.status == .created, let body = response.body {
                    created.append(try JSONDecoder().decode(Todo.self, from: Data(body.readableBytesView)).id)
                  }
                }
                return created
              }
            }
          }
          return try await group.reduce(into: []) { $0 += $1 }
        }
        return (created, server.store.state)
      }
      // The server has shut down gracefully: the database is closed and holds everything it acknowledged.
      let restored = try await SQLiteTodoDatabase(path: path).loadState()

      #expect(created.count == Self.connections * Self.createsPerConnection)
      #expect(Set(created).count == created.count)
      #expect(stateAtEnd.todos.count == created.count)
      #expect(stateAtEnd.sequence == Int64(created.count))
      #expect(restored.todos.count == created.count)
      // Booleans, so that a failure prints a line rather than thousands of to-dos.
      let restoredHoldsEverySuccess = Set(restored.todos.keys) == Set(created)
      let restoredEqualsServed = restored == stateAtEnd
      #expect(restoredHoldsEverySuccess)
      #expect(restoredEqualsServed, "the database loads to a different state (contents or order)")
      #expect(try integrityCheck(at: path) == ["ok"])
    }
  }
}
