/// A point in time on a store's clock, fixed when it is created, to sleep until later.
///
/// Deadlines are taken when a tool is called, not when its task starts sleeping, so that the time between
/// the two (task start-up, or a test advancing a manual clock meanwhile) does not stretch the wait.
struct EffectDeadline: Sendable {
  private let sleepUntilDeadline: @Sendable () async throws -> Void

  /// The instant `duration` after the clock's current time.
  init(_ clock: any Clock<Duration>, after duration: Duration) {
    self = Self.make(clock, after: duration)
  }

  private init(sleep: @escaping @Sendable () async throws -> Void) {
    sleepUntilDeadline = sleep
  }

  private static func make<C: Clock<Duration>>(_ clock: C, after duration: Duration) -> EffectDeadline {
    let deadline = clock.now.advanced(by: duration)
    return EffectDeadline { try await clock.sleep(until: deadline, tolerance: nil) }
  }

  /// Sleeps until the deadline; returns at once if it has passed.
  ///
  /// - Throws: `CancellationError` if the task is cancelled (the clock's behaviour).
  func sleep() async throws {
    try await sleepUntilDeadline()
  }
}

/// A timer's schedule on a store's clock: `start + interval`, `start + 2 * interval`, and so on, where
/// `start` is when the timer was created.
struct EffectTimer: Sendable {
  private let schedule: @Sendable (_ tick: () async throws -> Void) async throws -> Never

  init(_ clock: any Clock<Duration>, every interval: Duration) {
    self = Self.make(clock, every: interval)
  }

  private init(schedule: @escaping @Sendable (_ tick: () async throws -> Void) async throws -> Never) {
    self.schedule = schedule
  }

  private static func make<C: Clock<Duration>>(_ clock: C, every interval: Duration) -> EffectTimer {
    let start = clock.now
    return EffectTimer { tick in
      var deadline = start.advanced(by: interval)
      while true {
        try await clock.sleep(until: deadline, tolerance: nil)
        deadline = nextTick(after: deadline, now: clock.now, interval: interval)
        try await tick()
      }
    }
  }

  /// Calls `tick` at each time of the schedule until the task is cancelled (then throws
  /// `CancellationError`) or `tick` throws.
  ///
  /// Each wake-up makes one tick. Tick times that have passed when the timer wakes (because the previous
  /// tick ran long, or the process was suspended) are merged into that one: the timer never bursts to catch
  /// up, and stays on its schedule. The next tick time is chosen when the timer wakes, before `tick` runs.
  func run(_ tick: () async throws -> Void) async throws -> Never {
    try await schedule(tick)
  }

  /// The first time of the schedule `last + k * interval` (k ≥ 1) that is later than `now`.
  static func nextTick<I: InstantProtocol<Duration>>(after last: I, now: I, interval: Duration) -> I {
    let next = last.advanced(by: interval)
    guard next <= now else { return next }
    let missed = Int((next.duration(to: now) / interval).rounded(.down))
    return next.advanced(by: interval * (missed + 1))
  }
}
