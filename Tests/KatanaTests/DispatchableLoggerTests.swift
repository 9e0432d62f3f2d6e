import Foundation
import KatanaTestSupport
import Testing

@testable import Katana

/// A non-final updater class, to check that the black list matches exact types only.
class BaseLog: StateUpdater, @unchecked Sendable {  // Sendable: immutable.
  let tag: String
  init(tag: String) { self.tag = tag }
  func updateState(_ state: inout CounterState) { state.log.append(tag) }
}

final class DerivedLog: BaseLog, @unchecked Sendable {}  // Sendable: immutable.

/// An updater only the default-sink test dispatches, so that its log line is unique in the process.
struct PrintedByTheDefaultSink: StateUpdater {
  func updateState(_ state: inout CounterState) { state.counter += 1 }
}

/// A logger whose sink records what it logs.
private func recordingLogger(blackList: [any Dispatchable.Type] = [], into recorder: Recorder<String>)
  -> StoreInterceptor
{
  DispatchableLogger.interceptor(blackList: blackList) { item in
    if let log = item as? Log {
      recorder.append("Log \(log.tag)")
    } else {
      recorder.append("\(type(of: item))")
    }
  }
}

@Suite("DispatchableLogger", .timeLimit(.failsafeMinutes(3)))
struct DispatchableLoggerTests {
  @Test func message_isKatana6sLine() {
    #expect(DispatchableLogger.message(for: Increment()) == "[Dispatchable]: KatanaTests.Increment")
  }

  @Test func logger_logsEachHandledItem_sideEffectsOnceTheirBodyReturned() async throws {
    let logged = Recorder<String>()
    let store = try await makeReadyStore(interceptors: [recordingLogger(into: logged)])
    try await store.dispatch(Increment())
    try await store.dispatch(IncrementTwice())
    #expect(try await store.dispatch(AddAndRead(by: 1)) == 4)
    #expect(logged.values == ["Increment", "Increment", "Increment", "IncrementTwice", "Increment", "AddAndRead"])
  }

  @Test func blackList_skipsExactlyTheListedTypes() async throws {
    let logged = Recorder<String>()
    let store = try await makeReadyStore(interceptors: [
      recordingLogger(blackList: [Increment.self, BaseLog.self], into: logged)
    ])
    try await store.dispatch(Increment())
    try await store.dispatch(BaseLog(tag: "base"))
    try await store.dispatch(DerivedLog(tag: "derived"))
    try await store.dispatch(Log(tag: "plain"))
    #expect(logged.values == ["DerivedLog", "Log plain"])
    #expect(store.state.log == ["base", "derived", "plain"])
  }

  @Test func logger_whenHandlingThrows_logsNothing() async throws {
    let logged = Recorder<String>()
    let rejectingAfterLogger = interceptor { item, next, _ in
      if let log = item as? Log, log.tag == "rejected" { throw TestError(code: 1) }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [recordingLogger(into: logged), rejectingAfterLogger])
    await #expect(throws: TestError(code: 5)) { try await store.dispatch(Fail(code: 5)) }
    await #expect(throws: TestError(code: 1)) { try await store.dispatch(Log(tag: "rejected")) }
    try await store.dispatch(Log(tag: "accepted"))
    #expect(logged.values == ["Log accepted"])
  }

  @Test func logger_whenAnEarlierInterceptorBlocksTheItem_logsNothing() async throws {
    let logged = Recorder<String>()
    let blocking = interceptor { item, next, _ in
      guard let log = item as? Log else { return try await next(item) }
      switch log.tag {
      case "swallowed": return
      case "rejected": throw TestError(code: 2)
      default: try await next(item)
      }
    }
    let store = try await makeReadyStore(interceptors: [blocking, recordingLogger(into: logged)])
    try await store.dispatch(Log(tag: "swallowed"))
    await #expect(throws: TestError(code: 2)) { try await store.dispatch(Log(tag: "rejected")) }
    try await store.dispatch(Log(tag: "passed"))
    #expect(logged.values == ["Log passed"])
    #expect(store.state.log == ["passed"])
  }

  @Test func logger_whenAnInterceptorAfterItSwallowsTheItem_logsIt() async throws {
    let logged = Recorder<String>()
    let swallowing = interceptor { item, next, _ in
      if let log = item as? Log, log.tag == "swallowed" { return }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [recordingLogger(into: logged), swallowing])
    try await store.dispatch(Log(tag: "swallowed"))
    try await store.dispatch(Log(tag: "applied"))
    // The logger cannot tell a swallowed item from a handled one: both are logged.
    #expect(logged.values == ["Log swallowed", "Log applied"])
    #expect(store.state.log == ["applied"])
  }

  @Test func logger_logsTheItemAsItReceivedIt_evenWhenALaterInterceptorReplacesIt() async throws {
    let logged = Recorder<String>()
    let replacing = interceptor { item, next, _ in
      if let log = item as? Log, log.tag == "original" { return try await next(Log(tag: "replacement")) }
      try await next(item)
    }
    let store = try await makeReadyStore(interceptors: [recordingLogger(into: logged), replacing])
    try await store.dispatch(Log(tag: "original"))
    #expect(logged.values == ["Log original"])
    #expect(store.state.log == ["replacement"])
  }

  /// Captures the process's standard output around a dispatch: this checks what the default sink really
  /// does (it writes the line to file descriptor 1), not only the message it would print.
  @Test func defaultSink_printsKatana6sLineToStandardOutput() async throws {
    let line = "[Dispatchable]: KatanaTests.PrintedByTheDefaultSink"
    let store = try await makeReadyStore(interceptors: [DispatchableLogger.interceptor()])
    let output = try await capturingOutput(of: STDOUT_FILENO, ownPrefixes: [line]) {
      try await store.dispatch(PrintedByTheDefaultSink())
    }
    #expect(output.split(separator: "\n").filter { $0 == line }.count == 1)
    #expect(store.state.counter == 1)
  }

  @Test func logger_logsStateUpdatersInTheOrderTheStoreAppliedThem() async throws {
    let logged = Recorder<String>()
    let store = try await makeReadyStore(interceptors: [recordingLogger(into: logged)])
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<4 {
        group.addTask {
          for index in 0..<25 {
            if index.isMultiple(of: 2) {
              try await store.dispatch(Log(tag: "\(task).\(index)"))
            } else {
              store.send(Log(tag: "\(task).\(index)"))
            }
          }
        }
      }
      try await group.waitForAll()
    }
    try await store.send(Log(tag: "last")).value
    #expect(store.state.log.count == 101)
    #expect(logged.values == store.state.log.map { "Log \($0)" })
  }
}
