import Foundation
import KatanaTestSupport
import Testing

/// The failsafe that watches progress (KatanaTestSupport), which the fuzzers' runs rely on: it must let a run that
/// keeps moving go on past its bound, and still give up on one that stops.
@Suite("Failsafe watching progress", .timeLimit(.minutes(3)))
struct FailsafeTests {
  /// The count moves (a thread of its own steps it from before the failsafe starts until the run is over, so neither
  /// a starved pool nor a late start stalls it) and the operation ends once the failsafe's clock has read it four
  /// times, so after at least three bounds: a failsafe bounding the whole run, as the fuzzers' did, gives up first.
  @Test func aRunThatKeepsMoving_goesOnPastTheBound() async {
    let steps = LockedValue(0)
    let reads = LockedValue(0)
    let readFourTimes = Gate()
    let over = LockedValue(false)
    Thread {
      var opened = false
      while !over.current {
        steps.withLock { $0 += 1 }
        if !opened && reads.current >= 4 {
          opened = true
          readFourTimes.open()
        }
        usleep(1_000)
      }
    }.start()
    let finished = await withFailsafe(
      seconds: 0.1,
      progress: reads.withLock {
        $0 += 1
        return steps.current
      }
    ) { () async -> Bool in
      await readFourTimes.wait()
      return true
    }
    over.withLock { $0 = true }
    #expect(finished == true)
    #expect(reads.current >= 4)
  }

  /// The operation stands still (a wait that only its cancellation ends, as a hang would): the failsafe gives up,
  /// and cancels it.
  @Test func aRunThatStopsMoving_isGivenUp_andCancelled() async {
    let steps = LockedValue(0)
    let cancelled = Gate()
    let finished = await withFailsafe(seconds: 0.05, progress: steps.current) { () async -> Bool in
      steps.withLock { $0 += 1 }
      try? await Task.sleep(for: .seconds(3_600))
      cancelled.open()
      return true
    }
    #expect(finished == nil)
    await cancelled.wait()
  }
}
