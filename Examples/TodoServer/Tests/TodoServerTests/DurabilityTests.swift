import Foundation
import Hummingbird
import HummingbirdTesting
import Katana
import NIOConcurrencyHelpers
import NIOCore
import OrderedCollections
import Testing
import TodoServer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A crash loses no acknowledged change: the real server, as a child process, killed with SIGKILL under load.
@Suite("Durability", .timeLimit(.minutes(2)))
struct DurabilityTests {
  static let connections = 32
  /// The most creates sent in all; the kill comes long before.
  static let maximumCreates = 2_000
  /// The kill comes once this many creates have been acknowledged.
  static let acknowledgedBeforeKill = 300

  @Test func sigkillDuringCreates_loseNoAcknowledgedCreate_andLeaveASoundDatabase() async throws {
    try await withDatabasePath { path in
      let server = try await ChildServer.start(databasePath: path)
      // Whatever happens below, the child does not outlive the test.
      defer { server.sigkill() }
      let acknowledged = NIOLockedValueBox<[UUID]>([])
      let sent = NIOLockedValueBox(0)

      // Creates from many connections until the server dies (or the bound is reached); SIGKILL once enough
      // were acknowledged. Requests in flight at the kill fail: only 2xx responses count.
      try await withThrowingTaskGroup(of: Void.self) { group in
        for connection in 0..<Self.connections {
          group.addTask {
            try? await TestClient.withClient(host: "127.0.0.1", port: server.port) { client in
              while sent.withLockedValue({ sent in
                sent += 1
                return sent <= Self.maximumCreates
              }) {
                let response = try await client.post(
                  "/todos", body: ByteBuffer(string: #"{"title": "connection \#(connection)"}"#))
                guard response.status == .created, let body = response.body else { continue }
                let todo = try JSONDecoder().decode(Todo.self, from: Data(body.readableBytesView))
                let count = acknowledged.withLockedValue { acknowledged in
                  acknowledged.append(todo.id)
                  return acknowledged.count
                }
                if count == Self.acknowledgedBeforeKill { server.sigkill() }
              }
            }
          }
        }
        try await group.waitForAll()
      }
      let status = try await server.waitForExit()

      let ids = acknowledged.withLockedValue { $0 }
      #expect(status == SIGKILL, "the server was expected to die of SIGKILL")
      #expect(ids.count >= Self.acknowledgedBeforeKill)
      #expect(sent.withLockedValue { $0 } <= Self.maximumCreates + Self.connections)
      #expect(try integrityCheck(at: path) == ["ok"])
      let stored = try databaseState(at: path)
      let missing = Set(ids).subtracting(stored.todos.keys)
      #expect(missing.isEmpty, "\(missing.count) acknowledged creates are missing after the crash")
      // The database may hold more (committed, but the response was lost with the process), never fewer.
      #expect(stored.sequence == Int64(stored.todos.count))

      // A new server starts from it and serves every acknowledged to-do.
      try await withLiveServer(databasePath: path) { server in
        #expect(server.store.state == stored)
      }
    }
  }
}

/// The `todo-server` executable, running as a child process on SQLite.
final class ChildServer: Sendable {
  let process: Process
  let port: Int
  private let exit: NIOLockedValueBox<ExitState>

  private enum ExitState {
    case running([CheckedContinuation<Int32, Never>])
    case exited(Int32)
  }

  private init(process: Process, port: Int, exit: NIOLockedValueBox<ExitState>) {
    self.process = process
    self.port = port
    self.exit = exit
  }

  /// Starts the server on a free loopback port and returns once it listens (at most 60 s).
  static func start(databasePath: String) async throws -> ChildServer {
    let process = Process()
    process.executableURL = try executableURL()
    var environment = ProcessInfo.processInfo.environment
    environment["TODO_DATABASE"] = databasePath
    environment["TODO_PORT"] = "0"
    environment["LOG_LEVEL"] = "info"
    environment["DATABASE_URL"] = nil
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output

    // Hummingbird logs "Server started and listening on 127.0.0.1:PORT"; read it, then keep draining the pipe.
    let (lines, linesContinuation) = AsyncStream.makeStream(of: String.self)
    let buffer = NIOLockedValueBox("")
    output.fileHandleForReading.readabilityHandler = { handle in
      let data = handle.availableData
      if data.isEmpty {
        handle.readabilityHandler = nil
        linesContinuation.finish()
        return
      }
      let complete: [String] = buffer.withLockedValue { buffer in
        buffer += String(decoding: data, as: UTF8.self)
        var lines = buffer.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        buffer = lines.removeLast()
        return lines
      }
      for line in complete { linesContinuation.yield(line) }
    }
    let exit = NIOLockedValueBox(ExitState.running([]))
    process.terminationHandler = { process in
      let status = process.terminationReason == .uncaughtSignal ? process.terminationStatus : -1
      let waiters: [CheckedContinuation<Int32, Never>] = exit.withLockedValue { exit in
        guard case .running(let waiters) = exit else { return [] }
        exit = .exited(status)
        return waiters
      }
      for waiter in waiters { waiter.resume(returning: status) }
    }
    try process.run()

    let port = try await withFailsafe(.seconds(60), "todo-server to listen") { () -> Int? in
      for await line in lines where line.contains("listening on") {
        return line.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
      }
      return nil
    }
    guard let port else {
      process.terminate()
      throw ChildServerError.noPort
    }
    return ChildServer(process: process, port: port, exit: exit)
  }

  /// Sends SIGKILL, if the process is still running.
  func sigkill() {
    if process.isRunning { _ = kill(process.processIdentifier, SIGKILL) }
  }

  /// Waits (at most 30 s) for the process to exit, and returns the signal that ended it (-1 for a normal exit).
  func waitForExit() async throws -> Int32 {
    try await withFailsafe(.seconds(30), "todo-server to exit") { [exit] in
      await withCheckedContinuation { continuation in
        let status: Int32? = exit.withLockedValue { exit in
          switch exit {
          case .exited(let status): return status
          case .running(let waiters):
            exit = .running(waiters + [continuation])
            return nil
          }
        }
        if let status { continuation.resume(returning: status) }
      }
    }
  }

  /// The `todo-server` executable that `swift build` put next to the test bundle.
  private static func executableURL() throws -> URL {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
      let candidate = directory.appendingPathComponent("todo-server")
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
      directory.deleteLastPathComponent()
    }
    throw ChildServerError.executableNotFound(near: CommandLine.arguments[0])
  }
}

/// Why the child server could not be used.
enum ChildServerError: Error, CustomStringConvertible {
  case executableNotFound(near: String)
  case noPort

  var description: String {
    switch self {
    case .executableNotFound(let path):
      "The todo-server executable is not next to the tests (\(path)); build it with `swift build`."
    case .noPort: "todo-server exited before saying which port it listens on."
    }
  }
}
