import Foundation
import HummingbirdWSClient
import Katana
import KatanaInspector
import Logging

// The store's cost per commit: without a recorder, with a recorder, and with a recorder and an inspector that a
// page (a WebSocket client that acknowledges every batch, as the page does) is connected to.
//
//   swift run -c release --package-path Examples/Inspector inspector-benchmark [commits]
//
// Flat out, the store commits as fast as it can and the page (on the same two cores) takes what it can; paced,
// it commits a few thousand times a second, which the page keeps up with.

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

let commits = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 1_000_000

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

/// Nanoseconds per commit spent in dispatch (the store's cost) when committing at about `rate` commits a second
/// for `seconds`: bursts of `rate / 100` commits every 10 ms, only the bursts timed.
func measurePaced(_ store: BenchStore, rate: Int, seconds: Int) async throws -> Double {
  let clock = ContinuousClock()
  let burst = max(1, rate / 100)
  var spent = Duration.zero
  var count = 0
  for _ in 0..<(seconds * 100) {
    let start = clock.now
    for amount in 0..<burst { try await store.dispatch(Add(amount: amount)) }
    spent += start.duration(to: clock.now)
    count += burst
    try await Task.sleep(for: .milliseconds(10))
  }
  let (wholeSeconds, attoseconds) = spent.components
  return (Double(wholeSeconds) * 1e9 + Double(attoseconds) / 1e9) / Double(count)
}

/// A page: reads batches and acknowledges each; returns the commits it got and the last drop count.
final class PageCounts: @unchecked Sendable {  // Sendable: written by the page's task only, read after it ends.
  var received = 0
  var dropped = 0
}

func format(_ value: Double) -> String { String(format: "%.0f", value) }

/// Connects a page to `inspector` (it reads every batch and acknowledges it, as the page does), runs `body`, then
/// stops the inspector; returns `body`'s result and what the page got.
func withPage(_ inspector: Inspector, _ body: () async throws -> Double) async throws -> (Double, PageCounts) {
  let counts = PageCounts()
  let (connected, signalConnected) = AsyncStream<Void>.makeStream()
  let page = Task {
    // A page that cannot connect ends the wait below instead of leaving it waiting.
    defer { signalConnected.finish() }
    // A batch of 2,000 items is one frame of a few hundred kilobytes (browsers take any size).
    try await WebSocketClient.connect(
      url: "ws://127.0.0.1:\(inspector.port)/events?token=\(inspector.token)",
      configuration: .init(maxFrameSize: 1 << 24),
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
  let result = try await body()
  await inspector.stop()
  _ = try? await page.value
  return (result, counts)
}

/// A store with a recorder (and the recorder).
func makeRecorded() -> (BenchStore, StoreRecorder<BenchState>) {
  let recorder = StoreRecorder<BenchState>(capacity: 10_000)
  let store = BenchStore(initialState: BenchState())
  // A recorder new to this store cannot fail to attach.
  try? recorder.attach(to: store)
  return (store, recorder)
}

print("Flat out: \(commits) commits back to back (after \(commits / 10) to warm up), ns per commit")
let plain = try await measure(BenchStore(initialState: BenchState()))
print("  no recorder:                          \(format(plain))")
let withRecorder = try await measure(makeRecorded().0)
print("  recorder (capacity 10,000):           \(format(withRecorder))")
let (flatStore, flatRecorder) = makeRecorded()
let (flatInspected, flatPage) = try await withPage(try await flatStore.inspect(recorder: flatRecorder)) {
  try await measure(flatStore)
}
print(
  "  recorder, inspector and a page:       \(format(flatInspected))"
    + " (the page got \(flatPage.received) items; \(flatPage.dropped) commits dropped)")
print("  with a page / recorder alone:         \(String(format: "%.2f", flatInspected / withRecorder))x")

let rate = 5_000
let seconds = 3
print("Paced: about \(rate) commits a second for \(seconds) s, ns per commit spent in dispatch")
let pacedRecorder = try await measurePaced(makeRecorded().0, rate: rate, seconds: seconds)
print("  recorder (capacity 10,000):           \(format(pacedRecorder))")
let (pacedStore, pacedStoreRecorder) = makeRecorded()
let (pacedInspected, pacedPage) = try await withPage(try await pacedStore.inspect(recorder: pacedStoreRecorder)) {
  try await measurePaced(pacedStore, rate: rate, seconds: seconds)
}
print(
  "  recorder, inspector and a page:       \(format(pacedInspected))"
    + " (the page got \(pacedPage.received) items; \(pacedPage.dropped) commits dropped)")
print("  with a page / recorder alone:         \(String(format: "%.2f", pacedInspected / pacedRecorder))x")
