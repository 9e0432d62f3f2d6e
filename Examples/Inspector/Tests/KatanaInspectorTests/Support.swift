import Foundation
import HTTPTypes
import HummingbirdWSClient
import Katana
import Logging
import NIOCore
import NIOWebSocket
import Testing
import WSCore

@testable import KatanaInspector

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The tests' state: a running total and the amounts added, in order.
struct TotalState: State, Codable, Equatable {
  var total = 0
  var amounts: [Int] = []
}

struct Add: StateUpdater, Codable {
  let amount: Int
  func updateState(_ state: inout TotalState) {
    state.total += amount
    state.amounts.append(amount)
  }
}

/// An updater that is not `Encodable`: the inspector shows its description.
struct Reset: StateUpdater {
  let reason: String
  func updateState(_ state: inout TotalState) {
    state = TotalState()
  }
}

struct Fail: Error {}

/// A side effect that adds and then throws.
struct AddThenFail: SideEffect {
  func sideEffect(_ context: SideEffectContext<TotalState, EmptySideEffectDependencyContainer>) async throws {
    try await context.dispatch(Add(amount: 100))
    throw Fail()
  }
}

typealias TotalStore = Store<TotalState, EmptySideEffectDependencyContainer>

/// One server message, as the tests read it.
struct Message: Decodable {
  struct Item: Decodable {
    let kind: String
    let id: Int
    let type: String
    let scope: String?
    let cause: Int?
    let outcome: String?
    let duration: Int64?
    let update: Bool
  }

  let type: String
  let items: [Item]?
  let dropped: Int?
  let last: Int?
  let live: Bool?
  let sequence: Int?
  let message: String?
  let state: TotalState?
  let previous: TotalState?
  let reason: String?
  let payload: Payload?
  let skipped: [Int]?
  let refused: Int?
  let answer: Int?
  let answers: Int?
  let canTravel: Bool?
  let canExport: Bool?
  let source: String?

  /// A commit's updater, as the state reply gives it.
  struct Payload: Decodable {
    let form: String
    let value: Value
  }

  /// The payload's value: the updater's fields, or its description.
  enum Value: Decodable, Equatable {
    case fields([String: Int])
    case description(String)

    init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      if let text = try? container.decode(String.self) {
        self = .description(text)
      } else {
        self = .fields(try container.decode([String: Int].self))
      }
    }
  }
}

/// The page's end of a connection, for a test to converse with.
struct PageEnd {
  var messages: WebSocketInboundMessageStream.AsyncIterator
  let outbound: WebSocketOutboundWriter

  /// The next message; fails the test if the connection closes first.
  mutating func next() async throws -> Message {
    while let message = try await messages.next() {
      guard case .text(let text) = message else { continue }
      return try JSONDecoder().decode(Message.self, from: Data(text.utf8))
    }
    throw ConnectionClosed()
  }

  /// The next message of `type`, skipping others (batches, while waiting for a reply).
  mutating func next(_ type: String) async throws -> Message {
    while true {
      let message = try await next()
      if message.type == type { return message }
    }
  }

  func send(_ text: String) async throws {
    try await outbound.write(.text(text))
  }

  func sendBinary(_ bytes: [UInt8]) async throws {
    try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
  }

  /// Reads the first message, which must be the server's greeting.
  mutating func expectHello() async throws {
    let hello = try await next()
    #expect(hello.type == "hello")
  }
}

struct ConnectionClosed: Error {}
struct TimedOut: Error {}

/// Connects to `inspector`'s event stream as a page and runs `body` with its end; bounded by a failsafe.
/// `query` nil passes the inspector's own token, as its page does.
func converse(
  with inspector: Inspector, headers: [String: String] = [:], query: String? = nil,
  _ body: @escaping @Sendable (inout PageEnd) async throws -> Void
) async throws {
  let query = query ?? "?token=\(inspector.token)"
  var fields = HTTPFields()
  for (name, value) in headers {
    fields[HTTPField.Name(name)!] = value
  }
  // A batch of 2,000 items is one frame of a few hundred kilobytes (browsers take any size).
  let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 24, additionalHeaders: fields)
  try await withFailsafe {
    try await WebSocketClient.connect(
      url: "ws://127.0.0.1:\(inspector.port)/events\(query)", configuration: configuration,
      logger: Logger(label: "test-page")
    ) { inbound, outbound, _ in
      var page = PageEnd(messages: inbound.messages(maxSize: 1 << 24).makeAsyncIterator(), outbound: outbound)
      try await body(&page)
      try await outbound.close(.normalClosure, reason: nil)
    }
  }
}

