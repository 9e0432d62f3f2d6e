import KatanaTestSupport
import Testing

@testable import Katana

@Suite("How a recorder reads the time")
struct RecorderTimerTests {
  /// A clock's duration becomes whole nanoseconds, and one too long for 64 bits is clamped: no trap.
  @Test func aDuration_becomesWholeNanoseconds_clampedToSixtyFourBits() {
    #expect(RecorderTimer.nanoseconds(.zero) == 0)
    #expect(RecorderTimer.nanoseconds(.seconds(2) + .nanoseconds(7)) == 2_000_000_007)
    #expect(RecorderTimer.nanoseconds(.nanoseconds(-3)) == -3)
    #expect(RecorderTimer.nanoseconds(Duration(secondsComponent: 0, attosecondsComponent: 999_999_999)) == 0)
    #expect(RecorderTimer.nanoseconds(.seconds(Int64.max)) == .max)
    #expect(RecorderTimer.nanoseconds(.seconds(Int64.min)) == .min)
    #expect(RecorderTimer.nanoseconds(.seconds(9_223_372_036)) == 9_223_372_036_000_000_000)
    #expect(RecorderTimer.nanoseconds(.seconds(9_223_372_037)) == .max)
  }

  /// On `ContinuousClock` (read in C), the time of each commit lies between the recorder's attachment and the
  /// moment it is read, and grows with each commit, as `ContinuousClock` measures them.
  @Test func onTheContinuousClock_commitTimes_liveWithinWhatTheClockMeasures() async throws {
    let store = Store<RecTimerState, EmptySideEffectDependencyContainer>(initialState: RecTimerState())
    try await store.waitUntilReady()
    let before = ContinuousClock.now
    let recorder = StoreRecorder<RecTimerState>()
    try recorder.attach(to: store)
    for _ in 0..<100 { try await store.dispatch(RecTimerTick()) }
    let elapsed = before.duration(to: .now)
    let times = recorder.recording().commits.map(\.time)
    #expect(times.count == 100)
    #expect(times.allSatisfy { $0 >= .zero && $0 <= elapsed })
    #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
  }
}

struct RecTimerState: State {
  var ticks = 0
}

struct RecTimerTick: StateUpdater {
  func updateState(_ state: inout RecTimerState) { state.ticks += 1 }
}

/// `CounterClock`, the processor's counter anchored to the clock, against its plain twin: the clock itself, read at
/// the same instants.
@Suite("Stamping commits from the processor's counter")
struct CounterClockTests {
  /// A simulated machine: the true time, a counter that follows it at a constant rate from an offset (a counter that
  /// stopped for a while resumes with another offset), and a clock whose reading comes up to `jitter` nanoseconds
  /// late, never going back.
  struct Machine {
    var now: Int64
    let ticksPerNanosecond: Swift.Double
    let offset: Int64
    let jitter: Int64
    var lastRead = Int64.min
    var reads = 0

    var ticks: Int64 { offset &+ Int64(Swift.Double(now) * ticksPerNanosecond) }

    mutating func read(_ generator: inout SeededGenerator) -> Int64 {
      reads += 1
      lastRead = max(lastRead, now + Int64.random(in: 0...jitter, using: &generator))
      return lastRead
    }

    mutating func stamp(_ clock: inout CounterClock, _ generator: inout SeededGenerator) -> Int64 {
      var machine = self
      let stamp = clock.nanoseconds(ticks: ticks) { machine.read(&generator) }
      self = machine
      return stamp
    }
  }

  static let jitter: Int64 = 30
  /// How far a stamp may be from the true time on a counter of constant rate: the clock's jitter, the counter's tick
  /// (up to 4 ns here) and the rate's error over one window.
  static let bound: Int64 = jitter + 20

  /// The gap before the next stamp: mostly a burst of commits, sometimes a pause, now and then a long one.
  static func gap(_ generator: inout SeededGenerator) -> Int64 {
    switch Int.random(in: 0..<100, using: &generator) {
    case 0..<80: Int64.random(in: 10...200, using: &generator)
    case 80..<95: Int64.random(in: 1_000...100_000, using: &generator)
    default: Int64.random(in: 1_000_000...50_000_000, using: &generator)
    }
  }

  /// What went wrong in one seed's run, kept to a few lines: one `#expect` per stamp made these tests hog the test
  /// run's threads under the thread sanitizer (45 seconds), long enough for other tests' failsafes to fire.
  struct Findings {
    private(set) var lines: [String] = []
    private(set) var count = 0

