import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Katana
import OrderedCollections
import Testing
import TodoServer

/// The state survives a restart: the next server restores it from the database through the store's async
/// state initializer.
@Suite("Restart", .timeLimit(.minutes(1)))
struct RestartTests {
  @Test func restart_restoresTheStateTheServerHad() async throws {
    try await withDatabasePath { path in
      let (before, stateBefore) = try await withLiveServer(databasePath: path) { server in
        let milk = try await server.client.createTodo("milk")
        let eggs = try await server.client.createTodo("eggs")
        _ = try await server.client.createTodo("bread")
        _ = try await server.client.execute(uri: "/todos/\(milk.id)/complete", method: .post)
        _ = try await server.client.execute(uri: "/todos/\(eggs.id)", method: .delete)
        return (
          try await server.client.execute(uri: "/todos", method: .get).decoded(as: [Todo].self), server.store.state
        )
      }
      #expect(before.map(\.title) == ["milk", "bread"])

      let (after, stateAfter) = try await withLiveServer(databasePath: path) { server in
        (try await server.client.execute(uri: "/todos", method: .get).decoded(as: [Todo].self), server.store.state)
      }

      #expect(after == before)
      #expect(stateAfter == stateBefore)
      #expect(stateAfter.sequence == 5)
    }
  }

  @Test func restart_continuesTheSequence() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        _ = try await server.client.createTodo("first")
      }

      try await withLiveServer(databasePath: path) { server in
        _ = try await server.client.createTodo("second")
        #expect(server.store.state.sequence == 2)
        #expect(server.store.state.todos.values.map(\.title) == ["first", "second"])
      }
    }
  }

  @Test func open_withAFileThatIsNotADatabase_throwsAndLeavesTheFileAlone() async throws {
    try await withDatabasePath { path in
      let contents = Data("this is not an SQLite database, just text that is long enough to have a header".utf8)
      try contents.write(to: URL(fileURLWithPath: path))

      #expect(throws: DatabaseError.self) { try TodoBackend.sqlite(path: path, logger: quietLogger()) }
      #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == contents)
    }
  }

  @Test func start_withARowTheServerCannotRead_failsTheStoreWithTheReason() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        _ = try await server.client.createTodo("fine")
      }
      let queue = try DatabaseQueue(path: path)
      try await queue.write { db in
        try db.execute(sql: "INSERT INTO todos (id, title, completed, position) VALUES ('not-a-uuid', 'x', 0, 99)")
      }
      try queue.close()
      let backend = try TodoBackend.sqlite(path: path, logger: quietLogger())

      let error = await #expect(throws: StoreError.self) { try await backend.store.waitUntilReady() }

      guard case .startupFailed(let cause) = error, case TodoDatabaseError.corrupt(let reason) = cause else {
        Issue.record("expected a corrupt-database start-up failure, got \(String(describing: error))")
        return
      }
      #expect(reason.contains("not-a-uuid"))
      await #expect(throws: StoreError.self) { try await backend.store.dispatch(CreateTodo(title: "refused")) }
      await backend.store.shutdown()
    }
  }

  @Test func application_withUnreadableDatabase_failsBeforeListening() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { _ in }
      let queue = try DatabaseQueue(path: path)
      try await queue.write { db in try db.execute(sql: "DELETE FROM todo_sequence") }
      try queue.close()
      let backend = try TodoBackend.sqlite(path: path, logger: quietLogger())
      let application = makeTodoApplication(
        backend: backend, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: quietLogger())

      // The server waits for the store before it binds its port; the store's start-up error ends the run.
      await #expect(throws: StoreError.self) { try await application.run() }
    }
  }
}

/// Graceful shutdown: the HTTP server stops first, then the database is closed and the store shut down.
@Suite("Shutdown", .timeLimit(.minutes(1)))
struct ShutdownTests {
  @Test func gracefulShutdown_closesTheDatabaseAndShutsTheStoreDown() async throws {
    try await withDatabasePath { path in
      let (backend, todo) = try await withLiveServer(databasePath: path) { server in
        (server.backend, try await server.client.createTodo("last words"))
      }

      #expect(!backend.store.isReady)
      #expect(Array(backend.store.state.todos.values) == [todo])
      await #expect(throws: StoreError.storeShutDown) {
        try await backend.store.dispatch(CreateTodo(title: "too late"))
      }
      #expect(try databaseState(at: path) == TodoState(todos: [todo], sequence: 1))
    }
  }
}