/// Runs `body`, failing with ``TimedOut`` if it takes longer than `limit` (a bound against hangs, not a wait).
func withFailsafe(_ limit: Duration = .seconds(60), _ body: @escaping @Sendable () async throws -> Void) async throws {
  try await withThrowingTaskGroup(of: Bool.self) { group in
    group.addTask {
      try await body()
      return true
    }
    group.addTask {
      try await Task.sleep(for: limit)
      return false
    }
    let finished = try await group.next() ?? false
    group.cancelAll()
    if !finished { throw TimedOut() }
  }
}

/// Sends `request` as it is to 127.0.0.1:`port` over a plain socket and returns the response's status line: for
/// requests a WebSocket client would not send (another Host, another Origin).
func httpStatusLine(port: Int, request: String) async throws -> String {
  try await withCheckedThrowingContinuation { continuation in
    // Blocking socket calls, off the cooperative pool.
    Thread.detachNewThread {
      continuation.resume(with: Result { try blockingStatusLine(port: port, request: request) })
    }
  }
}

struct SocketFailed: Error {
  let call: String
}

private func blockingStatusLine(port: Int, request: String) throws -> String {
  let descriptor = try connectedSocket(port: port)
  defer { close(descriptor) }
  let bytes = Array(request.utf8)
  guard send(descriptor, bytes, bytes.count, 0) == bytes.count else { throw SocketFailed(call: "send") }
  var buffer = [UInt8](repeating: 0, count: 4_096)
  let count = recv(descriptor, &buffer, buffer.count, 0)
  guard count > 0 else { throw SocketFailed(call: "recv") }
  let response = String(decoding: buffer[..<count], as: UTF8.self)
  return String(response.prefix { $0 != "\r" })
}

/// A TCP socket connected to 127.0.0.1:`port`, with a receive timeout of 10 s; the caller closes it.
private func connectedSocket(port: Int) throws -> Int32 {
  let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard descriptor >= 0 else { throw SocketFailed(call: "socket") }
  var timeout = timeval(tv_sec: 10, tv_usec: 0)
  setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = in_port_t(UInt16(port).bigEndian)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  let connected = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  guard connected == 0 else {
    close(descriptor)
    throw SocketFailed(call: "connect")
  }
  return descriptor
}

/// `GET path` on 127.0.0.1:`port` with the connection closed after the response: the status and the body.
func httpGet(port: Int, path: String) async throws -> (status: Int, body: Data) {
  try await withCheckedThrowingContinuation { continuation in
    // Blocking socket calls, off the cooperative pool.
    Thread.detachNewThread {
      continuation.resume(with: Result { try blockingGet(port: port, path: path) })
    }
  }
}

private func blockingGet(port: Int, path: String) throws -> (status: Int, body: Data) {
  let descriptor = try connectedSocket(port: port)
  defer { close(descriptor) }
  let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
  let bytes = Array(request.utf8)
  guard send(descriptor, bytes, bytes.count, 0) == bytes.count else { throw SocketFailed(call: "send") }
  var response: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 65_536)
  while true {
    let count = recv(descriptor, &buffer, buffer.count, 0)
    guard count >= 0 else { throw SocketFailed(call: "recv") }
    if count == 0 { break }
    response += buffer[..<count]
  }
  let separator = Array("\r\n\r\n".utf8)
  guard let end = (0..<max(0, response.count - 3)).first(where: { Array(response[$0..<($0 + 4)]) == separator }) else {
    throw SocketFailed(call: "parse")
  }
  let statusLine = String(decoding: response[..<end], as: UTF8.self).prefix { $0 != "\r" }
  let status = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
  return (status, Data(response[(end + 4)...]))
}

/// A deterministic generator for seeded tests (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) {
    state = seed
  }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var value = state
    value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
    value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
    return value ^ (value >> 31)
  }
}
