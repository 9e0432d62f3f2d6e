import Foundation
import NIOConcurrencyHelpers
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A throwaway PostgreSQL cluster of a test's own, which the test may stop, restart and freeze (the shared
/// server of `TODO_TEST_POSTGRES_URL` serves other suites at the same time). Made like `.ci/postgres` makes
/// CI's: `initdb` in a temporary directory, trust authentication on loopback, no fsync.
final class PostgresCluster: Sendable {
  /// PostgreSQL's programs (`initdb`, `pg_ctl`), if installed where Debian puts them.
  static let binDirectory: String? = {
    let root = "/usr/lib/postgresql"
    let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
    guard let newest = versions.compactMap(Int.init).sorted().last else { return nil }
    let bin = "\(root)/\(newest)/bin"
    return FileManager.default.isExecutableFile(atPath: bin + "/pg_ctl") ? bin : nil
  }()

  /// Why the fault-injection tests are skipped without PostgreSQL.
  static let skipReason: Comment = """
    Fault-injection tests skipped: PostgreSQL's programs are not in /usr/lib/postgresql/*/bin. Install them \
    (from the repository's root, `.ci/postgres start` does) to run these tests.
    """

  let directory: String
  let port: Int
  private let bin: String
  /// The running server, as a child process (`runuser` before it when the tests run as root).
  private let server = NIOLockedValueBox<ServerProcess?>(nil)

  /// The URL the server uses.
  var url: String { "postgres://postgres@127.0.0.1:\(port)/postgres" }

  private init(directory: String, port: Int, bin: String) {
    self.directory = directory
    self.port = port
    self.bin = bin
  }

