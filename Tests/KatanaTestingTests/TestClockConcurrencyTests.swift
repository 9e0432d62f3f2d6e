import Foundation
import KatanaTestSupport
import KatanaTesting
import Testing

/// `TestClock` advanced from many threads at once: every advance counts, and every sleeper wakes exactly
/// once, at or after its deadline.
///
/// Ten minutes, as the fuzzers: about 43 s in a debug run of the whole suite, three seeds passed three minutes under
/// the thread sanitizer.
@Suite("TestClock: concurrent advances", .timeLimit(.failsafeMinutes(10)))
struct TestClockConcurrencyTests {
  /// The instant `duration` after the clock's zero.
  static func at(_ duration: Duration) -> TestClock.Instant {
    .zero.advanced(by: duration)
  }

  /// Runs `work(thread)` on `threads` threads that start together, and returns once all have returned.
  static func onThreadsAtOnce(_ threads: Int, _ work: @escaping @Sendable (Int) -> Void) {
    let ready = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for thread in 0..<threads {
      ready.enter()
      done.enter()
      Thread.detachNewThread {
        ready.leave()
        start.wait()
        work(thread)
        done.leave()
      }
    }
    ready.wait()
    for _ in 0..<threads { start.signal() }
    done.wait()
  }

  /// ``onThreadsAtOnce(_:_:)`` for async tests: the waiting happens on a thread of its own, so that the
  /// test never blocks a thread of the cooperative pool (two on these machines) that other tests need.
  static func onThreadsAtOnce(_ threads: Int, _ work: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      Thread.detachNewThread {
        onThreadsAtOnce(threads, work)
        continuation.resume()
      }
    }
  }

  /// Runs `work` in `count` child tasks at once (an advance is asynchronous: tasks, not threads).
  static func inTasksAtOnce(_ count: Int, _ work: @escaping @Sendable (Int) async -> Void) async {
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<count {
        group.addTask { await work(index) }
      }
    }
  }

  /// (An advance of a bare clock yields many times, as swift-clocks' does: in a loaded parallel run under the
  /// thread sanitizer, each round costs hundreds of trips through the pool, so the rounds are few.)
  @Test func eightThreadsAdvancingOneSecondEach_endAtEightSeconds_inEveryRound() async {
    var lost = 0
    for _ in 0..<100 {
      let clock = TestClock()
      await Self.inTasksAtOnce(8) { _ in await clock.advance(by: .seconds(1)) }
      if clock.now != Self.at(.seconds(8)) { lost += 1 }
    }
    #expect(lost == 0, "\(lost) of 100 rounds lost time")
  }

  /// Seeded rounds: sleepers at random deadlines, then 2 to 8 threads advancing by random steps at once.
  /// Closed form: `now` ends at the sum of all steps, exactly the sleepers due by then have woken, each once
  /// and not before its deadline, and the others still sleep.
  @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
  func randomAdvancesFromManyThreads_sumExactly_andWakeEverySleeperOnce(seed: UInt64) async throws {
    var generator = SeededGenerator(seed: seed)
    for _ in 0..<10 {
      let clock = TestClock()
      let sleeperCount = Int.random(in: 1...12, using: &generator)
      let deadlines = (0..<sleeperCount).map { _ in Int.random(in: 1...40, using: &generator) }
      let woke = Recorder<Int>()
      var sleepers: [Task<Void, any Error>] = []
      for (index, deadline) in deadlines.enumerated() {
        sleepers.append(
          Task {
            try await clock.sleep(until: Self.at(.milliseconds(deadline)))
            // Woken at or after the deadline, never before.
            woke.append(clock.now >= Self.at(.milliseconds(deadline)) ? index : -1)
          })
      }
      try await clock.waitForSleepers(count: sleeperCount)
      let threads = Int.random(in: 2...8, using: &generator)
      let steps = (0..<threads).map { _ in (0..<5).map { _ in Int.random(in: 0...3, using: &generator) } }
      await Self.inTasksAtOnce(threads) { thread in
        for step in steps[thread] { await clock.advance(by: .milliseconds(step)) }
      }
      let total = steps.joined().reduce(0, +)
      #expect(clock.now == Self.at(.milliseconds(total)))
      let due = deadlines.indices.filter { deadlines[$0] <= total }
      await woke.wait(forCount: due.count)
      #expect(woke.values.sorted() == due)
      #expect(clock.sleeperCount == sleeperCount - due.count)
      for sleeper in sleepers { sleeper.cancel() }
      for sleeper in sleepers { _ = await sleeper.result }
      #expect(woke.values.count == due.count)
    }
  }
}
