import Foundation
import Hummingbird
import HummingbirdTesting
import Katana
import OrderedCollections
import Testing

@testable import TodoServer

/// Each endpoint, end to end: a real server on loopback, the shared store, and the SQLite file.
@Suite("To-do API", .timeLimit(.minutes(1)))
struct APITests {
  @Test func create_withValidTitle_returns201PersistsAndCommits() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let response = try await server.client.execute(
          uri: "/todos", method: .post, body: .json(#"{"title": "  buy milk  "}"#))

        #expect(response.status == .created)
        let todo = try response.decoded(as: Todo.self)
        #expect(todo.title == "buy milk")
        #expect(!todo.completed)
        #expect(response.headers[.location] == "/todos/\(todo.id)")
        #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
        #expect(server.store.state.todos[todo.id] == todo)
        #expect(server.store.state.sequence == 1)
        #expect(try databaseState(at: path) == server.store.state)
      }
    }
  }

  @Test func list_returnsEveryTodoInCreationOrder() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let empty = try await server.client.execute(uri: "/todos", method: .get)
        #expect(empty.status == .ok)
        #expect(try empty.decoded(as: [Todo].self) == [])

        var created: [Todo] = []
        for title in ["one", "two", "three"] {
          created.append(try await server.client.createTodo(title))
        }

        let response = try await server.client.execute(uri: "/todos", method: .get)
        #expect(response.status == .ok)
        #expect(try response.decoded(as: [Todo].self) == created)
      }
    }
  }

  @Test func show_withKnownID_returnsTheTodo() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        _ = try await server.client.createTodo("first")
        let todo = try await server.client.createTodo("second")

        let response = try await server.client.execute(uri: "/todos/\(todo.id)", method: .get)

        #expect(response.status == .ok)
        #expect(try response.decoded(as: Todo.self) == todo)
      }
    }
  }

  @Test func show_withLowercaseID_findsTheTodo() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let todo = try await server.client.createTodo("case does not matter")

        let response = try await server.client.execute(
          uri: "/todos/\(todo.id.uuidString.lowercased())", method: .get)

        #expect(response.status == .ok)
        #expect(try response.decoded(as: Todo.self) == todo)
      }
    }
  }

  @Test func complete_withKnownID_marksItDoneAndPersists() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let todo = try await server.client.createTodo("water the plants")

        let response = try await server.client.execute(uri: "/todos/\(todo.id)/complete", method: .post)

        #expect(response.status == .ok)
        var done = todo
        done.completed = true
        #expect(try response.decoded(as: Todo.self) == done)
        #expect(server.store.state.todos[todo.id] == done)
        #expect(server.store.state.sequence == 2)
        #expect(try databaseState(at: path) == server.store.state)
      }
    }
  }

  @Test func complete_whenAlreadyDone_returnsItAndWritesNothing() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let todo = try await server.client.createTodo("once is enough")
        _ = try await server.client.execute(uri: "/todos/\(todo.id)/complete", method: .post)
        let databaseBefore = try databaseState(at: path)

        let response = try await server.client.execute(uri: "/todos/\(todo.id)/complete", method: .post)

        #expect(response.status == .ok)
        #expect(try response.decoded(as: Todo.self).completed)
        #expect(try databaseState(at: path) == databaseBefore)
        #expect(databaseBefore.sequence == 2)
      }
    }
  }

  @Test func delete_withKnownID_returns204AndRemovesItFromStateAndDatabase() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let kept = try await server.client.createTodo("keep me")
        let deleted = try await server.client.createTodo("delete me")

        let response = try await server.client.execute(uri: "/todos/\(deleted.id)", method: .delete)

        #expect(response.status == .noContent)
        #expect(response.body.readableBytes == 0)
        #expect(Array(server.store.state.todos.values) == [kept])
        let show = try await server.client.execute(uri: "/todos/\(deleted.id)", method: .get)
        #expect(show.status == .notFound)
        #expect(try databaseState(at: path) == TodoState(todos: [kept], sequence: 3))
      }
    }
  }

  @Test(arguments: TodoAPI.routes.map { RouteCase(method: $0.method, path: $0.path) })
  func everyListedRoute_isServed(_ route: RouteCase) async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let todo = try await server.client.createTodo("exists")
        let response = try await server.client.execute(
          uri: route.path.replacingOccurrences(of: ":id", with: todo.id.uuidString), method: route.method,
          body: route.method == .post ? .json(#"{"title": "new"}"#) : nil)

        #expect(![.notFound, .methodNotAllowed].contains(response.status), "\(String(buffer: response.body))")
      }
    }
  }
}

/// A route of ``TodoAPI/routes``, as a test argument.
struct RouteCase: Sendable, CustomTestStringConvertible {
  let method: HTTPRequest.Method
  let path: String

  var testDescription: String { "\(method) \(path)" }
}