  /// Creates a cluster and starts it on a free loopback port.
  static func start() async throws -> PostgresCluster {
    let bin = try #require(binDirectory, "PostgreSQL is not installed")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "todo-fault-\(UUID().uuidString)"
    ).path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    if getuid() == 0 { try await run("/bin/chown", ["postgres:", directory]) }
    try await runAsOwner(
      "\(bin)/initdb", ["-D", "\(directory)/data", "-U", "postgres", "--auth=trust", "--no-locale", "-E", "UTF8"])
    // A port nothing listens on: a few tries, in case another cluster takes it in between.
    var lastError: (any Error)?
    for _ in 0..<5 {
      let cluster = PostgresCluster(directory: directory, port: Int.random(in: 55_000...59_999), bin: bin)
      do {
        try await cluster.startServer()
        return cluster
      } catch {
        lastError = error
      }
    }
    throw lastError!
  }

  /// Starts the stopped server, and returns once it accepts connections (at most 60 s).
  ///
  /// The server runs in the foreground as a child process, not through `pg_ctl start`: Foundation's `Process`
  /// notices a child's exit only once every process that inherited its descendant's end of a socket has
  /// exited, and a daemon started by `pg_ctl` inherits it and keeps running.
  func startServer() async throws {
    let log = "\(directory)/server-\(UUID().uuidString).log"
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    let process = Process()
    let postgres = [
      "\(bin)/postgres", "-D", "\(directory)/data", "-c", "listen_addresses=127.0.0.1", "-p", "\(port)", "-k",
      directory, "-c", "max_connections=200", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c",
      "full_page_writes=off",
    ]
    if getuid() == 0 {
      process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
      process.arguments = ["-u", "postgres", "--"] + postgres
    } else {
      process.executableURL = URL(fileURLWithPath: postgres[0])
      process.arguments = Array(postgres.dropFirst())
    }
    process.standardOutput = handle
    process.standardError = handle
    let exited = ServerProcess(process)
    try process.run()
    try? handle.close()
    server.withLockedValue { $0 = exited }
    do {
      try await withFailsafe(.seconds(60), "PostgreSQL to accept connections") {
        while true {
          let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
          if text.contains("ready to accept connections") { return }
          if exited.hasExited { throw ClusterError(command: "postgres", output: text) }
          try await Task.sleep(for: .milliseconds(50))
        }
      }
    } catch {
      kill(process.processIdentifier, SIGKILL)
      throw error
    }
  }

  /// Stops the server as `pg_ctl stop -m fast` does (SIGINT): sessions are ended, and the server is down on
  /// return (at most 60 s).
  func stopServer() async throws {
    try await stop(signal: SIGINT)
  }

  private func stop(signal: Int32) async throws {
    guard let running = server.withLockedValue({ $0 }) else { return }
    if let postmaster = postmasterID() { kill(postmaster, signal) }
    try await withFailsafe(.seconds(60), "PostgreSQL to stop") { await running.waitForExit() }
    server.withLockedValue { $0 = nil }
  }

  /// Stops the server if it runs (immediately), and removes the cluster.
  func remove() async {
    thaw()
    try? await stop(signal: SIGQUIT)
    try? FileManager.default.removeItem(atPath: directory)
  }

  private func postmasterID() -> pid_t? {
    guard let text = try? String(contentsOfFile: "\(directory)/data/postmaster.pid", encoding: .utf8) else {
      return nil
    }
    return text.split(separator: "\n").first.flatMap { pid_t($0) }
  }

  /// The server's processes: the postmaster and its children (one backend per connection, and the helpers).
  func processIDs() -> [pid_t] {
    guard let postmaster = postmasterID() else { return [] }
    let children = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap {
      entry -> pid_t? in
      guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
        let end = stat.lastIndex(of: ")")
      else { return nil }
      // After "pid (name) state ", the parent's id.
      let fields = stat[stat.index(after: end)...].split(separator: " ")
      return fields.count > 1 && pid_t(fields[1]) == postmaster ? pid : nil
    }
    return [postmaster] + children
  }

  /// Freezes every process of the server (SIGSTOP): connections stay open and nothing answers, as in a
  /// network partition.
  func freeze() {
    for pid in processIDs() { kill(pid, SIGSTOP) }
  }

  /// Lets a frozen server go on (SIGCONT).
  func thaw() {
    for pid in processIDs() { kill(pid, SIGCONT) }
    // `runuser` stops itself when its child stops, and waits stopped until it is continued too.
    if let runner = server.withLockedValue({ $0?.processIdentifier }) { kill(runner, SIGCONT) }
  }

  private static func runAsOwner(_ program: String, _ arguments: [String]) async throws {
    if getuid() == 0 {
      try await run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
    } else {
      try await run(program, arguments)
    }
  }

  private static func run(_ program: String, _ arguments: [String]) async throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    // A file, not a pipe: nothing has to drain it.
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("todo-cluster-\(UUID().uuidString).log")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: output) }
    let handle = try FileHandle(forWritingTo: output)
    defer { try? handle.close() }
    process.standardOutput = handle
    process.standardError = handle
    // `initdb`, `chown`, `pg_ctl stop`: programs that end by themselves.
    let status = try await exitStatus(of: process)
    guard status == 0 else {
      let message = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
      throw ClusterError(command: ([program] + arguments).joined(separator: " "), output: message)
    }
  }

  /// Runs `process` and returns its exit status.
  private static func exitStatus(of process: Process) async throws -> Int32 {
    try await withCheckedThrowingContinuation { continuation in
      process.terminationHandler = { process in continuation.resume(returning: process.terminationStatus) }
      do {
        try process.run()
      } catch {
        process.terminationHandler = nil
        continuation.resume(throwing: error)
      }
    }
  }
}

/// A child process, and a way to wait for its exit.
/// `@unchecked`: `Process` is not `Sendable`; only its constant process id is read after it starts.
private final class ServerProcess: @unchecked Sendable {
  private let exit = NIOLockedValueBox<(exited: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

  /// The child's process id (`runuser`'s, when the tests run as root), once it runs.
  var processIdentifier: pid_t { process.processIdentifier }
  private let process: Process

  init(_ process: Process) {
    self.process = process
    process.terminationHandler = { [exit] _ in
      let waiters = exit.withLockedValue { state in
        state.exited = true
        defer { state.waiters = [] }
        return state.waiters
      }
      for waiter in waiters { waiter.resume() }
    }
  }

  var hasExited: Bool { exit.withLockedValue { $0.exited } }

  func waitForExit() async {
    await withCheckedContinuation { continuation in
      let exited = exit.withLockedValue { state in
        if !state.exited { state.waiters.append(continuation) }
        return state.exited
      }
      if exited { continuation.resume() }
    }
  }
}

/// A command of ``PostgresCluster`` failed.
struct ClusterError: Error, CustomStringConvertible {
  let command: String
  let output: String

  var description: String { "\(command) failed: \(output)" }
}
