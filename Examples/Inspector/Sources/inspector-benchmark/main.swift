import Foundation
import HummingbirdWSClient
import Katana
import KatanaInspector
import Logging

// The store's cost per commit: without a recorder, with a recorder, and with a recorder and an inspector that a
// page (a WebSocket client that acknowledges every batch, as the page does) is connected to.
//
//   swift run -c release --package-path Examples/Inspector inspector-benchmark [commits]

struct BenchState: State, Codable {
  var total = 0
  var last = 0
}

struct Add: StateUpdater {
  let amount: Int
  func updateState(_ state: inout BenchState) {
    state.total &+= amount
    state.last = amount
  }
}

typealias BenchStore = Store<BenchState, EmptySideEffectDependencyContainer>

let commits = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 200_000

/// Nanoseconds per commit of `commits` sequential dispatches (after a warm-up of a tenth as many).
func measure(_ store: BenchStore) async throws -> Double {
  for amount in 0..<(commits / 10) { try await store.dispatch(Add(amount: amount)) }
  let clock = ContinuousClock()
  let start = clock.now
  for amount in 0..<commits { try await store.dispatch(Add(amount: amount)) }
  let elapsed = start.duration(to: clock.now)
  let (seconds, attoseconds) = elapsed.components
  return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(commits)
}

/// A page: reads batches and acknowledges each; returns the commits it got and the last drop count.
final class PageCounts: @unchecked Sendable {  // Sendable: written by the page's task only, read after it ends.
  var received = 0
  var dropped = 0
}

func format(_ value: Double) -> String { String(format: "%.0f", value) }

let plain = try await measure(BenchStore(initialState: BenchState()))
print("no recorder:                          \(format(plain)) ns per commit")

let recorder = StoreRecorder<BenchState>(capacity: 10_000)
let recorded = BenchStore(initialState: BenchState(), interceptors: [recorder.interceptor])
let withRecorder = try await measure(recorded)
print("recorder (capacity 10,000):           \(format(withRecorder)) ns per commit")

let inspectedRecorder = StoreRecorder<BenchState>(capacity: 10_000)
let inspected = BenchStore(initialState: BenchState(), interceptors: [inspectedRecorder.interceptor])
let inspector = try await inspected.inspect(recorder: inspectedRecorder)
let counts = PageCounts()
let (connected, signalConnected) = AsyncStream<Void>.makeStream()
let page = Task {
  // A batch of 2,000 items is one frame of a few hundred kilobytes (browsers take any size).
  try await WebSocketClient.connect(
    url: "ws://127.0.0.1:\(inspector.port)/events", configuration: .init(maxFrameSize: 1 << 24),
    logger: Logger(label: "page")
  ) { inbound, outbound, _ in
    signalConnected.yield()
    for try await message in inbound.messages(maxSize: 1 << 26) {
      guard case .text(let text) = message,
        let batch = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
        batch["type"] as? String == "batch"
      else { continue }
      counts.received += (batch["items"] as? [Any])?.count ?? 0
      counts.dropped = batch["dropped"] as? Int ?? 0
      try await outbound.write(.text(#"{"type":"ack"}"#))
    }
  }
}
for await _ in connected { break }
let withInspector = try await measure(inspected)
print("recorder and inspector, page attached: \(format(withInspector)) ns per commit")
await inspector.stop()
_ = try? await page.value
print(
  "the page got \(counts.received) items, \(counts.dropped) commits dropped, of \(commits + commits / 10) committed")
