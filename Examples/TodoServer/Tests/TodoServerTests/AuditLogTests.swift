import Foundation
import Hummingbird
import HummingbirdTesting
import Katana
import KatanaRecordingLog
import NIOConcurrencyHelpers
import NIOCore
import OrderedCollections
import PostgresNIO
import Testing

@testable import TodoServer

/// The audit log: every commit of a store, in the database, rebuilds the store's states.
@Suite("Audit log", .timeLimit(.minutes(2)))
struct AuditLogTests {
  @Test func concurrentRequests_theLogRebuildsEveryStateTheStoreHad() async throws {
    try await withDatabasePath { path in
      var options = AuditLog.Options(instance: "a")
      // Flushed by the test, and with a digest every 7 commits.
      options.flushInterval = .seconds(3600)
      options.checkpointInterval = 7
      let backend = try TodoBackend.sqlite(path: path, auditLog: options, logger: quietLogger())
      let auditLog = try #require(backend.auditLog)
      let liveStates = NIOLockedValueBox<[TodoState]>([])
      try await backend.store.waitUntilReady()
      let unsubscribe = backend.store.addListener { _, new in liveStates.withLockedValue { $0.append(new) } }
      defer { unsubscribe() }
      try await withLiveServer(backend: backend) { server in
        for round in 0..<3 {
          try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
              group.addTask {
                let todo = try await server.client.createTodo("round \(round) worker \(worker)")
                if worker.isMultiple(of: 2) {
                  _ = try await server.client.execute(uri: "/todos/\(todo.id)/complete", method: .post)
                }
                if worker.isMultiple(of: 3) {
                  _ = try await server.client.execute(uri: "/todos/\(todo.id)", method: .delete)
                }
              }
            }
            try await group.waitForAll()
          }
          try await auditLog.flush(server.store)
        }
        let entries = try await server.backend.database.auditLog(session: auditLog.session)
        #expect(entries.count == 3)
        #expect(entries.first?.log.contains(#""initialState""#) == true)
        #expect(entries.dropFirst().allSatisfy { !$0.log.contains(#""initialState""#) && $0.log.contains("continues") })
        #expect(entries.allSatisfy { $0.log.contains(#""digest""#) && $0.instance == "a" })
        // Each commit names the HTTP request that made its change, one request per change.
        let requests = try entries.flatMap { $0.log.split(separator: "\n") }.compactMap { line -> String? in
          let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
          guard object?["commit"] != nil else { return nil }
          return (object?["updater"] as? [String: Any])?["request"] as? String ?? "(none)"
        }
        // Three rounds of 8 creates, 4 completes (even workers) and 3 deletes (workers 0, 3 and 6).
        let writes = 45
        #expect(requests.count == writes)
        #expect(requests.allSatisfy { $0.hasPrefix("POST /todos") || $0.hasPrefix("DELETE /todos/") })
        #expect(Set(requests).count == requests.count)

        let rebuilt = try AuditLog.rebuild(entries)
        #expect(rebuilt.state == server.store.state)
        #expect(rebuilt.missing.isEmpty)
        // Every commit, in order: the states the store's listener saw.
        #expect(rebuilt.states.map(\.state) == liveStates.withLockedValue { $0 })
        #expect(rebuilt.states.map(\.commit) == Array(1...rebuilt.states.count))
        #expect(await auditLog.writtenCommits == rebuilt.states.count)

        // The same log replayed into a fresh store, through the store's own replay (a log with digests is read
        // with their function: without it nothing would check the log, and it is refused).
        let first = try RecordingLog.decode(entries[0].log, registry: AuditLog.registry, digest: AuditLog.digest(of:))
        let fresh = Store<TodoState, EmptySideEffectDependencyContainer>(initialState: first.initialState)
        var state = first.initialState
        for entry in entries {
          let recording = try RecordingLog.decode(
            entry.log, registry: AuditLog.registry, initialState: state, digest: AuditLog.digest(of:))
          try await recording.replay(into: fresh)
          state = fresh.state
        }
        #expect(fresh.state == server.store.state)
      }
    }
  }

  @Test func gracefulShutdown_writesTheLastCommits() async throws {
    try await withDatabasePath { path in
      var options = AuditLog.Options(instance: "b")
      options.flushInterval = .seconds(3600)
      let backend = try TodoBackend.sqlite(path: path, auditLog: options, logger: quietLogger())
      let session = try #require(backend.auditLog?.session)
      try await backend.store.waitUntilReady()
      try await withLiveServer(backend: backend) { server in
        let milk = try await server.client.createTodo("milk")
        _ = try await server.client.createTodo("eggs")
        _ = try await server.client.execute(uri: "/todos/\(milk.id)/complete", method: .post)
      }
      // The server has stopped: read the file again.
      let database = try SQLiteTodoDatabase(path: path)
      let entries = try await database.auditLog(session: session)
      let rebuilt = try AuditLog.rebuild(entries)
      #expect(rebuilt.state == (try databaseState(at: path)))
      #expect(rebuilt.states.count == 3)
      await database.close()
    }
  }

  @Test func theDatabaseRefusingEntries_keepsThemUntilItTakesThem_andPastTheBound_saysWhatIsMissing() async throws {
    let sink = FlakySink()
    var options = AuditLog.Options(instance: "c")
    options.maximumPendingCommits = 4
    options.checkpointInterval = 2
    let auditLog = AuditLog(options: options, sink: sink, logger: quietLogger())
    let store = makeTodoStore(database: try SQLiteTodoDatabase.inMemory(), interceptors: [auditLog.interceptor])

    _ = try await store.dispatch(CreateTodo(title: "one"))
    try await auditLog.flush(store)
    #expect(sink.entries.map(\.firstCommit) == [1])

    // Refused: kept, and written in order once the database takes entries again.
    sink.failing.withLockedValue { $0 = true }
    _ = try await store.dispatch(CreateTodo(title: "two"))
    await #expect(throws: SinkDown.self) { try await auditLog.flush(store) }
    _ = try await store.dispatch(CreateTodo(title: "three"))
    await #expect(throws: SinkDown.self) { try await auditLog.flush(store) }
    #expect(sink.entries.count == 1)
    sink.failing.withLockedValue { $0 = false }
    try await auditLog.flush(store)
    #expect(sink.entries.map(\.firstCommit) == [1, 2, 3])
    #expect(try AuditLog.rebuild(sink.entries).state == store.state)
    #expect(await auditLog.lostCommits == 0)

    // Refused for longer than the bound holds: the oldest entries go, and the next entry carries its own state.
    sink.failing.withLockedValue { $0 = true }
    for round in 0..<3 {
      for item in 0..<2 { _ = try await store.dispatch(CreateTodo(title: "round \(round) item \(item)")) }
      await #expect(throws: SinkDown.self) { try await auditLog.flush(store) }
    }
    sink.failing.withLockedValue { $0 = false }
    try await auditLog.flush(store)
    #expect(await auditLog.lostCommits == 2)
    #expect(sink.entries.map(\.firstCommit) == [1, 2, 3, 6, 8])
    #expect(sink.entries[3].log.contains(#""initialState""#) && !sink.entries[4].log.contains(#""initialState""#))
    let rebuilt = try AuditLog.rebuild(sink.entries)
    #expect(rebuilt.state == store.state)
    #expect(rebuilt.missing == [4...5])
  }

  @Test func aLogThatDoesNotHold_getsItsError() async throws {
    let sink = FlakySink()
    var options = AuditLog.Options(instance: "d")
    options.checkpointInterval = 1
    let auditLog = AuditLog(options: options, sink: sink, logger: quietLogger())
    let store = makeTodoStore(database: try SQLiteTodoDatabase.inMemory(), interceptors: [auditLog.interceptor])
    for title in ["one", "two"] {
      _ = try await store.dispatch(CreateTodo(title: title))
      try await auditLog.flush(store)
    }
    let entries = sink.entries
    #expect(entries.count == 2)

    // An entry that continues one the log does not have.
    #expect {
      try AuditLog.rebuild([entries[1]])
    } throws: { error in
      guard case AuditLogError.continuesMissingEntry(after: 1) = error else { return false }
      return true
    }
    // A commit changed after it was written: its digest no longer matches.
    let tampered = AuditLogEntry(
      instance: "d", session: auditLog.session, firstCommit: 2, lastCommit: 2,
      log: entries[1].log.replacingOccurrences(of: #""title":"two""#, with: #""title":"2""#))
    #expect {
      try AuditLog.rebuild([entries[0], tampered])
    } throws: { error in
      guard case AuditLogError.replayFailed(.diverged(sequence: 2, _, _)) = error else { return false }
      return true
    }
    // A line cut off.
    let cut = AuditLogEntry(
      instance: "d", session: auditLog.session, firstCommit: 2, lastCommit: 2, log: String(entries[1].log.dropLast(5)))
    #expect {
      try AuditLog.rebuild([entries[0], cut])
    } throws: { error in
      guard case AuditLogError.unreadable(firstCommit: 2, .truncatedLine) = error else { return false }
      return true
    }
  }
}

