extension Clock {
  /// A sequence of this clock's time, one element every `interval`: a timer that code outside a store (a view
  /// model, a test's own task) can loop over, as pointfreeco/swift-clocks' `timer(interval:tolerance:)`.
  ///
  /// ```swift
  /// let clock = TestClock()
  /// let ticks = Task {
  ///   var count = 0
  ///   for await _ in clock.timer(interval: .seconds(1)).prefix(3) { count += 1 }
  ///   return count
  /// }
  /// await clock.run()
  /// #expect(await ticks.value == 3)
  /// ```
  ///
  /// A side effect has a timer of its own, `context.timer(id:every:tick:)`, which the store can cancel by id:
  /// use that one in a side effect.
  ///
  /// - Parameters:
  ///   - interval: The time between ticks.
  ///   - tolerance: Passed to each sleep of the clock.
  /// - Returns: A ``ClockTimer`` on this clock.
  public func timer(interval: Duration, tolerance: Duration? = nil) -> ClockTimer<Self> {
    ClockTimer(clock: self, interval: interval, tolerance: tolerance)
  }
}

/// A sequence of a clock's time, one element every interval, made by `timer(interval:tolerance:)` on any clock
/// (``TestClock``'s included).
///
/// The iterator sleeps on the clock until the next tick and returns the clock's `now` when it wakes. Ticks
/// keep to the schedule `start + interval`, `start + 2 * interval`, and so on, measured from the first call of
/// `next()`, without drift. Tick times that have already passed when the iterator asks for the next one (the
/// loop's body ran long) are skipped, never delivered in a burst. A ``TestClock`` advanced by three intervals
/// at once ticks three times anyway: its advance wakes the sleeper at each tick time in turn.
///
/// The sequence ends when the task that iterates it is cancelled (its sleep throws), and, at once, for an
/// interval that is not longer than zero: such a timer would tick without end at the same instant.
public struct ClockTimer<C: Clock>: AsyncSequence, Sendable {
  /// The clock's time at each tick.
  public typealias Element = C.Instant

  /// A timer never fails: cancellation ends it.
  public typealias Failure = Never

  let clock: C
  let interval: C.Duration
  let tolerance: C.Duration?

  /// An iterator that sleeps on the clock until each tick.
  public func makeAsyncIterator() -> Iterator {
    Iterator(clock: interval > .zero ? clock : nil, interval: interval, tolerance: tolerance)
  }

  /// Sleeps on the clock until the next tick; not `Sendable`: iterate it from one task.
  public struct Iterator: AsyncIteratorProtocol {
    /// The clock, until the timer ends.
    private var clock: C?
    private let interval: C.Duration
    private let tolerance: C.Duration?
    /// The tick time slept until last, nil before the first tick.
    private var lastTick: C.Instant?

    init(clock: C?, interval: C.Duration, tolerance: C.Duration?) {
      self.clock = clock
      self.interval = interval
      self.tolerance = tolerance
    }

    /// Sleeps until the next tick and returns the clock's time then; nil once the timer has ended.
    public mutating func next() async -> C.Instant? {
      guard let clock else { return nil }
      let tick = nextTick(after: lastTick ?? clock.now, now: clock.now)
      do {
        try await clock.sleep(until: tick, tolerance: tolerance)
      } catch {
        self.clock = nil
        return nil
      }
      lastTick = tick
      return clock.now
    }

    /// The first tick time after `last` that has not passed at `now`.
    private func nextTick(after last: C.Instant, now: C.Instant) -> C.Instant {
      let next = last.advanced(by: interval)
      guard next < now else { return next }
      // Skip the ticks that have passed: the smallest whole number of intervals that reaches `now`.
      let missed = (next.duration(to: now) / interval).rounded(.up)
      return next.advanced(by: interval * Int(missed))
    }
  }
}
