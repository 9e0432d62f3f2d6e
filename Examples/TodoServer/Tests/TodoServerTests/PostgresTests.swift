import Foundation
import Hummingbird
import HummingbirdTesting
import Katana
import NIOConcurrencyHelpers
import NIOCore
import OrderedCollections
import PostgresNIO
import Testing
import TodoServer

/// Several server instances on one PostgreSQL database: each store applies every committed change in
/// sequence order, once, and the database decides conflicts. Only these tests need PostgreSQL.
@Suite(
  "PostgreSQL: several instances", .enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason),
  .timeLimit(.minutes(2)))
struct PostgresTests {
  @Test func twoInstances_concurrentCreatesAndCompletes_bothStoresEqualTheDatabase() async throws {
    let workers = 50
    let rounds = 10
    try await withFreshPostgresDatabase { configuration in
      try await withPostgresServer(configuration) { a in
        try await withPostgresServer(configuration) { b in
          let recorders = [CommitRecorder(a.store), CommitRecorder(b.store)]
          // Each worker creates on one instance and at once completes on the other, which may not have
          // applied the create yet: the database, not that instance's store, decides that the to-do exists.
          let failures = try await withThrowingTaskGroup(of: [String].self) { group in
            for worker in 0..<workers {
              let (creator, completer) = worker.isMultiple(of: 2) ? (a, b) : (b, a)
              group.addTask {
                try await TestClient.withClient(host: "127.0.0.1", port: creator.port) { creating in
                  try await TestClient.withClient(host: "127.0.0.1", port: completer.port) { completing in
                    var failures: [String] = []
                    for round in 0..<rounds {
                      let created = try await creating.post(
                        "/todos", body: ByteBuffer(string: #"{"title": "worker \#(worker) round \#(round)"}"#))
                      guard created.status == .created, let body = created.body else {
                        failures.append("create: \(created.status)")
                        continue
                      }
                      let todo = try JSONDecoder().decode(Todo.self, from: Data(body.readableBytesView))
                      let completed = try await completing.post("/todos/\(todo.id)/complete", body: ByteBuffer())
                      if completed.status != .ok { failures.append("complete: \(completed.status)") }
                    }
                    return failures
                  }
                }
              }
            }
            return try await group.reduce(into: []) { $0 += $1 }
          }

          #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(3))")
          let last = try await lastSequence(configuration)
          #expect(last == Int64(2 * workers * rounds))
          try await a.waitUntilApplied(last)
          try await b.waitUntilApplied(last)
          let stored = try await databaseState(configuration)
          let storesAgree = a.store.state == b.store.state
          let storesEqualTheDatabase = a.store.state == stored
          #expect(storesAgree)
          #expect(storesEqualTheDatabase)
          #expect(stored.todos.count == workers * rounds)
          #expect(stored.todos.values.allSatisfy { $0.completed })
          for recorder in recorders {
            #expect(recorder.coversEveryNumberOnce(from: 0, to: last))
          }
          let (count, first, final) = try await withPostgresClient(configuration) { client in
            var row = (0, Int64(0), Int64(0))
            for try await values in try await client.query(
              "SELECT count(*), min(sequence), max(sequence) FROM todo_changes"
            ).decode((Int, Int64, Int64).self) {
              row = values
            }
            return row
          }
          #expect(count == 2 * workers * rounds && first == 1 && final == last)
        }
      }
    }
  }

  @Test func completingATodoDeletedElsewhere_is404_evenWhereTheStoreStillHasIt() async throws {
    try await withFreshPostgresDatabase { configuration in
      try await withPostgresServer(configuration) { a in
        let todo = try await a.client.createTodo("contested")

        // A second instance whose feed does not run, so that its store keeps the state it loaded.
        let database = PostgresTodoDatabase(client: PostgresClient(configuration: configuration), logger: quietLogger())
        let stale = makeTodoStore(database: database)
        try await withThrowingTaskGroup(of: Void.self) { group in
          group.addTask { await database.runClient() }
          defer { group.cancelAll() }
          try await stale.waitUntilReady()
          #expect(stale.state.todos[todo.id] == todo)

          let deleted = try await a.client.execute(uri: "/todos/\(todo.id)", method: .delete)
          #expect(deleted.status == .noContent)

          await #expect(throws: TodoError.notFound(todo.id)) { try await stale.dispatch(CompleteTodo(id: todo.id)) }
          await #expect(throws: TodoError.notFound(todo.id)) { try await stale.dispatch(DeleteTodo(id: todo.id)) }
          #expect(stale.state.todos[todo.id] == todo, "a refused change leaves the store as it was")
          await stale.shutdown()
        }

        let completed = try await a.client.execute(uri: "/todos/\(todo.id)/complete", method: .post)
        #expect(completed.status == .notFound)
        #expect(try await lastSequence(configuration) == 2)
      }
    }
  }

  @Test func writeOnAnInstanceWhoseFeedIsCutOff_failsWithNotAppliedAfterTheTimeout_andIsCommitted() async throws {
    try await withFreshPostgresDatabase { configuration in
      var options = PostgresTodoDatabase.Options()
      options.applyTimeout = .milliseconds(300)
      // No feed runs for this database, as when the feed is cut off: the request must not wait forever.
      let database = PostgresTodoDatabase(
        client: PostgresClient(configuration: configuration), options: options, logger: quietLogger())
      let store = makeTodoStore(database: database)
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await database.runClient() }
        defer { group.cancelAll() }
        try await store.waitUntilReady()

        await #expect(throws: TodoDatabaseError.notApplied(1)) {
          try await store.dispatch(CreateTodo(title: "saved, not yet seen here"))
        }

        #expect(store.state.todos.isEmpty)
        await store.shutdown()
      }
      let stored = try await databaseState(configuration)
      #expect(stored.sequence == 1 && stored.todos.values.map(\.title) == ["saved, not yet seen here"])
    }
  }

  @Test func racingDeletesAndCompletes_acrossInstances_oneDeleteWinsAndNothingFollowsIt() async throws {
    let todoCount = 8
    let requestsPerTodo = 8
    try await withFreshPostgresDatabase { configuration in
      try await withPostgresServer(configuration) { a in
        try await withPostgresServer(configuration) { b in
          var todos: [Todo] = []
          for index in 0..<todoCount {
            todos.append(try await a.client.createTodo("contested \(index)"))
          }
          try await b.waitUntilApplied(Int64(todoCount))
          let recorders = [CommitRecorder(a.store), CommitRecorder(b.store)]
          let requests = todoCount * requestsPerTodo
          let barrier = Barrier(count: requests)
          let outcomes = try await withThrowingTaskGroup(of: (UUID, Bool, HTTPResponse.Status).self) { group in
            for index in 0..<requests {
              let id = todos[index % todoCount].id
              let isDelete = (index / todoCount).isMultiple(of: 2)
              let instance = (index / 2).isMultiple(of: 2) ? a : b
              group.addTask {
                try await TestClient.withClient(host: "127.0.0.1", port: instance.port) { client in
                  _ = try await client.getChannel()
                  await barrier.arriveAndWait()
                  let request =
                    isDelete
                    ? TestClient.Request("/todos/\(id)", method: .delete)
                    : TestClient.Request("/todos/\(id)/complete", method: .post)
                  return (id, isDelete, try await client.execute(request).status)
                }
              }
            }
            return try await group.reduce(into: []) { $0.append($1) }
          }

          #expect(outcomes.allSatisfy { [.ok, .noContent, .notFound].contains($0.2) })
          for todo in todos {
            #expect(outcomes.filter { $0.0 == todo.id && $0.1 && $0.2 == .noContent }.count == 1)
          }
          let last = try await lastSequence(configuration)
          try await a.waitUntilApplied(last)
          try await b.waitUntilApplied(last)
          #expect(a.store.state.todos.isEmpty && b.store.state.todos.isEmpty)
          for recorder in recorders {
            // Every numbered change changed the to-dos: no complete was written after the delete.
            #expect(recorder.commits.allSatisfy { $0.changedTodos })
            #expect(recorder.coversEveryNumberOnce(from: Int64(todoCount), to: last))
          }
        }
      }
    }
  }

  @Test func instanceRestartedMidLoad_catchesUpWithTheOther() async throws {
    try await withFreshPostgresDatabase { configuration in
      try await withPostgresServer(configuration) { a in
        // Creates on A from the start until B has restarted and done its own creates.
        let stop = NIOLockedValueBox(false)
        let loadOnA = Task {
          try await createTodos(port: a.port, connections: 8, upTo: 5_000) { stop.withLockedValue { $0 } }
        }

        let beforeRestart = try await withPostgresServer(configuration) { b in
          try await createTodos(port: b.port, connections: 4, upTo: 100) { false }
        }
        // B has stopped; A's load goes on. The new B loads a snapshot in the middle of it, then catches up.
        try await withPostgresServer(configuration) { b in
          let loadedAt = b.store.state.sequence
          let afterRestart = try await createTodos(port: b.port, connections: 4, upTo: 100) { false }
          stop.withLockedValue { $0 = true }
          let onA = try await loadOnA.value

          let last = try await lastSequence(configuration)
          #expect(last == Int64(onA.count + beforeRestart.count + afterRestart.count))
          #expect(loadedAt < last, "A wrote after B's restart, so B had to catch up")
          try await a.waitUntilApplied(last)
          try await b.waitUntilApplied(last)
          let stored = try await databaseState(configuration)
          let storesAgree = a.store.state == b.store.state
          let storesEqualTheDatabase = b.store.state == stored
          #expect(storesAgree)
          #expect(storesEqualTheDatabase)
          let everyCreateIsThere = Set(stored.todos.keys) == Set(onA + beforeRestart + afterRestart)
          #expect(everyCreateIsThere)
        }
      }
    }
  }

  @Test func feedConnectionKilled_reconnectsAndCatchesUp() async throws {
    try await withFreshPostgresDatabase { configuration in
      try await withPostgresServer(configuration) { a in
        try await withPostgresServer(configuration) { b in
          _ = try await a.client.createTodo("before")
          try await b.waitUntilApplied(1)
          let feed = try b.postgres.feed
          let processID = try #require(feed.currentStatus.backendProcessID)
          let connectionsBefore = feed.currentStatus.connections

          let terminated = try await withPostgresClient(configuration) { client in
            var terminated = false
            for try await value in try await client.query("SELECT pg_terminate_backend(\(processID))").decode(
              Bool.self)
            {
              terminated = value
            }
            return terminated
          }
          #expect(terminated)
          for index in 0..<20 {
            _ = try await a.client.createTodo("while B reconnects \(index)")
          }

          try await b.waitUntilApplied(21)
          #expect(feed.currentStatus.connections > connectionsBefore)
          #expect(b.store.state == a.store.state)
        }
      }
    }
  }

  @Test func restart_loadsTheStateFromTheDatabase() async throws {
    try await withFreshPostgresDatabase { configuration in
      let before = try await withPostgresServer(configuration) { a in
        let milk = try await a.client.createTodo("milk")
        _ = try await a.client.createTodo("eggs")
        _ = try await a.client.execute(uri: "/todos/\(milk.id)/complete", method: .post)
        return a.store.state
      }

      try await withPostgresServer(configuration) { a in
        #expect(a.store.state == before)
        #expect(a.store.state.sequence == 3)
      }
    }
  }
}

/// Creates to-dos on the server at `port` from `connections` connections until `stop()` says so or `upTo`
/// were sent; returns the ids of those acknowledged.
func createTodos(
  port: Int, connections: Int, upTo limit: Int, stop: @escaping @Sendable () -> Bool
) async throws -> [UUID] {
  let sent = NIOLockedValueBox(0)
  return try await withThrowingTaskGroup(of: [UUID].self) { group in
    for connection in 0..<connections {
      group.addTask {
        try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
          var created: [UUID] = []
          while !stop(),
            sent.withLockedValue({ sent in
              sent += 1
              return sent <= limit
            })
          {
            let response = try await client.post(
              "/todos", body: ByteBuffer(string: #"{"title": "load \#(connection)"}"#))
            guard response.status == .created, let body = response.body else {
              throw UnexpectedResponse(status: response.status, body: response.body.map { String(buffer: $0) } ?? "")
            }
            created.append(try JSONDecoder().decode(Todo.self, from: Data(body.readableBytesView)).id)
          }
          return created
        }
      }
    }
    return try await group.reduce(into: []) { $0 += $1 }
  }
}
