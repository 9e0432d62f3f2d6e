import Foundation
import Hummingbird
import Katana
import Logging
import NIOCore

/// An error response of the API: a status, and a JSON body `{"error": {"code": "…", "message": "…"}}`.
///
/// `code` is stable and meant for programs; `message` is for people and says what to do.
struct APIError: Error, HTTPResponseError {
  let status: HTTPResponse.Status
  let code: String
  let message: String

  init(_ status: HTTPResponse.Status, code: String, message: String) {
    self.status = status
    self.code = code
    self.message = message
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
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(Body(error: .init(code: code, message: message)))
    var headers = HTTPFields()
    headers[.contentType] = "application/json; charset=utf-8"
    return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
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
    case JournalError.notOpen, StoreError.storeShutDown:
      self.init(.serviceUnavailable, code: "unavailable", message: "The server is shutting down; retry later.")
    case let error as HTTPError where error.status == .notFound:
      self.init(.notFound, code: "noSuchRoute", message: "No endpoint for \(request.method) \(request.uri.path).")
    case let error as HTTPError:
      self.init(error.status, code: "httpError", message: error.body ?? error.status.reasonPhrase)
    default:
      self.init(.internalServerError, code: "internal", message: "The server failed to handle the request.")
    }
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
        "The \(path(context.codingPath)) must be of type \(type)."
      case .valueNotFound(let type, let context):
        "The \(path(context.codingPath)) must be a \(type), not null."
      @unknown default:
        "The body does not match the expected JSON."
      }
    return APIError(.badRequest, code: "malformedBody", message: message)
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
      }
      return try apiError.response(from: request, context: context)
    }
  }
}
