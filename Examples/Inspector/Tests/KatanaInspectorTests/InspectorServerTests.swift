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

  @Test func aRequestNamingAnotherHostOrFromAnotherOrigin_isRefused() async throws {
    let (_, _, inspector) = try await makeInspected(.init())
    let upgrade =
      "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
      + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    let events = "/events?token=\(inspector.token)"
    func status(_ path: String, _ headers: String) async throws -> String {
      try await httpStatusLine(port: inspector.port, request: "GET \(path) HTTP/1.1\r\n\(headers)\r\n")
    }
    let ownHost = "Host: 127.0.0.1:\(inspector.port)\r\n"
    #expect(try await status("/?token=\(inspector.token)", ownHost).contains("200"))
    #expect(try await status("/?token=\(inspector.token)", "Host: localhost:\(inspector.port)\r\n").contains("200"))
    // DNS rebinding: a name that resolves to 127.0.0.1 but is not a loopback name.
    #expect(try await status("/?token=\(inspector.token)", "Host: evil.example:\(inspector.port)\r\n").contains("403"))
    // Another site's script, or another local server's page, opening the WebSocket: only the inspector's own
    // origin, exactly, is taken.
    for origin in [
      "http://evil.example", "null", "http://localhost:8765", "http://127.0.0.1:8765", "http://127.0.0.1",
      "https://127.0.0.1:\(inspector.port)", "http://localhost:\(inspector.port)",
      "http://127.0.0.1:\(inspector.port).evil.example", "http://127.0.0.1:\(inspector.port)/",
    ] {
      // Hummingbird answers 400 to an upgrade its router refuses.
      let line = try await status(events, ownHost + upgrade + "Origin: \(origin)\r\n")
      #expect(line.hasPrefix("HTTP/1.1 4"), "\(origin): \(line)")
      #expect(try await status("/?token=\(inspector.token)", ownHost + "Origin: \(origin)\r\n").contains("403"))
    }
    // The inspector's own page, as a browser names it.
    let ownOrigin = "Origin: http://127.0.0.1:\(inspector.port)\r\n"
    #expect(try await status(events, ownHost + upgrade + ownOrigin).contains("101"))
    let localhost = "Host: localhost:\(inspector.port)\r\nOrigin: http://localhost:\(inspector.port)\r\n"
    #expect(try await status(events, localhost + upgrade).contains("101"))
    await inspector.stop()
  }

  @Test func aLoopbackInspector_needsItsOwnRandomToken() async throws {
    let (store, recorder, inspector) = try await makeInspected(.init())
    let other = try await Inspector.start(store: store, recorder: recorder)
    #expect(inspector.token.count == 32)
    #expect(inspector.token != other.token)
    #expect(inspector.url == "http://127.0.0.1:\(inspector.port)/?token=\(inspector.token)")
    let ownHost = "Host: 127.0.0.1:\(inspector.port)\r\n"
    func status(_ path: String, _ headers: String = "") async throws -> String {
      try await httpStatusLine(port: inspector.port, request: "GET \(path) HTTP/1.1\r\n\(ownHost)\(headers)\r\n")
    }
    #expect(try await status("/").contains("401"))
    #expect(try await status("/?token=\(other.token)").contains("401"))
    #expect(try await status("/?token=").contains("401"))
    #expect(try await status("/", "Authorization: Bearer \(inspector.token)\r\n").contains("200"))
    // The page's own code holds nothing of the store: its <script> and <link> requests carry no token.
    #expect(try await status("/inspector.js").contains("200"))
    #expect(try await status("/inspector.css").contains("200"))
    await #expect(throws: (any Error).self) {
      try await converse(with: inspector, query: "") { _ in }
    }
    await #expect(throws: (any Error).self) {
      try await converse(with: inspector, query: "?token=\(other.token)") { _ in }
    }
    try await converse(with: inspector) { page in
      try await page.expectHello()
    }
    await other.stop()
    await inspector.stop()
  }

  @Test func aPageThatMovedTheStore_bringsItBackToLiveWhenItLeaves() async throws {
    let (store, recorder, inspector) = try await makeInspected(.init(pollInterval: .milliseconds(1)))
    for amount in [1, 2, 3] { try await store.dispatch(Add(amount: amount)) }
    let live = TotalState(total: 6, amounts: [1, 2, 3])
    // Bounded: a store that never comes back fails the test instead of hanging it.
    try await withFailsafe(.seconds(30)) {
      var states = store.states(buffering: .bufferingOldest(16)).makeAsyncIterator()
      #expect(await states.next() == live)
      // A page that only looks, and leaves: nothing to bring back.
      try await converse(with: inspector) { page in
        try await page.send(#"{"type":"state","sequence":1}"#)
        _ = try await page.next("state")
      }
      try await converse(with: inspector) { page in
        try await page.send(#"{"type":"travel","sequence":1}"#)
        _ = try await page.next("travelled")
      }
      #expect(await states.next() == TotalState(total: 1, amounts: [1]))
      // The page closed its end while the store was away: the store comes back as the connection ends.
      #expect(await states.next() == live)
      #expect(!recorder.isAwayFromLive)
    }
    try await store.dispatch(Add(amount: 4))
    await inspector.stop()
  }

  @Test func aMoveTheStoreWasLeftIn_endsAfterTheTravelTimeout() async throws {
    let (store, recorder, inspector) = try await makeInspected(
      .init(pollInterval: .milliseconds(1), travelTimeout: .milliseconds(200)))
    for amount in [1, 2, 3] { try await store.dispatch(Add(amount: amount)) }
    try await converse(with: inspector) { page in
      let hello = try await page.next("hello")
      #expect(hello.type == "hello")
      try await page.send(#"{"type":"travel","sequence":1}"#)
      _ = try await page.next("travelled")
      // A second move restarts the timeout; the first one's passing changes nothing.
      try await page.send(#"{"type":"travel","sequence":2}"#)
      _ = try await page.next("travelled")
      #expect(store.state == TotalState(total: 3, amounts: [1, 2]))
      let back = try await page.next("live")
      #expect(back.reason == "timeout")
      #expect(back.live == true)
      #expect(!recorder.isAwayFromLive)
      #expect(store.state == TotalState(total: 6, amounts: [1, 2, 3]))
      // Back to live by the page's own request: no timeout follows it.
      try await page.send(#"{"type":"travel","sequence":1}"#)
      _ = try await page.next("travelled")
      try await page.send(#"{"type":"live"}"#)
      let asked = try await page.next("live")
      #expect(asked.reason == nil)
      try await store.dispatch(Add(amount: 4))
    }
    await inspector.stop()
  }

  @Test func stateReply_carriesTheCommitsPayload() async throws {
    let (store, _, inspector) = try await makeInspected(.init(pollInterval: .milliseconds(1)))
    try await store.dispatch(Add(amount: 7))
    try await store.dispatch(Reset(reason: "new day"))
    try await converse(with: inspector) { page in
      try await page.send(#"{"type":"state","sequence":1}"#)
      let encodable = try await page.next("state")
      #expect(encodable.payload?.form == "fields")
      #expect(encodable.payload?.value == .fields(["amount": 7]))
      try await page.send(#"{"type":"state","sequence":2}"#)
      let described = try await page.next("state")
      #expect(described.payload?.form == "description")
      #expect(described.payload?.value == .description(#"Reset(reason: "new day")"#))
      try await page.send(#"{"type":"state","sequence":0}"#)
      let initial = try await page.next("state")
      #expect(initial.payload == nil)
    }
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
      try await converse(with: inspector, query: "") { _ in }
    }
    await #expect(throws: (any Error).self) {
      try await converse(with: inspector, query: "?token=0123456789abcdef-tokem") { _ in }
    }
    try await converse(with: inspector, query: "?token=\(token)") { page in
      try await page.expectHello()
    }
    try await converse(with: inspector, headers: ["Authorization": "Bearer \(token)"], query: "") { page in
      try await page.expectHello()
    }
    await inspector.stop()
  }
}
