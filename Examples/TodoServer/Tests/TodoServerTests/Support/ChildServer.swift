import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The `todo-server` executable, running as a child process.
final class ChildServer: Sendable {
  let process: Process
  let port: Int
  private let exit: NIOLockedValueBox<ExitState>
  /// Every line the server has logged so far.
  private let lines: NIOLockedValueBox<[String]>

  private enum ExitState {
    case running([CheckedContinuation<Int32, Never>])
    case exited(Int32)
  }

  private init(process: Process, port: Int, exit: NIOLockedValueBox<ExitState>, lines: NIOLockedValueBox<[String]>) {
    self.process = process
    self.port = port
    self.exit = exit
    self.lines = lines
  }

  /// Starts the server on SQLite in the file at `databasePath`; see ``start(environment:)``.
  static func start(databasePath: String) async throws -> ChildServer {
    try await start(environment: ["TODO_DATABASE": databasePath])
  }

  /// Starts the server on PostgreSQL at `databaseURL`; see ``start(environment:)``.
  static func start(databaseURL: String, environment: [String: String] = [:]) async throws -> ChildServer {
    try await start(environment: environment.merging(["DATABASE_URL": databaseURL]) { _, url in url })
  }

  /// Starts the server on a free loopback port, with `settings` added to this process's environment (SQLite
  /// unless they set `DATABASE_URL`), and returns once it listens (at most 60 s).
  static func start(environment settings: [String: String]) async throws -> ChildServer {
    let process = Process()
    process.executableURL = try executableURL()
    var environment = ProcessInfo.processInfo.environment
    environment["TODO_PORT"] = "0"
    environment["LOG_LEVEL"] = "info"
    environment["DATABASE_URL"] = nil
    environment.merge(settings) { _, setting in setting }
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output

    // Hummingbird logs "Server started and listening on 127.0.0.1:PORT"; read it, then keep draining the pipe.
    let (lines, linesContinuation) = AsyncStream.makeStream(of: String.self)
    let buffer = NIOLockedValueBox("")
    let log = NIOLockedValueBox<[String]>([])
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
      log.withLockedValue { $0 += complete }
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
    return ChildServer(process: process, port: port, exit: exit, lines: log)
  }

  /// Every line the server has logged so far.
  var log: [String] { lines.withLockedValue { $0 } }

  /// Sends SIGKILL, if the process is still running.
  func sigkill() {
    if process.isRunning { _ = kill(process.processIdentifier, SIGKILL) }
  }

  /// Sends SIGTERM (graceful shutdown), if the process is still running.
  func sigterm() {
    if process.isRunning { _ = kill(process.processIdentifier, SIGTERM) }
  }

  /// Waits (at most `limit`) for the process to exit, and returns the signal that ended it (-1 for a normal
  /// exit).
  func waitForExit(within limit: Duration = .seconds(30)) async throws -> Int32 {
    try await withFailsafe(limit, "todo-server to exit") { [exit] in
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