/// The audit log with several instances on PostgreSQL: each instance's log rebuilds its own store.
@Suite(
  "Audit log on PostgreSQL", .enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason),
  .timeLimit(.minutes(2)))
struct PostgresAuditLogTests {
  @Test func twoInstances_eachLogRebuildsItsStore() async throws {
    try await withFreshPostgresDatabase { configuration in
      var sessions: [UUID] = []
      var finalStates: [TodoState] = []
      for instance in ["a", "b"] {
        var options = AuditLog.Options(instance: instance)
        options.flushInterval = .milliseconds(20)
        options.checkpointInterval = 5
        let backend = TodoBackend.postgres(
          configuration: configuration, auditLog: options, logger: quietLogger())
        sessions.append(try #require(backend.auditLog?.session))
        try await withLiveServer(backend: backend) { server in
          try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<6 {
              group.addTask {
                let todo = try await server.client.createTodo("\(instance) \(worker)")
                _ = try await server.client.execute(uri: "/todos/\(todo.id)/complete", method: .post)
              }
            }
            try await group.waitForAll()
          }
        }
        finalStates.append(backend.store.state)
      }
      try await withPostgresClient(configuration) { client in
        let database = PostgresTodoDatabase(client: client, logger: quietLogger())
        for (session, state) in zip(sessions, finalStates) {
          let entries = try await database.auditLog(session: session)
          let rebuilt = try AuditLog.rebuild(entries)
          #expect(rebuilt.state == state)
          #expect(rebuilt.missing.isEmpty)
        }
        // The second instance started from the first one's state.
        let second = try await database.auditLog(session: sessions[1])
        let start = try RecordingLog.decode(
          try #require(second.first).log, registry: AuditLog.registry, digest: AuditLog.digest(of:))
        #expect(start.initialState == finalStates[0])
      }
      #expect(finalStates[1].todos.count == 12)
    }
  }
}

/// A sink that refuses entries while `failing` is set.
private final class FlakySink: AuditLogSink {
  let failing = NIOLockedValueBox(false)
  private let stored = NIOLockedValueBox<[AuditLogEntry]>([])

  var entries: [AuditLogEntry] { stored.withLockedValue { $0 } }

  func appendAuditLog(_ entry: AuditLogEntry) async throws {
    if failing.withLockedValue({ $0 }) { throw SinkDown() }
    stored.withLockedValue { entries in
      if !entries.contains(where: { $0.session == entry.session && $0.firstCommit == entry.firstCommit }) {
        entries.append(entry)
      }
    }
  }

  func auditLog(session: UUID) async throws -> [AuditLogEntry] {
    entries.filter { $0.session == session }
  }
}

private struct SinkDown: Error {}
