import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import OrderedCollections
import PostgresNIO
import Testing
import TodoServer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The server survives its database: the real `todo-server` as child processes on a PostgreSQL cluster of the
/// test's own, which the tests stop, restart and freeze under load.
@Suite(
  "Database faults", .serialized, .enabled(if: PostgresCluster.binDirectory != nil, PostgresCluster.skipReason),
  .timeLimit(.minutes(5)))
struct FaultTests {
  /// The README's bound on a write: ``PostgresTodoDatabase/Options/writeTimeout`` plus
  /// ``PostgresTodoDatabase/Options/applyTimeout``, with room for a loaded machine.
  static let requestBound = 10.0
  static let slack = 2.0

  /// The outages of ``databaseOutages_underLoad_answerInBound_andBothInstancesConverge()``, in seconds: 12
  /// instance-rounds, enough to see a fault that one instance in three hits.
  static let outages: [Duration] = [.seconds(1), .seconds(1), .seconds(1), .seconds(5), .seconds(5), .seconds(30)]

  @Test func databaseOutages_underLoad_answerInBound_andBothInstancesConverge() async throws {
    try await withCluster { cluster in
      let a = try await ChildServer.start(databaseURL: cluster.url)
      defer { a.sigkill() }
      let b = try await ChildServer.start(databaseURL: cluster.url)
      defer { b.sigkill() }
      var everyOutcome: [Outcome] = []

      for (round, outage) in Self.outages.enumerated() {
        let stop = NIOLockedValueBox(false)
        let outcomes = NIOLockedValueBox<[Outcome]>([])
        let load = Task {
          await runCreateLoad(
            ports: [a.port, b.port], connectionsPerPort: 4, label: "round \(round)", stop: stop, outcomes: outcomes)
        }
        defer { stop.withLockedValue { $0 = true } }
        // Load before the outage, the outage, and load after it until both instances are back.
        try await waitForCreates(outcomes, atLeast: 20, "creates before outage \(round)")
        try await cluster.stopServer()
        try await Task.sleep(for: outage)
        try await cluster.startServer()
        let afterRestart = outcomes.withLockedValue { $0.count }
        for server in [a, b] {
          try await waitForHealth(port: server.port, within: .seconds(30), "instance back after outage \(round)") {
            $0.feedConnected && $0.database != nil
          }
        }
        try await waitForCreates(outcomes, atLeast: afterRestart + 20, "creates after outage \(round)")
        stop.withLockedValue { $0 = true }
        // Bounded: a request stuck on a server that never answers must fail the test, not hang it.
        try await withFailsafe(.seconds(30), "the load to stop") { await load.value }
        let round = outcomes.withLockedValue { $0 }
        everyOutcome += round

        // Both instances equal the table, without a restart.
        try await expectInstancesEqualTheDatabase([a, b], cluster: cluster)
        let slowest = round.map(\.seconds).max() ?? 0
        let refused = round.filter { $0.status == 503 }.count
        print("Outage \(outage): \(round.count) requests, \(refused) answered 503, slowest \(slowest) s")
      }

      // Every request got an answer within the bound: a 201, or a 503/504 with the JSON error shape.
      let unanswered = everyOutcome.filter { $0.status == nil }
      #expect(
        unanswered.isEmpty, "\(unanswered.count) requests got no answer, first: \(unanswered.first?.failure ?? "")")
      let slow = everyOutcome.filter { $0.seconds > Self.requestBound + Self.slack }
      #expect(
        slow.isEmpty, "\(slow.count) requests took longer than the bound, slowest \(slow.map(\.seconds).max() ?? 0) s")
      let unexpected = everyOutcome.filter { outcome in
        guard let status = outcome.status, status != 201 else { return false }
        switch (status, outcome.code) {
        case (503, "databaseUnavailable"): return outcome.retryAfter == nil
        case (503, "notYetApplied"), (504, "outcomeUnknown"): return false
        default: return true
        }
      }
      #expect(
        unexpected.isEmpty,
        "unexpected answers: \(Set(unexpected.map { "\($0.status ?? 0) \($0.code ?? "-")" }))")
      #expect(everyOutcome.contains { $0.code == "databaseUnavailable" }, "no write was refused during an outage")

      // Every acknowledged create is in the database.
      let stored = try await databaseState(DatabaseURL(cluster.url).configuration)
      let acknowledged = Set(everyOutcome.compactMap(\.created))
      let missing = acknowledged.subtracting(stored.todos.keys)
      #expect(missing.isEmpty, "\(missing.count) acknowledged creates are missing")
    }
  }

  /// How the feed's connection is lost.
  enum FeedFault: String, CaseIterable, Sendable {
    /// The server is stopped and started again.
    case serverRestarted
    /// The feed's server process is ended (`pg_terminate_backend`).
    case backendTerminated
    /// The feed's server process is frozen (SIGSTOP), as if the network had cut it off: nothing says so.
    case backendFrozen
  }

  @Test(arguments: FeedFault.allCases)
  func feedConnectionLost_reconnectsAndCatchesUp_withoutARestart(_ fault: FeedFault) async throws {
    try await withCluster { cluster in
      let a = try await ChildServer.start(databaseURL: cluster.url)
      defer { a.sigkill() }
      let b = try await ChildServer.start(databaseURL: cluster.url)
      defer { b.sigkill() }
      try await createAcknowledged(on: a, count: 1)
      let before = try await waitForHealth(port: b.port, within: .seconds(10), "B caught up") {
        $0.status == "caughtUp" && $0.applied == 1 && $0.feedBackendProcessID != nil
      }
      let backend = try #require(before.feedBackendProcessID)

      switch fault {
      case .serverRestarted:
        try await cluster.stopServer()
        try await cluster.startServer()
      case .backendTerminated:
        try await withPostgresClient(DatabaseURL(cluster.url).configuration) { client in
          try await client.query("SELECT pg_terminate_backend(\(backend))")
        }
      case .backendFrozen:
        kill(pid_t(backend), SIGSTOP)
      }
      defer { if fault == .backendFrozen { kill(pid_t(backend), SIGCONT) } }

      try await createAcknowledged(on: a, count: 5)
      let after = try await waitForHealth(port: b.port, within: .seconds(20), "B caught up after \(fault)") {
        $0.status == "caughtUp" && $0.applied >= 6 && $0.feedBackendProcessID != backend
      }
      #expect(after.behind == 0)
      #expect(try await listTodos(port: b.port) == listTodos(port: a.port))
    }
  }

  @Test func writeWhileTheDatabaseIsDown_answers503WithRetryAfter() async throws {
    try await withCluster { cluster in
      let server = try await ChildServer.start(databaseURL: cluster.url)
      defer { server.sigkill() }
      try await createAcknowledged(on: server, count: 1)
      try await cluster.stopServer()

      let started = ContinuousClock.now
      let response = try await TestClient.withClient(host: "127.0.0.1", port: server.port) { client in
        try await client.post("/todos", body: ByteBuffer(string: #"{"title": "during the outage"}"#))
      }
      let outcome = Outcome(response, seconds: seconds(started.duration(to: .now)))
      #expect(outcome.status == 503)
      #expect(outcome.code == "databaseUnavailable")
      #expect(outcome.retryAfter == "2")
      #expect(outcome.seconds <= Self.requestBound + Self.slack)
      let report = try #require(await health(port: server.port))
      #expect(report.status == "databaseUnreachable")

      try await cluster.startServer()
      try await waitForHealth(port: server.port, within: .seconds(20), "back after the outage") {
        $0.status == "caughtUp"
      }
      try await createAcknowledged(on: server, count: 1)
      #expect(!server.log.contains { $0.contains(" error ") }, "an outage is not the server's error")
    }
  }

  @Test func writesOnAFrozenDatabase_answerInBound_andShutdownEndsInBound() async throws {
    try await withCluster { cluster in
      let server = try await ChildServer.start(databaseURL: cluster.url)
      defer { server.sigkill() }
      try await createAcknowledged(on: server, count: 1)
      cluster.freeze()
      defer { cluster.thaw() }

      // Writes sent to a database that no longer answers get an answer in the bound, not never.
      let outcomes = NIOLockedValueBox<[Outcome]>([])
      let stop = NIOLockedValueBox(false)
      let load = Task {
        await runCreateLoad(
          ports: [server.port], connectionsPerPort: 3, label: "frozen", stop: stop, outcomes: outcomes)
      }
      defer { stop.withLockedValue { $0 = true } }
      try await waitForCreates(outcomes, atLeast: 3, "answers from a frozen database")
      // More requests are now stuck on the database: shut down in the middle of them.
      let stopping = ContinuousClock.now
      server.sigterm()
      _ = try await server.waitForExit(within: .seconds(30))
      let shutdown = seconds(stopping.duration(to: .now))
      stop.withLockedValue { $0 = true }
      try await withFailsafe(.seconds(30), "the load to stop") { await load.value }

      let answered = outcomes.withLockedValue { $0 }.filter { $0.status != nil }
      print(
        "Frozen database: \(answered.count) writes answered, slowest \(answered.map(\.seconds).max() ?? 0) s; shutdown \(shutdown) s"
      )
      #expect(answered.count >= 3)
      #expect(answered.allSatisfy { $0.status == 503 && $0.seconds <= Self.requestBound + Self.slack })
      #expect(shutdown <= Self.requestBound + Self.slack, "graceful shutdown took \(shutdown) s")
      #expect(server.log.contains { $0.contains("Database closed and store shut down") })
    }
  }

  // MARK: - Helpers

  private func withCluster(_ body: (PostgresCluster) async throws -> Void) async throws {
    let cluster = try await PostgresCluster.start()
    do {
      try await body(cluster)
    } catch {
      await cluster.remove()
      throw error
    }
    await cluster.remove()
  }

  /// Waits until `outcomes` holds at least `count` answered requests.
  private func waitForCreates(_ outcomes: NIOLockedValueBox<[Outcome]>, atLeast count: Int, _ what: String) async throws
  {
    try await withFailsafe(.seconds(60), what) {
      while outcomes.withLockedValue({ $0.filter { $0.status != nil }.count }) < count {
        try await Task.sleep(for: .milliseconds(20))
      }
    }
  }

  /// Creates `count` to-dos on `server`, retrying 503s (the database may be coming back) for at most 30 s.
  private func createAcknowledged(on server: ChildServer, count: Int) async throws {
    try await withFailsafe(.seconds(30), "\(count) creates acknowledged") {
      try await TestClient.withClient(host: "127.0.0.1", port: server.port) { client in
        var acknowledged = 0
        while acknowledged < count {
          let response = try await client.post("/todos", body: ByteBuffer(string: #"{"title": "probe"}"#))
          if response.status == .created {
            acknowledged += 1
          } else {
            try await Task.sleep(for: .milliseconds(100))
          }
        }
      }
    }
  }

  /// Once `servers` report that they have every change, each one's list equals the database's table.
  private func expectInstancesEqualTheDatabase(_ servers: [ChildServer], cluster: PostgresCluster) async throws {
    let configuration = try DatabaseURL(cluster.url).configuration
    let last = try await lastSequence(configuration)
    for server in servers {
      try await waitForHealth(port: server.port, within: .seconds(30), "instance caught up with \(last)") {
        $0.status == "caughtUp" && $0.applied == last
      }
    }
    let stored = try await databaseState(configuration)
    for server in servers {
      let listed = try await listTodos(port: server.port)
      #expect(listed == Array(stored.todos.values), "instance on port \(server.port) differs from the table")
    }
  }
}
