import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOPosix
import Testing
import TodoServer

/// Clients that are slow, silent or cut off cannot hold the server's connections, and are not the server's
/// error; `HEAD` is served wherever `GET` is.
@Suite("Slow and broken clients", .timeLimit(.minutes(2)))
struct SlowClientTests {
  /// The idle timeout the child server runs with here (seconds); production's default is 30 s.
  static let idleTimeout = 1.0

  @Test func silentConnections_idleOrHalfSent_areClosedAfterTheIdleTimeout() async throws {
    try await withDatabasePath { path in
      let server = try await ChildServer.start(
        environment: ["TODO_DATABASE": path, "TODO_IDLE_TIMEOUT": "\(Self.idleTimeout)"])
      defer { server.sigkill() }
      let partial = [
        // Connected, nothing sent.
        "",
        // Half the headers.
        "POST /todos HTTP/1.1\r\nHost: localhost\r\nContent-Le",
        // The headers, and half the body.
        "POST /todos HTTP/1.1\r\nHost: localhost\r\nContent-Length: 40\r\n\r\n{\"title\": ",
      ]
      let started = ContinuousClock.now
      try await withThrowingTaskGroup(of: Void.self) { group in
        for text in partial {
          for _ in 0..<3 {
            group.addTask {
              let channel = try await rawConnection(port: server.port)
              if !text.isEmpty { try await channel.writeAndFlush(ByteBuffer(string: text)) }
              // Closed by the server, or the failsafe fails the test (10 idle timeouts).
              try await withFailsafe(.seconds(10), "the server to close a silent connection") {
                try await channel.closeFuture.get()
              }
            }
          }
        }
        try await group.waitForAll()
      }
      let elapsed = seconds(started.duration(to: .now))
      #expect(elapsed >= Self.idleTimeout * 0.9)
      #expect(elapsed < Self.idleTimeout + 4)
    }
  }

  @Test func bodyCutOffByTheClient_isAClientError_loggedBelowErrorLevel() async throws {
    try await withDatabasePath { path in
      let server = try await ChildServer.start(environment: ["TODO_DATABASE": path])
      defer { server.sigkill() }
      for _ in 0..<3 {
        let channel = try await rawConnection(port: server.port)
        try await channel.writeAndFlush(
          ByteBuffer(string: "POST /todos HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{\"title\": "))
        try await channel.close()
      }
      try await withFailsafe(.seconds(10), "the server to log the cut-off bodies") {
        while server.log.filter({ $0.contains("Request body cut off by the client") }).count < 3 {
          try await Task.sleep(for: .milliseconds(20))
        }
      }
      let errors = server.log.filter { $0.contains(" error ") || $0.contains(" critical ") }
      #expect(errors.isEmpty, "\(errors)")
      // Nothing was created, and the server still serves.
      let todos = try await listTodos(port: server.port)
      #expect(todos.isEmpty)
    }
  }

  @Test func head_isServedWhereverGetIs() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        let todo = try await server.client.createTodo("milk")
        for uri in ["/todos", "/todos/\(todo.id)", "/health"] {
          let get = try await server.client.execute(uri: uri, method: .get)
          let head = try await server.client.execute(uri: uri, method: .head)
          #expect(head.status == .ok, "HEAD \(uri)")
          #expect(head.body.readableBytes == 0, "HEAD \(uri) has no body")
          #expect(head.headers[.contentType] == get.headers[.contentType], "HEAD \(uri)")
        }
        let unknown = try await server.client.execute(uri: "/todos/\(UUID())", method: .head)
        #expect(unknown.status == .notFound)
      }
    }
  }

  @Test func health_onSQLite_isCaughtUp() async throws {
    try await withDatabasePath { path in
      try await withLiveServer(databasePath: path) { server in
        _ = try await server.client.createTodo("milk")
        let response = try await server.client.execute(uri: "/health", method: .get)
        #expect(response.status == .ok)
        let report = try response.decoded(as: HealthReport.self)
        #expect(report.status == "caughtUp" && report.applied == 1 && report.database == 1 && report.behind == 0)
      }
    }
  }
}

/// A plain TCP connection to the server on loopback, for sending HTTP by hand.
func rawConnection(port: Int) async throws -> any Channel {
  try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
}
