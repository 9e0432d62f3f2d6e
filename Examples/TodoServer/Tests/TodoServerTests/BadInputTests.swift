import Foundation
import Hummingbird
import HummingbirdTesting
import Katana
import OrderedCollections
import Testing
import TodoServer

/// A request the API must refuse, and how.
struct BadRequest: Sendable, CustomTestStringConvertible {
  let name: String
  let method: HTTPRequest.Method
  /// The path; `{id}` is replaced by the id of a to-do that exists, `{unknown}` by one that does not.
  let path: String
  let body: String?
  let status: HTTPResponse.Status
  let code: String

  var testDescription: String { name }

  static let all: [BadRequest] = [
    .init(
      name: "malformed JSON", method: .post, path: "/todos", body: #"{"title": "milk""#, status: .badRequest,
      code: "malformedBody"),
    .init(name: "empty body", method: .post, path: "/todos", body: nil, status: .badRequest, code: "malformedBody"),
    .init(
      name: "JSON that is not an object", method: .post, path: "/todos", body: #"["milk"]"#, status: .badRequest,
      code: "malformedBody"),
    .init(
      name: "missing title", method: .post, path: "/todos", body: #"{"name": "milk"}"#, status: .badRequest,
      code: "malformedBody"),
    .init(
      name: "title of the wrong type", method: .post, path: "/todos", body: #"{"title": 42}"#,
      status: .badRequest, code: "malformedBody"),
    .init(
      name: "null title", method: .post, path: "/todos", body: #"{"title": null}"#, status: .badRequest,
      code: "malformedBody"),
    .init(
      name: "blank title", method: .post, path: "/todos", body: #"{"title": " \n\t "}"#,
      status: .unprocessableContent, code: "invalidTitle"),
    .init(
      name: "title too long", method: .post, path: "/todos",
      body: #"{"title": "\#(String(repeating: "x", count: Todo.maximumTitleLength + 1))"}"#,
      status: .unprocessableContent, code: "invalidTitle"),
    .init(
      name: "title with a control character", method: .post, path: "/todos", body: #"{"title": "milk\u0007"}"#,
      status: .unprocessableContent, code: "invalidTitle"),
    .init(
      name: "oversized body", method: .post, path: "/todos",
      body: #"{"title": "milk", "padding": "\#(String(repeating: "x", count: 17 * 1024))"}"#,
      status: .contentTooLarge, code: "bodyTooLarge"),
    .init(
      name: "complete an unknown id", method: .post, path: "/todos/{unknown}/complete", body: nil,
      status: .notFound, code: "notFound"),
    .init(
      name: "delete an unknown id", method: .delete, path: "/todos/{unknown}", body: nil, status: .notFound,
      code: "notFound"),
    .init(
      name: "show an unknown id", method: .get, path: "/todos/{unknown}", body: nil, status: .notFound,
      code: "notFound"),
    .init(
      name: "complete a malformed id", method: .post, path: "/todos/42/complete", body: nil, status: .badRequest,
      code: "invalidID"),
    .init(
      name: "delete a malformed id", method: .delete, path: "/todos/not-an-id", body: nil, status: .badRequest,
      code: "invalidID"),
    .init(
      name: "unknown route", method: .post, path: "/todos/{id}/archive", body: nil, status: .notFound,
      code: "noSuchRoute"),
    .init(
      name: "unsupported method on a to-do", method: .put, path: "/todos/{id}", body: #"{"title": "milk"}"#,
      status: .methodNotAllowed, code: "methodNotAllowed"),
    .init(
      name: "unsupported method on the list", method: .delete, path: "/todos", body: nil,
      status: .methodNotAllowed, code: "methodNotAllowed"),
    .init(
      name: "path longer than the limit", method: .get, path: "/todos/" + String(repeating: "x", count: 9 * 1024),
      body: nil, status: .requestHeaderFieldsTooLarge, code: "requestTooLarge"),
  ]
}

/// Every kind of bad input gets a clear 4xx with a JSON error body, and changes neither the state nor the
/// database.
@Suite("Bad input", .timeLimit(.minutes(1)))
struct BadInputTests {
  @Test(arguments: BadRequest.all)
  func badRequest_isRefusedWithJSONErrorAndChangesNothing(_ bad: BadRequest) async throws {
    try await withDatabasePath { databasePath in
      try await withLiveServer(databasePath: databasePath) { server in
        let existing = try await server.client.createTodo("existing")
        let stateBefore = server.store.state
        let databaseBefore = try databaseState(at: databasePath)
        let path = bad.path
          .replacingOccurrences(of: "{id}", with: existing.id.uuidString)
          .replacingOccurrences(of: "{unknown}", with: UUID().uuidString)

        let response = try await server.client.execute(
          uri: path, method: bad.method, body: bad.body.map { .json($0) })

        #expect(response.status == bad.status)
        #expect(response.errorCode == bad.code, "body: \(String(buffer: response.body))")
        #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
        #expect(server.store.state == stateBefore)
        #expect(try databaseState(at: databasePath) == databaseBefore)
      }
    }
  }

  @Test func errorMessage_namesTheWrongFieldAndItsJSONKind() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let response = try await server.client.execute(
          uri: "/todos", method: .post, body: .json(#"{"title": 42}"#))

        #expect(response.apiError?.message == "The `title` field must be a string.")
      }
    }
  }

  @Test func arrayBody_isRefusedWithoutSwiftTypeNames() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let response = try await server.client.execute(uri: "/todos", method: .post, body: .json(#"["milk"]"#))

        #expect(response.apiError?.message == "The body must be an object.")
        #expect(!String(buffer: response.body).contains("Dictionary"))
      }
    }
  }

  @Test func knownPathWithWrongMethod_answers405WithAllowHeader() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let todo = try await server.client.createTodo("exists")

        let onList = try await server.client.execute(uri: "/todos", method: .patch)
        let onTodo = try await server.client.execute(uri: "/todos/\(todo.id)", method: .post)
        let onComplete = try await server.client.execute(uri: "/todos/\(todo.id)/complete", method: .get)

        #expect(onList.status == .methodNotAllowed)
        #expect(onList.headers[.allow] == "GET, HEAD, POST")
        #expect(onTodo.headers[.allow] == "GET, HEAD, DELETE")
        #expect(onComplete.headers[.allow] == "POST")
        #expect(onComplete.errorCode == "methodNotAllowed")
      }
    }
  }

  @Test func oversizedHeader_getsTheJSONErrorShape() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let response = try await server.client.execute(
          uri: "/todos", method: .get, headers: [.init("X-Padding")!: String(repeating: "x", count: 9 * 1024)])

        #expect(response.status == .requestHeaderFieldsTooLarge)
        #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
        #expect(response.errorCode == "requestTooLarge")
      }
    }
  }

  @Test func unknownPath_echoesAtMostAHundredCharactersOfIt() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let response = try await server.client.execute(
          uri: "/" + String(repeating: "y", count: 4000), method: .get)

        #expect(response.errorCode == "noSuchRoute")
        #expect((response.apiError?.message.count ?? .max) < 200)
      }
    }
  }
}
