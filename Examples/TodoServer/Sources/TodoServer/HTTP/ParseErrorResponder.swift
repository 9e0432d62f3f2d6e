import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request the HTTP parser rejects (a path or header over the limits, broken syntax) with the
/// API's JSON error shape, then closes the connection.
///
/// Hummingbird answers these itself with an empty `400`; this handler sits after the HTTP codec and answers
/// first. It does so only when no response is in progress on the connection (requests that came before the
/// broken one have been answered); otherwise it leaves the error to Hummingbird, so that two responses never
/// interleave.
final class ParseErrorResponder: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPRequestPart
  typealias InboundOut = HTTPRequestPart
  typealias OutboundIn = HTTPResponsePart
  typealias OutboundOut = HTTPResponsePart

  /// The limits the server's HTTP decoder is configured with, for the message.
  let maximumFieldSize: Int
  /// Requests received whose response has not been completely written.
  private var unansweredRequests = 0

  init(maximumFieldSize: Int) {
    self.maximumFieldSize = maximumFieldSize
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    if case .head = unwrapInboundIn(data) { unansweredRequests += 1 }
    context.fireChannelRead(data)
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    if case .end = unwrapOutboundIn(data) { unansweredRequests -= 1 }
    context.write(data, promise: promise)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    guard let parseError = error as? HTTPParserError, unansweredRequests == 0 else {
      context.fireErrorCaught(error)
      return
    }
    let apiError =
      parseError == .headerOverflow
      ? APIError(
        .requestHeaderFieldsTooLarge, code: "requestTooLarge",
        message: "The request's path or one of its headers is longer than \(maximumFieldSize) bytes.")
      : APIError(.badRequest, code: "malformedRequest", message: "The request is not valid HTTP/1.1.")
    let body = (try? apiError.jsonBody()) ?? Data()
    let head = HTTPResponse(
      status: apiError.status,
      headerFields: [
        .contentType: "application/json; charset=utf-8", .contentLength: "\(body.count)", .connection: "close",
      ])
    context.write(wrapOutboundOut(.head(head)), promise: nil)
    context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
    let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
    context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in boundContext.value.close(promise: nil) }
  }
}
