import Foundation
import Hummingbird
import Katana
import Logging
import NIOCore
import NIOHTTP1

/// An error response of the API: a status, and a JSON body `{"error": {"code": "…", "message": "…"}}`.
///
/// `code` is stable and meant for programs; `message` is for people and says what to do.
struct APIError: Error, HTTPResponseError {
  let status: HTTPResponse.Status
  let code: String
  let message: String
  /// Headers the response needs besides `Content-Type` (`Allow` for a 405).
  let headers: HTTPFields

  init(_ status: HTTPResponse.Status, code: String, message: String, headers: HTTPFields = [:]) {
    self.status = status
    self.code = code
    self.message = message
    self.headers = headers
  }

  /// The JSON body.
  private struct Body: Encodable {
    struct Detail: Encodable {
      let code: String
      let message: String
    }
    let error: Detail
  }

  func response(from request: Request, context: some RequestContext) throws -> Response {
    var headers = headers
    headers[.contentType] = "application/json; charset=utf-8"
    return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try jsonBody())))
  }

  /// The JSON body, `{"error": {"code": "…", "message": "…"}}`.
  func jsonBody() throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(Body(error: .init(code: code, message: message)))
  }
}

extension APIError {
  /// The response for any error a handler throws. Errors that are not the client's fault become a 500 whose
  /// message reveals nothing; the caller logs them.
  init(_ error: any Error, request: Request, context: some RequestContext) {
    switch error {
    case let error as APIError:
      self = error
    case let error as TodoError:
      switch error {
      case .invalidTitle(let reason): self.init(.unprocessableContent, code: "invalidTitle", message: reason)
      case .notFound: self.init(.notFound, code: "notFound", message: error.description)
      }
    case is NIOTooManyBytesError:
      self.init(
        .contentTooLarge, code: "bodyTooLarge",
        message: "The body is larger than \(context.maxUploadSize) bytes.")
    case is CancellationError:
      self.init(.serviceUnavailable, code: "cancelled", message: "The request was cancelled; nothing was changed.")
    case TodoDatabaseError.closed, StoreError.storeShutDown:
      self.init(
        .serviceUnavailable, code: "unavailable", message: "The server is shutting down; retry later.",
        headers: [.retryAfter: "1"])
    case TodoDatabaseError.unavailable(let reason):
      self.init(
        .serviceUnavailable, code: "databaseUnavailable", message: TodoDatabaseError.unavailable(reason).description,
        headers: [.retryAfter: "\(Self.retryAfterSeconds)"])
    case TodoDatabaseError.outcomeUnknown(let todoID):
      // No Retry-After: repeating a create blindly could make a duplicate. The client reads the to-do back.
      self.init(
        .gatewayTimeout, code: "outcomeUnknown", message: TodoDatabaseError.outcomeUnknown(todoID: todoID).description)
    case HTTPParserError.invalidEOFState:
      // The client closed the connection in the middle of its body: its fault, and nobody reads this answer.
      self.init(
        .badRequest, code: "truncatedBody", message: "The body ended before the length the request announced.")
    case TodoDatabaseError.notApplied(let sequence):
      self.init(
        .serviceUnavailable, code: "notYetApplied", message: TodoDatabaseError.notApplied(sequence).description)
    case let error as HTTPError where error.status == .notFound:
      let path = request.uri.path
      let allowed = TodoAPI.allowedMethods(forPath: path)
      if allowed.isEmpty {
        self.init(
          .notFound, code: "noSuchRoute", message: "No endpoint for \(request.method) \(Self.shortened(path)).")
      } else {
        let list = allowed.map(\.rawValue).joined(separator: ", ")
        self.init(
          .methodNotAllowed, code: "methodNotAllowed",
          message: "\(Self.shortened(path)) does not take \(request.method); it takes \(list).",
          headers: [.allow: list])
      }
    case let error as HTTPError:
      self.init(error.status, code: "httpError", message: error.body ?? error.status.reasonPhrase)
    default:
      self.init(.internalServerError, code: "internal", message: "The server failed to handle the request.")
    }
  }

  /// What `Retry-After` says when the database is unavailable: about how long the change feed takes to
  /// reconnect once the database is back (its delay grows to 2 s).
  static let retryAfterSeconds = 2

  /// `path`, cut to a length fit for a message.
  private static func shortened(_ path: String) -> String {
    path.count <= 100 ? path : path.prefix(100) + "…"
  }

  /// A 400 for a body that does not decode, saying which field is wrong.
  static func malformedBody(_ error: DecodingError) -> APIError {
    func path(_ codingPath: [any CodingKey]) -> String {
      codingPath.isEmpty ? "body" : "`" + codingPath.map(\.stringValue).joined(separator: ".") + "` field"
    }
    let message =
      switch error {
      case .dataCorrupted(let context) where context.codingPath.isEmpty:
        "The body is not valid JSON."
      case .dataCorrupted(let context):
        "The \(path(context.codingPath)) is invalid: \(context.debugDescription)"
      case .keyNotFound(let key, let context):
        "The \(path(context.codingPath + [key])) is missing."
      case .typeMismatch(let type, let context):
        "The \(path(context.codingPath)) must be \(jsonKind(type))."
      case .valueNotFound(let type, let context):
        "The \(path(context.codingPath)) must be \(jsonKind(type)), not null."
      @unknown default:
        "The body does not match the expected JSON."
      }
    return APIError(.badRequest, code: "malformedBody", message: message)
  }

  /// The JSON kind a decoder expected, in JSON's words (a client never needs Swift's type names).
  private static func jsonKind(_ type: Any.Type) -> String {
    // JSONDecoder reports a container it could not open as `[String: Any]` or `[Any]`.
    if type == [String: Any].self { return "an object" }
    if type == [Any].self { return "an array" }
    switch type {
    case is String.Type, is UUID.Type: return "a string"
    case is Bool.Type: return "a boolean"
    case is any BinaryInteger.Type, is any BinaryFloatingPoint.Type, is Decimal.Type: return "a number"
    default: return "a value of another kind"
    }
  }

  /// A 400 for a path segment that is not a to-do id.
  static func invalidID(_ text: String) -> APIError {
    APIError(.badRequest, code: "invalidID", message: "'\(text)' is not a to-do id; ids are UUIDs.")
  }
}

/// Turns every error thrown below it into an ``APIError`` response, so every error the API returns has the
/// same JSON shape, including Hummingbird's own (unknown route, body too large).
struct APIErrorMiddleware<Context: RequestContext>: RouterMiddleware {
  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    do {
      return try await next(request, context)
    } catch {
      let apiError = APIError(error, request: request, context: context)
      if apiError.status == .internalServerError {
        context.logger.error("Request failed: \(String(reflecting: error))")
      } else if apiError.code == "truncatedBody" {
        context.logger.info("Request body cut off by the client; closing the connection")
      }
      return try apiError.response(from: request, context: context)
    }
  }
}
