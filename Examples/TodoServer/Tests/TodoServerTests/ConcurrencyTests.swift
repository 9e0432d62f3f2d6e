import Foundation
import Hummingbird
import HummingbirdTesting
import Katana
import OrderedCollections
import Testing
import TodoServer

/// Requests that race on the same to-dos: whatever the interleaving, each change is validated against the
/// state its predecessors left, and the journal and the state agree.
@Suite("Concurrent changes", .timeLimit(.minutes(1)))
struct ConcurrencyTests {
  /// The outcome of one racing request.
  enum Outcome: Sendable, Equatable {
    case completed
    case deleted
    case notFound
  }

  @Test func racingCompletesAndDeletes_onTheSameTodos_keepJournalAndStateInAgreement() async throws {
    let todoCount = 50
    let completesPerTodo = 4
    let deletesPerTodo = 3
    try await withJournalURL { url in
      let store = makeTodoStore(journal: TodoJournal(fileURL: url))
      var ids: [UUID] = []
      for index in 0..<todoCount {
        ids.append(try await store.dispatch(CreateTodo(title: "todo \(index)")).id)
      }

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
      await store.dependencies.close()
      await store.shutdown()

      let changes = try journalChanges(at: url)
      for id in ids {
        // Exactly one delete wins; every request after it finds nothing.
        #expect(outcomes[id]?.filter { $0 == .deleted }.count == 1)
        let changesOfID = changes.filter { $0.id == id }
        #expect(changesOfID.filter { $0 == .deleted(id: id) }.count == 1)
        // Completing is written at most once, and never after the delete.
        #expect(changesOfID.filter { $0 == .completed(id: id) }.count <= 1)
        #expect(changesOfID.last == .deleted(id: id))
      }
      #expect(finalState.todos.isEmpty)
      #expect(try restoredState(from: url).todos.isEmpty)
    }
  }

  @Test func racingRequests_overHTTP_oneDeleteWinsPerTodoAndNothingFollowsIt() async throws {
    let todoCount = 8
    let requestsPerTodo = 8
    try await withJournalURL { url in
      let (outcomes, todos) = try await withLiveServer(journalURL: url) { server in
        var todos: [Todo] = []
        for index in 0..<todoCount {
          todos.append(try await server.client.createTodo("contested \(index)"))
        }
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
        return (outcomes, todos)
      }

      let changes = try journalChanges(at: url)
      #expect(outcomes.allSatisfy { [.ok, .noContent, .notFound].contains($0.2) })
      for todo in todos {
        #expect(outcomes.filter { $0.0 == todo.id && $0.1 == .delete && $0.2 == .noContent }.count == 1)
        let changesOfTodo = changes.filter { $0.id == todo.id }
        #expect(changesOfTodo.filter { $0 == .deleted(id: todo.id) }.count == 1)
        #expect(changesOfTodo.filter { $0 == .completed(id: todo.id) }.count <= 1)
        #expect(changesOfTodo.last == .deleted(id: todo.id))
      }
    }
  }

  @Test func mixedConcurrentChanges_restoreToTheServedState() async throws {
    try await withJournalURL { url in
      let store = makeTodoStore(journal: TodoJournal(fileURL: url))
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
      await store.dependencies.close()
      await store.shutdown()

      #expect(finalState.todos.count == 16 * 25)
      #expect(finalState.todos.values.filter(\.completed).count == 16 * 13)
      let restoredEqualsServed = try restoredState(from: url) == finalState
      #expect(restoredEqualsServed, "the journal replays to a different state (contents or order)")
    }
  }

  @Test func change_afterClose_isRefusedBeforeTouchingJournalOrState() async throws {
    try await withJournalURL { url in
      let store = makeTodoStore(journal: TodoJournal(fileURL: url))
      let todo = try await store.dispatch(CreateTodo(title: "before close"))
      let journalBefore = try Data(contentsOf: url)
      await store.dependencies.close()

      await #expect(throws: JournalError.notOpen) { try await store.dispatch(CompleteTodo(id: todo.id)) }
      await #expect(throws: JournalError.notOpen) { try await store.dispatch(CreateTodo(title: "after close")) }

      #expect(Array(store.state.todos.values) == [todo])
      #expect(try Data(contentsOf: url) == journalBefore)
      await store.shutdown()
    }
  }
}

extension TodoChange {
  /// The id of the to-do this change is about.
  fileprivate var id: UUID {
    switch self {
    case .created(let todo): todo.id
    case .completed(let id), .deleted(let id): id
    }
  }
}