    mutating func check(_ condition: Bool, _ line: @autoclosure () -> String) {
      guard !condition else { return }
      count += 1
      if lines.count < 5 { lines.append(line()) }
    }
  }

  /// On a counter of constant rate, every stamp is within a few tens of nanoseconds of the clock read at the same
  /// instant (the plain twin), stamps never decrease, and the clock is read for a small part of them.
  @Test(arguments: 0..<16)
  func onAConstantRateCounter_stampsFollowTheClock(seed: UInt64) {
    var generator = SeededGenerator(seed: seed)
    var machine = Machine(
      now: Int64.random(in: 0...10_000_000_000_000, using: &generator),
      ticksPerNanosecond: Swift.Double.random(in: 0.25...4, using: &generator),
      offset: Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &generator), jitter: Self.jitter)
    var clock = CounterClock()
    var findings = Findings()
    var previous = Int64.min
    for _ in 0..<3_000 {
      machine.now += Self.gap(&generator)
      let stamp = machine.stamp(&clock, &generator)
      findings.check(abs(stamp - machine.now) <= Self.bound, "\(stamp) at \(machine.now)")
      findings.check(stamp >= previous, "\(stamp) after \(previous)")
      previous = stamp
    }
    // A steady rate, the rate known (the gaps above span far more than a millisecond): one read per window.
    machine.reads = 0
    let steady = 30_000
    for _ in 0..<steady {
      machine.now += 60
      let stamp = machine.stamp(&clock, &generator)
      findings.check(abs(stamp - machine.now) <= Self.bound, "\(stamp) at \(machine.now), steady")
    }
    #expect(findings.count == 0, "seed \(seed): \(findings.count) stamps off, first \(findings.lines)")
    #expect(machine.reads <= steady * 60 / Int(CounterClock.window) + 10)
  }

  /// A machine asleep: its counter stops while the clock goes on. The stamps taken in the first window of counting
  /// after it can carry a time before it (documented); after that, each is within the window of the clock, and
  /// within a few tens of nanoseconds once the rate has been measured again.
  @Test(arguments: 0..<8)
  func afterTheCounterStoppedWhileTheClockWentOn_stampsComeBackToTheClock(seed: UInt64) {
    var generator = SeededGenerator(seed: seed)
    var machine = Machine(
      now: 1_000_000_000_000, ticksPerNanosecond: Swift.Double.random(in: 0.25...4, using: &generator), offset: 0,
      jitter: Self.jitter)
    var clock = CounterClock()
    for _ in 0..<2_000 {
      machine.now += Self.gap(&generator)
      _ = machine.stamp(&clock, &generator)
    }
    // Asleep for a tenth of a second to an hour: the counter resumes from where it stopped.
    let stopped = machine.ticks
    let sleep = Int64.random(in: 100_000_000...3_600_000_000_000, using: &generator)
    machine.now += sleep
    let resumed = machine.now
    let offsetAfter = stopped &- Int64(Swift.Double(machine.now) * machine.ticksPerNanosecond)
    machine = Machine(
      now: machine.now, ticksPerNanosecond: machine.ticksPerNanosecond, offset: offsetAfter, jitter: Self.jitter,
      lastRead: machine.lastRead)
    var findings = Findings()
    var previous = Int64.min
    var settled = 0
    // Past two seconds after it (about 1.3 ms a gap on average).
    for _ in 0..<4_000 {
      machine.now += Self.gap(&generator)
      let stamp = machine.stamp(&clock, &generator)
      findings.check(stamp >= previous, "\(stamp) after \(previous)")
      previous = stamp
      let counted = Swift.Double(machine.now - resumed) * machine.ticksPerNanosecond
      guard counted > Swift.Double(CounterClock.window) * 4 * machine.ticksPerNanosecond else { continue }
      let error = abs(stamp - machine.now)
      findings.check(error <= CounterClock.window + Self.bound, "\(stamp) at \(machine.now)")
      if machine.now - resumed > 2 * CounterClock.rebase {
        settled += 1
        findings.check(error <= Self.bound, "\(stamp) at \(machine.now), settled")
      }
    }
    #expect(findings.count == 0, "seed \(seed): \(findings.count) stamps off, first \(findings.lines)")
    #expect(settled > 0, "seed \(seed): the run did not reach two seconds after the sleep")
  }

  /// Whatever the counter and the clock read (any 64-bit values, going back, jumping), nothing traps and stamps never
  /// decrease; while the clock never goes back, each stamp lies between the latest clock reading and one window after
  /// it, or repeats the one before.
  @Test(arguments: 0..<16)
  func onAnyReadings_nothingTraps_andStampsNeverDecrease(seed: UInt64) {
    var generator = SeededGenerator(seed: seed)
    let monotonic = seed % 2 == 0
    var clock = CounterClock()
    var ticks = Int64.random(in: .min ... .max, using: &generator)
    var reading: Int64 = monotonic ? Int64.random(in: -1_000_000_000...1_000_000_000, using: &generator) : 0
    var read: Int64?
    var findings = Findings()
    var previous = Int64.min
    for _ in 0..<5_000 {
      switch Int.random(in: 0..<10, using: &generator) {
      case 0: ticks = Int64.random(in: .min ... .max, using: &generator)
      case 1: ticks &-= Int64.random(in: 0...1_000_000, using: &generator)
      default: ticks &+= Int64.random(in: 0...100_000, using: &generator)
      }
      if monotonic {
        reading += Int64.random(in: 0...Int64.random(in: 0...2) * 1_000_000, using: &generator)
      } else {
        reading = Int64.random(in: .min ... .max, using: &generator)
      }
      let stamp = clock.nanoseconds(ticks: ticks) {
        read = reading
        return reading
      }
      findings.check(stamp >= previous, "\(stamp) after \(previous)")
      if monotonic, let read {
        findings.check(stamp >= read, "\(stamp) before the clock's \(read)")
        findings.check(
          stamp == previous || stamp <= read + CounterClock.window + 1, "\(stamp) past the window of \(read)")
      }
      previous = stamp
    }
    #expect(findings.count == 0, "seed \(seed): \(findings.count) stamps off, first \(findings.lines)")
  }

  /// A counter that does not move (what `ckatana_counter_ticks()` reads on other architectures), or moves too slowly
  /// to be a processor's counter (one tick every 10 ms): no rate is taken from it, and every stamp is the clock's
  /// reading.
  @Test(arguments: [0, 10_000_000] as [Int64])
  func onACounterThatBarelyMoves_everyStampIsTheClocks(nanosecondsPerTick: Int64) {
    var clock = CounterClock()
    var findings = Findings()
    var now: Int64 = 5_000_000_000
    var reads = 0
    let stamps = 2_000
    for step in 0..<stamps {
      now += step % 10 == 0 ? 3_000_000 : 50
      let ticks = nanosecondsPerTick == 0 ? 7 : now / nanosecondsPerTick
      let stamp = clock.nanoseconds(ticks: ticks) {
        reads += 1
        return now
      }
      findings.check(stamp == now, "\(stamp) at \(now)")
    }
    #expect(findings.count == 0, "\(findings.count) stamps off, first \(findings.lines)")
    #expect(reads == stamps)
  }

  /// A recorded store's commit times grow, and lie within what `ContinuousClock` measured around them, through enough
  /// commits for the counter's rate to be measured (each commit's dispatch awaited, so the clock is read around it).
  @Test func aRecordedStore_stampsThousandsOfCommits_withinTheClock() async throws {
    let store = Store<RecTimerState, EmptySideEffectDependencyContainer>(initialState: RecTimerState())
    try await store.waitUntilReady()
    let start = ContinuousClock.now
    let recorder = StoreRecorder<RecTimerState>(capacity: 4_000)
    try recorder.attach(to: store)
    var windows: [(from: Duration, to: Duration)] = []
    // Past the first millisecond (the rate measured), and past a pause longer than the window (spent here, between
    // two commits: it waits for nothing).
    for round in 0..<3_000 {
      if round == 1_500 {
        let pause = ContinuousClock.now
        while pause.duration(to: .now) < .milliseconds(2) {}
      }
      let from = start.duration(to: .now)
      try await store.dispatch(RecTimerTick())
      windows.append((from, start.duration(to: .now)))
    }
    let times = recorder.recording().commits.map(\.time)
    #expect(times.count == 3_000)
    #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
    // The recorder's clock starts at its attachment, after `start`: its times are at most as late as the clock's.
    // A stamp is off the clock by a few nanoseconds at most; allow a microsecond.
    let slack = Duration.microseconds(1)
    let outside = zip(times, windows).filter { time, window in time > window.to + slack }
    #expect(outside.isEmpty, "\(outside.prefix(3))")
  }
}
