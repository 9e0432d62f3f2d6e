import HummingbirdWebSocket
import Katana
import Testing

@testable import KatanaInspector

/// The server end to end, with a WebSocket client as the page.
@Suite struct InspectorServerTests {
  /// A store with a recorder and an inspector polling often.
  func makeInspected(capacity: Int = 10_000, checkpointInterval: Int? = nil, _ configuration: InspectorConfiguration)
    async throws -> (TotalStore, StoreRecorder<TotalState>, Inspector)
  {
    let recorder = StoreRecorder<TotalState>(capacity: capacity, checkpointInterval: checkpointInterval)
    let store = TotalStore(initialState: TotalState(), interceptors: [recorder.interceptor])
    let inspector = try await Inspector.start(store: store, recorder: recorder, configuration: configuration)
    return (store, recorder, inspector)
  }

  @Test func events_arriveInCommitOrder_noneLostWithinTheWindow() async throws {
    let (store, _, inspector) = try await makeInspected(
      .init(pollInterval: .milliseconds(1), maximumBatch: 50, batchesInFlight: 2))
    let count = 500
    try await converse(with: inspector) { page in
      try await page.expectHello()
      let writer = Task {
        for amount in 1...count { try await store.dispatch(Add(amount: amount)) }
      }
      var sequences: [Int] = []
      while sequences.last != count {
        let batch = try await page.next("batch")
        #expect(batch.dropped == 0)
        #expect((batch.items?.count ?? 0) <= 50)
        sequences += batch.items?.filter { $0.kind == "commit" }.map(\.id) ?? []
        try await page.send(#"{"type":"ack"}"#)
      }
      try await writer.value
      #expect(sequences == Array(1...count))
    }
    await inspector.stop()
  }

  @Test func aSlowPage_getsADropCounter_andTheStoreDoesNotWait() async throws {
    let (store, recorder, inspector) = try await makeInspected(
      capacity: 20, checkpointInterval: 5,
      .init(pollInterval: .milliseconds(1), maximumBatch: 1_000, batchesInFlight: 1))
    try await converse(with: inspector) { page in
      try await page.expectHello()
      for amount in 1...5 { try await store.dispatch(Add(amount: amount)) }
      var sequences = try await page.next("batch").items?.map(\.id) ?? []
      // The page acknowledges nothing: the store goes on regardless (these dispatches would hang otherwise).
      for amount in 6...300 { try await store.dispatch(Add(amount: amount)) }
      #expect(recorder.recording().commits.first?.sequence ?? 0 > 6)
      try await page.send(#"{"type":"ack"}"#)
      var dropped = 0
      while sequences.last != 300 {
        let batch = try await page.next("batch")
        dropped = batch.dropped ?? 0
        sequences += batch.items?.map(\.id) ?? []
        try await page.send(#"{"type":"ack"}"#)
      }
      #expect(dropped > 0)
      #expect(sequences == sequences.sorted())
      #expect(sequences.count + dropped == 300)
    }
    await inspector.stop()
  }

  @Test func stateRequest_answersTheStateAndThePreviousOne() async throws {
    let (store, _, inspector) = try await makeInspected(.init(pollInterval: .milliseconds(1)))
    for amount in [1, 2, 3] { try await store.dispatch(Add(amount: amount)) }
    try await converse(with: inspector) { page in
      try await page.send(#"{"type":"state","sequence":2}"#)
      let reply = try await page.next("state")
      #expect(reply.sequence == 2)
      #expect(reply.state == TotalState(total: 3, amounts: [1, 2]))
      #expect(reply.previous == TotalState(total: 1, amounts: [1]))
    }
    await inspector.stop()
  }

  @Test func travelAndLive_moveTheStore() async throws {
    let (store, recorder, inspector) = try await makeInspected(.init(pollInterval: .milliseconds(1)))
    for amount in [1, 2, 3] { try await store.dispatch(Add(amount: amount)) }
    try await converse(with: inspector) { page in
      try await page.send(#"{"type":"travel","sequence":1}"#)
      let travelled = try await page.next("travelled")
      #expect(travelled.sequence == 1)
      #expect(store.state == TotalState(total: 1, amounts: [1]))
      #expect(recorder.isAwayFromLive)
      await #expect(throws: TimeTravelError.self) { try await store.dispatch(Add(amount: 9)) }
      try await page.send(#"{"type":"live"}"#)
      let live = try await page.next("live")
      #expect(live.live == true)
      #expect(store.state == TotalState(total: 6, amounts: [1, 2, 3]))
      #expect(!recorder.isAwayFromLive)
    }
    await inspector.stop()
  }

  @Test(arguments: [
    ("not json", "Not a request"),
    (#"{"kind":"ack"}"#, "Not a request"),
    (#"{"type":"explode"}"#, "Unknown request type"),
    (#"{"type":"state"}"#, "needs a \"sequence\""),
    (#"{"type":"travel","sequence":"two"}"#, "Not a request"),
    (#"{"type":"state","sequence":99}"#, "not in the recorder's window"),
    (#"{"type":"travel","sequence":-5}"#, "Could not travel"),
  ])
  func aBadMessage_getsAnError_andTheConnectionGoesOn(request: String, expected: String) async throws {
    let (store, _, inspector) = try await makeInspected(.init(pollInterval: .milliseconds(1)))
    try await store.dispatch(Add(amount: 1))
    try await converse(with: inspector) { page in
      try await page.send(request)
      let error = try await page.next("error")
      #expect(error.message?.contains(expected) == true, "\(error.message ?? "")")
      try await page.sendBinary([1, 2, 3])
      let binaryError = try await page.next("error")
      #expect(binaryError.message?.contains("binary") == true)
      try await page.send(#"{"type":"state","sequence":1}"#)
      let state = try await page.next("state")
      #expect(state.state?.total == 1)
    }
    #expect(store.state.total == 1)
    await inspector.stop()
  }

  @Test func aRequestNamingAnotherHostOrFromAnotherSite_isRefused() async throws {
    let (_, _, inspector) = try await makeInspected(.init())
    let upgrade =
      "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
      + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    func status(_ path: String, _ headers: String) async throws -> String {
      try await httpStatusLine(port: inspector.port, request: "GET \(path) HTTP/1.1\r\n\(headers)\r\n")
    }
    let ownHost = "Host: 127.0.0.1:\(inspector.port)\r\n"
    #expect(try await status("/", ownHost).contains("200"))
    #expect(try await status("/", "Host: localhost:\(inspector.port)\r\n").contains("200"))
    // DNS rebinding: a name that resolves to 127.0.0.1 but is not a loopback name.
    #expect(try await status("/", "Host: evil.example:\(inspector.port)\r\n").contains("403"))
    // Another site's script opening the WebSocket: the upgrade is refused (Hummingbird answers 400 when the
    // router does not accept an upgrade).
    #expect(try await status("/events", ownHost + upgrade + "Origin: http://evil.example\r\n").hasPrefix("HTTP/1.1 4"))
    #expect(try await status("/events", ownHost + upgrade + "Origin: null\r\n").hasPrefix("HTTP/1.1 4"))
    // The inspector's own page.
    let ownOrigin = "Origin: http://127.0.0.1:\(inspector.port)\r\n"
    #expect(try await status("/events", ownHost + upgrade + ownOrigin).contains("101"))
    await inspector.stop()
  }

  @Test func start_onATakenPort_throwsServerFailed() async throws {
    let (store, recorder, first) = try await makeInspected(.init())
    await #expect {
      _ = try await Inspector.start(
        store: store, recorder: recorder, configuration: .init(binding: .loopback(port: first.port)))
    } throws: { error in
      guard case InspectorError.serverFailed = error else { return false }
      return true
    }
    await #expect(throws: InspectorError.self) {
      _ = try await Inspector.start(
        store: store, recorder: recorder, configuration: .init(binding: .loopback(port: 70_000)))
    }
    await first.stop()
  }

  @Test func tokenComparison_acceptsOnlyTheToken() {
    let token = "0123456789abcdef"
    #expect(AccessCheck<BasicWebSocketRequestContext>.same(token, token))
    for given in [nil, "", "0123456789abcdeg", "0123456789abcde", "0123456789abcdef0", "x"] {
      #expect(!AccessCheck<BasicWebSocketRequestContext>.same(given, token), "\(given ?? "nil")")
    }
  }

  @Test func anExposedInspector_needsAToken() async throws {
    let recorder = StoreRecorder<TotalState>()
    let store = TotalStore(initialState: TotalState(), interceptors: [recorder.interceptor])
    await #expect(throws: InspectorError.self) {
      _ = try await Inspector.start(
        store: store, recorder: recorder, configuration: .init(binding: .exposed(host: "127.0.0.1", port: 0, token: ""))
      )
    }
    let token = "0123456789abcdef-token"
    let inspector = try await Inspector.start(
      store: store, recorder: recorder,
      configuration: .init(binding: .exposed(host: "127.0.0.1", port: 0, token: token)))
    #expect(inspector.url.hasSuffix("?token=\(token)"))
    await #expect(throws: (any Error).self) {
      try await converse(with: inspector) { _ in }
    }
    await #expect(throws: (any Error).self) {
      try await converse(with: inspector, query: "?token=0123456789abcdef-tokem") { _ in }
    }
    try await converse(with: inspector, query: "?token=\(token)") { page in
      try await page.expectHello()
    }
    try await converse(with: inspector, headers: ["Authorization": "Bearer \(token)"]) { page in
      try await page.expectHello()
    }
    await inspector.stop()
  }
}
