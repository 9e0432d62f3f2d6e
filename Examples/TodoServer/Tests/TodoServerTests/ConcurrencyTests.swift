import Foundation
import Hummingbird
import HummingbirdTesting
import Katana
import OrderedCollections
import Testing
import TodoServer

/// Requests that race on the same to-dos: whatever the interleaving, each change is checked against the
/// database as its predecessors left it, and the database and the state agree.
@Suite("Concurrent changes", .timeLimit(.minutes(1)))
struct ConcurrencyTests {
  /// The outcome of one racing request.
  enum Outcome: Sendable, Equatable {
    case completed
    case deleted
    case notFound
  }

  @Test func racingCompletesAndDeletes_onTheSameTodos_keepDatabaseAndStateInAgreement() async throws {
    let todoCount = 50
    let completesPerTodo = 4
    let deletesPerTodo = 3
    try await withDatabasePath { path in
      let backend = try TodoBackend.sqlite(path: path, logger: quietLogger())
      let store = backend.store
      var ids: [UUID] = []
      for index in 0..<todoCount {
        ids.append(try await store.dispatch(CreateTodo(title: "todo \(index)")).id)
      }
      let recorder = CommitRecorder(store)

      let outcomes = try await withThrowingTaskGroup(of: (UUID, Outcome).self) { group in
        for id in ids {
          for _ in 0..<completesPerTodo {
            group.addTask {
              do {
                _ = try await store.dispatch(CompleteTodo(id: id))
                return (id, .completed)
              } catch TodoError.notFound {
                return (id, .notFound)
              }
            }
          }
          for _ in 0..<deletesPerTodo {
            group.addTask {
              do {
                try await store.dispatch(DeleteTodo(id: id))
                return (id, .deleted)
              } catch TodoError.notFound {
                return (id, .notFound)
              }
            }
          }
        }
        return try await group.reduce(into: [UUID: [Outcome]]()) { $0[$1.0, default: []].append($1.1) }
      }
      let finalState = store.state
      await backend.database.close()
      await store.shutdown()

      for id in ids {
        // Exactly one delete wins; every request after it finds nothing.
        #expect(outcomes[id]?.filter { $0 == .deleted }.count == 1)
      }
      #expect(finalState.todos.isEmpty)
      #expect(try databaseState(at: path) == finalState)
      // Every change the database numbered changed the to-dos: no complete was written twice or after the
      // delete (the state would have taken the number without changing).
      #expect(recorder.coversEveryNumberOnce(from: Int64(todoCount), to: finalState.sequence))
      #expect(recorder.commits.allSatisfy { $0.changedTodos })
      #expect(finalState.sequence <= Int64(todoCount * 3))
    }
  }

  @Test func racingRequests_overHTTP_oneDeleteWinsPerTodoAndNothingFollowsIt() async throws {
    let todoCount = 8
    let requestsPerTodo = 8
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        var todos: [Todo] = []
        for index in 0..<todoCount {
          todos.append(try await server.client.createTodo("contested \(index)"))
        }
        let recorder = CommitRecorder(server.store)
        let requests = todoCount * requestsPerTodo
        let barrier = Barrier(count: requests)
        let outcomes = try await withThrowingTaskGroup(of: (UUID, HTTPRequest.Method, HTTPResponse.Status).self) {
          group in
          for index in 0..<requests {
            let id = todos[index % todoCount].id
            // Half the requests for each to-do delete it, half complete it.
            let isDelete = (index / todoCount).isMultiple(of: 2)
            group.addTask {
              try await TestClient.withClient(host: "localhost", port: server.port) { client in
                // Connect first, then send all at once, so that the requests really race.
                _ = try await client.getChannel()
                await barrier.arriveAndWait()
                let request =
                  isDelete
                  ? TestClient.Request("/todos/\(id)", method: .delete)
                  : TestClient.Request("/todos/\(id)/complete", method: .post)
                return (id, request.head.method, try await client.execute(request).status)
              }
            }
          }
          return try await group.reduce(into: []) { $0.append($1) }
        }

        #expect(outcomes.allSatisfy { [.ok, .noContent, .notFound].contains($0.2) })
        for todo in todos {
          #expect(outcomes.filter { $0.0 == todo.id && $0.1 == .delete && $0.2 == .noContent }.count == 1)
        }
        #expect(server.store.state.todos.isEmpty)
        #expect(recorder.commits.allSatisfy { $0.changedTodos })
        #expect(recorder.coversEveryNumberOnce(from: Int64(todoCount), to: server.store.state.sequence))
        #expect(try databaseState(at: path) == server.store.state)
      }
    }
  }

  @Test func mixedConcurrentChanges_restoreToTheServedState() async throws {
    try await withDatabasePath { path in
      let backend = try TodoBackend.sqlite(path: path, logger: quietLogger())
      let store = backend.store
      try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<16 {
          group.addTask {
            for index in 0..<25 {
              let todo = try await store.dispatch(CreateTodo(title: "task \(task) item \(index)"))
              if index.isMultiple(of: 2) {
                _ = try await store.dispatch(CompleteTodo(id: todo.id))
              }
            }
          }
        }
        try await group.waitForAll()
      }
      let finalState = store.state
      await backend.database.close()
      await store.shutdown()

      #expect(finalState.todos.count == 16 * 25)
      #expect(finalState.todos.values.filter(\.completed).count == 16 * 13)
      #expect(finalState.sequence == Int64(16 * 25 + 16 * 13))
      let restored = try await SQLiteTodoDatabase(path: path).loadState()
      let restoredEqualsServed = restored == finalState
      #expect(restoredEqualsServed, "the database loads to a different state (contents or order)")
    }
  }

  @Test func change_afterClose_isRefusedBeforeTouchingDatabaseOrState() async throws {
    try await withDatabasePath { path in
      let backend = try TodoBackend.sqlite(path: path, logger: quietLogger())
      let store = backend.store
      let todo = try await store.dispatch(CreateTodo(title: "before close"))
      let databaseBefore = try databaseState(at: path)
      await backend.database.close()

      await #expect(throws: TodoDatabaseError.closed) { try await store.dispatch(CompleteTodo(id: todo.id)) }
      await #expect(throws: TodoDatabaseError.closed) { try await store.dispatch(CreateTodo(title: "after close")) }

      #expect(Array(store.state.todos.values) == [todo])
      #expect(try databaseState(at: path) == databaseBefore)
      await store.shutdown()
    }
  }
}
