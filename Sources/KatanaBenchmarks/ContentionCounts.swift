import Foundation
import Katana
import KatanaBenchmarkFixtures

/// `katana-benchmarks --counts [--check FILE]`: what one store's lock goes through per item as dispatchers are
/// added, counted under the lock in a build with `KATANA_CONTENTION_COUNTERS` defined (`.ci/contention-gate`).
///
/// Counts, unlike times, do not drift with the machine's speed or load: a design that moves the lock and the state
/// between threads for every item shows it here on any machine. Each case runs a few times and reports its median.
enum ContentionCounting {
  /// One measured case.
  struct Case {
    let name: String
    /// Critical sections entered, per item.
    var acquisitionsPerItem: Double
    /// Critical sections entered by another thread than the previous one, per item.
    var handOversPerItem: Double
  }

  /// A bound on one count of one case, committed in `Benchmarks/Thresholds/contention.json`.
  struct Threshold: Codable {
    let name: String
    let metric: String
    let maximum: Double
  }

  /// Items per case: enough that the callers overlap for most of the run (64 threads are released a few
  /// microseconds apart).
  static let items = 1_000_000
  static let repetitions = 5

  static func run(checking thresholdsPath: String?) async throws -> Bool {
    #if KATANA_CONTENTION_COUNTERS
      var cases: [Case] = []
      for tasks in [1, 2, 4, 8, 16, 64] {
        cases.append(
          try await median("awaited dispatch, \(tasks) task\(tasks == 1 ? "" : "s")") {
            try await countDispatch(tasks: tasks)
          })
      }
      // With a listener a dispatch takes three critical sections (one that finds the commit has observers and
      // changes nothing, the commit, which takes the turn for the delivery, and the release of the turn; see
      // `applyIfIdle`): counted without contention, where the count is exact.
      cases.append(
        try await median("awaited dispatch with a listener, 1 task") {
          try await countDispatch(tasks: 1, listening: true)
        })
      for threads in [1, 2, 4, 16, 64] {
        let name = "send, \(threads) thread\(threads == 1 ? "" : "s")"
        cases.append(try await median(name) { try await countSend(threads: threads) })
      }
      print("case".padding(toLength: 42, withPad: " ", startingAt: 0) + "  acquisitions  hand-overs  (per item)")
      for item in cases {
        print(
          item.name.padding(toLength: 42, withPad: " ", startingAt: 0)
            + String(format: "  %12.3f  %10.3f", item.acquisitionsPerItem, item.handOversPerItem))
      }
      guard let thresholdsPath else { return true }
      let thresholds = try JSONDecoder().decode(
        [Threshold].self, from: Data(contentsOf: URL(fileURLWithPath: thresholdsPath)))
      var passed = true
      for threshold in thresholds {
        guard let item = cases.first(where: { $0.name == threshold.name }) else {
          print("FAIL \(threshold.name): no such case")
          passed = false
          continue
        }
        let value: Double
        switch threshold.metric {
        case "acquisitionsPerItem": value = item.acquisitionsPerItem
        case "handOversPerItem": value = item.handOversPerItem
        default:
          print("FAIL \(threshold.name): unknown metric \(threshold.metric)")
          passed = false
          continue
        }
        let ok = value <= threshold.maximum
        passed = passed && ok
        print(
          "\(ok ? "ok  " : "FAIL") \(threshold.name): \(threshold.metric) "
            + String(format: "%.3f (at most %.3f)", value, threshold.maximum))
      }
      return passed
    #else
      FileHandle.standardError.write(
        Data(
          ("--counts needs a build with KATANA_CONTENTION_COUNTERS defined: swift build -c release --product "
            + "katana-benchmarks -Xswiftc -DKATANA_CONTENTION_COUNTERS (see .ci/contention-gate)\n").utf8))
      return false
    #endif
  }

  #if KATANA_CONTENTION_COUNTERS
    static func median(_ name: String, _ measure: () async throws -> ContentionCounts) async throws -> Case {
      var samples: [Case] = []
      for _ in 0..<repetitions {
        let counts = try await measure()
        let items = Double(Self.items)
        samples.append(
          Case(
            name: name, acquisitionsPerItem: Double(counts.acquisitions) / items,
            handOversPerItem: Double(counts.handOvers) / items))
      }
      func middle(_ metric: (Case) -> Double) -> Double { samples.map(metric).sorted()[samples.count / 2] }
      return Case(
        name: name, acquisitionsPerItem: middle(\.acquisitionsPerItem), handOversPerItem: middle(\.handOversPerItem))
    }

    /// The counts of `items` awaited dispatches from `tasks` tasks, start-up and the final read excluded.
    static func countDispatch(tasks: Int, listening: Bool = false) async throws -> ContentionCounts {
      let store = try await makeStore()
      let unsubscribe = listening ? store.addListener { _, _ in } : nil
      defer { unsubscribe?() }
      let each = items / tasks
      let before = store.contentionCounts
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<tasks {
          group.addTask { for _ in 0..<each { try await store.dispatch(Increment()) } }
        }
        try await group.waitForAll()
      }
      let after = store.contentionCounts
      try expectCounter(of: store, each * tasks)
      return after - before
    }

    /// The counts of `items` sends from `threads` plain threads, start-up and the final read excluded.
    static func countSend(threads: Int) async throws -> ContentionCounts {
      let store = try await makeStore()
      let each = items / threads
      let gang = ThreadGang(count: threads) { _ in
        var last: DispatchHandle<Void>?
        for _ in 0..<each { last = store.send(Increment()) }
        return last
      }
      let before = store.contentionCounts
      let handles = await gang.run()
      let after = store.contentionCounts
      for handle in handles { try await handle?.value }
      try expectCounter(of: store, each * threads, "send lost updates")
      return after - before
    }
  #endif
}

#if KATANA_CONTENTION_COUNTERS
  extension ContentionCounts {
    static func - (after: Self, before: Self) -> Self {
      var difference = ContentionCounts()
      difference.acquisitions = after.acquisitions - before.acquisitions
      difference.handOvers = after.handOvers - before.handOvers
      difference.contended = after.contended - before.contended
      return difference
    }
  }
#endif
