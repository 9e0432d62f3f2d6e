import Foundation
import Hummingbird
import Katana
import NIOConcurrencyHelpers
import OrderedCollections

/// The JSON API: every handler dispatches to the one store all requests share, or reads its state.
///
/// | Request | Success | Errors |
/// | --- | --- | --- |
/// | `POST /todos` `{"title": "…"}` | 201, the to-do, `Location` | 400, 413, 422 |
/// | `GET /todos` | 200, every to-do, in creation order | |
/// | `GET /todos/{id}` | 200, the to-do | 400, 404 |
/// | `POST /todos/{id}/complete` | 200, the to-do | 400, 404 |
/// | `DELETE /todos/{id}` | 204 | 400, 404 |
/// | `GET /health` | 200 or 503, ``DatabaseHealth`` | |
///
/// `HEAD` is served wherever `GET` is (the router generates it).
struct TodoAPI {
  let store: TodoStore
  let database: any TodoDatabase
  /// Numbers the requests that change something, for their names (``requestName(_:_:)``).
  private let requestCount = NIOLockedValueBox(0)

  func addRoutes(to router: Router<TodoRequestContext>) {
    // Keep in step with `routes` (a test checks that each of them is served).
    router.get("health", use: health)
    router.group("todos")
      .post(use: create)
      .get(use: list)
      .get(":id", use: show)
      .post(":id/complete", use: complete)
      .delete(":id", use: delete)
  }

  /// Every route: its method and its path, `:id` standing for any one segment.
  static let routes: [(method: HTTPRequest.Method, path: String)] = [
    (.get, "/health"),
    (.get, "/todos"),
    (.post, "/todos"),
    (.get, "/todos/:id"),
    (.delete, "/todos/:id"),
    (.post, "/todos/:id/complete"),
  ]

  /// The methods the API takes at `path` (empty if no route has that path), for `405` and its `Allow` header:
  /// `HEAD` follows `GET`.
  static func allowedMethods(forPath path: String) -> [HTTPRequest.Method] {
    let segments = path.split(separator: "/", omittingEmptySubsequences: true)
    return routes.filter { route in
      let pattern = route.path.split(separator: "/")
      return pattern.count == segments.count
        && zip(pattern, segments).allSatisfy { pattern, segment in pattern == ":id" || pattern == segment }
    }.flatMap { $0.method == .get ? [.get, .head] : [$0.method] }
  }

  /// 200 if this instance can reach the database and hears of its changes, 503 if not; the body says how far
  /// behind it is (see ``DatabaseHealth``).
  @Sendable func health(_ request: Request, context: TodoRequestContext) async throws -> EditedResponse<DatabaseHealth>
  {
    let store = store
    let health = await database.health { store.state.sequence }
    return EditedResponse(
      status: health.isServing ? .ok : .serviceUnavailable, headers: [.cacheControl: "no-store"], response: health)
  }

  /// The body of `POST /todos`.
  private struct NewTodo: Decodable {
    let title: String
  }

  @Sendable func create(_ request: Request, context: TodoRequestContext) async throws -> EditedResponse<Todo> {
    let input = try await request.decodeJSON(as: NewTodo.self, context: context)
    let todo = try await store.dispatch(CreateTodo(title: input.title, request: requestName(request)))
    return EditedResponse(status: .created, headers: [.location: "/todos/\(todo.id)"], response: todo)
  }

  @Sendable func list(_ request: Request, context: TodoRequestContext) async throws -> [Todo] {
    // A synchronous read of the latest committed state: no dispatch, no waiting.
    Array(store.state.todos.values)
  }

  @Sendable func show(_ request: Request, context: TodoRequestContext) async throws -> Todo {
    let id = try todoID(context)
    guard let todo = store.state.todos[id] else { throw TodoError.notFound(id) }
    return todo
  }

  @Sendable func complete(_ request: Request, context: TodoRequestContext) async throws -> Todo {
    try await store.dispatch(CompleteTodo(id: todoID(context), request: requestName(request)))
  }

  @Sendable func delete(_ request: Request, context: TodoRequestContext) async throws -> HTTPResponse.Status {
    try await store.dispatch(DeleteTodo(id: todoID(context), request: requestName(request)))
    return .noContent
  }

  /// `"POST /todos #12"`: the request's method and path, and its number among this server's writes. The side
  /// effect it dispatches, and the commit of its change, carry it (the inspector shows it; the audit log keeps it).
  private func requestName(_ request: Request) -> String {
    let number = requestCount.withLockedValue { count in
      count &+= 1
      return count
    }
    return "\(request.method) \(request.uri.path) #\(number)"
  }

  private func todoID(_ context: TodoRequestContext) throws -> UUID {
    let text = context.parameters.get("id") ?? ""
    guard let id = UUID(uuidString: text) else { throw APIError.invalidID(text) }
    return id
  }
}

extension Todo: ResponseEncodable {}

extension DatabaseHealth: ResponseEncodable {}

extension Request {
  /// Reads the body (at most `context.maxUploadSize` bytes, else `NIOTooManyBytesError`) and decodes it as
  /// JSON, throwing ``APIError/malformedBody(_:)`` with a message that names the wrong field.
  fileprivate func decodeJSON<T: Decodable>(as type: T.Type, context: some RequestContext) async throws -> T {
    let body = try await self.body.collect(upTo: context.maxUploadSize)
    do {
      return try JSONDecoder().decode(T.self, from: Data(body.readableBytesView))
    } catch let error as DecodingError {
      throw APIError.malformedBody(error)
    }
  }
}
