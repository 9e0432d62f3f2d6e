import KatanaTestSupport
import Testing

/// The failsafe that watches progress (KatanaTestSupport), which the fuzzers' runs rely on: it must let a run that
/// keeps moving go on past its bound, and still give up on one that stops.
@Suite("Failsafe watching progress", .timeLimit(.failsafeMinutes(3)))
struct FailsafeTests {
  /// The count moves at every read (the read itself raises it, so neither a starved pool nor a late start can stall
  /// it), and the operation ends at the fourth read, after at least three bounds: a failsafe bounding the whole run,
  /// as the fuzzers' did, gives up at the second read instead.
  @Test func aRunThatKeepsMoving_goesOnPastTheBound() async {
    let reads = LockedValue(0)
    let readFourTimes = Gate()
    let finished = await withFailsafe(
      seconds: 0.1,
      progress: {
        let count = reads.withLock {
          $0 += 1
          return $0
        }
        if count == 4 { readFourTimes.open() }
        return count
      }()
    ) { () async -> Bool in
      await readFourTimes.wait()
      return true
    }
    #expect(finished == true)
    #expect(reads.current >= 4)
  }

  /// The operation stands still (it waits for a gate nobody opens; only its cancellation ends the wait, as a hung
  /// run's would): the failsafe gives up, and cancels it.
  @Test func aRunThatStopsMoving_isGivenUp_andCancelled() async {
    let steps = LockedValue(0)
    let never = Gate()
    let cancelled = Gate()
    let finished = await withFailsafe(seconds: 0.05, progress: steps.current) { () async -> Bool in
      steps.withLock { $0 += 1 }
      await never.wait()
      cancelled.open()
      return true
    }
    #expect(finished == nil)
    await cancelled.wait()
    #expect(!never.isOpen)
  }
}
