import Foundation

/// A clock whose time moves only when a test moves it, so that debounce, throttle, timers and any other
/// sleep run deterministically, without real waiting.
///
/// Give it to the store, then advance it by hand:
///
/// ```swift
/// let clock = TestClock()
/// let store = Store<AppState, AppDependencies>(
///   initialState: AppState(), configuration: StoreConfiguration(clock: clock))
///
/// let search = store.send(QueryChanged(query: "ka"))   // debounces the search by 300 ms
/// try await clock.waitForSleepers(count: 1)            // the debounce is now sleeping on the clock
/// clock.advance(by: .milliseconds(299))                // nothing happens
/// clock.advance(by: .milliseconds(1))                  // the search runs
/// try await search.value
/// ```
///
/// ## How time moves
/// - `now` starts at ``Instant/zero`` and changes only through ``advance(by:)``, ``advance(to:)`` and
///   ``run()``. Time never goes back: advancing to an earlier instant does nothing.
/// - ``sleep(until:tolerance:)`` returns at once if the deadline has been reached; otherwise the task sleeps
///   until an advance reaches the deadline, or until the task is cancelled (it then throws
///   `CancellationError`).
/// - An advance moves `now` to its target in one step, then resumes every sleeper whose deadline has come,
///   in deadline order (in the order they started sleeping, for equal deadlines). A woken task that
///   sleeps again measures from the new `now`, as after a real pause. So advance in the steps your code
///   sleeps in: a side effect that sleeps one second, then another second, needs two advances, with a wait
///   for the second sleep between them.
/// - Advancing does not wait for the woken tasks: they run concurrently. Synchronise on what they do (the
///   store's dispatch returning, a state change, ``waitForSleepers(count:)``), never on a sleep.
///
/// The one race to think about is advancing before the code under test has started to sleep: the advance
/// then finds nobody to wake, and the sleep that starts later measures from the new `now`. Call
/// ``waitForSleepers(count:)`` first, as in the example.
///
/// Everything is guarded by a lock: a `TestClock` may be shared by any number of tasks and advanced from
/// any of them.
public final class TestClock: Clock, @unchecked Sendable {
  // Sendable: every mutable property is only touched while holding `lock`.

  /// A point in time on a ``TestClock``: a duration since the clock's zero.
  public struct Instant: InstantProtocol, CustomStringConvertible {
    /// The time since the clock's zero.
    public var offset: Duration

    /// The instant `offset` after the clock's zero.
    public init(offset: Duration) {
      self.offset = offset
    }

    /// The clock's zero, where a new ``TestClock`` starts.
    public static var zero: Instant { Instant(offset: .zero) }

    /// The instant `duration` later (earlier, for a negative duration).
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    /// The duration from this instant to `other`.
    public func duration(to other: Instant) -> Duration {
      other.offset - offset
    }

    /// Whether `lhs` comes before `rhs`.
    public static func < (lhs: Instant, rhs: Instant) -> Bool {
      lhs.offset < rhs.offset
    }

    /// The offset, for example `1.5 seconds`.
    public var description: String {
      "\(offset)"
    }
  }

  private struct Sleeper {
    let id: UInt64
    let deadline: Instant
    let continuation: UnsafeContinuation<Void, any Error>
  }

  private struct SleeperWaiter {
    let count: Int
    let continuation: UnsafeContinuation<Void, Never>
  }

  private let lock = NSLock()
  private var currentNow: Instant
  private var sleepers: [Sleeper] = []
  private var sleeperWaiters: [UInt64: SleeperWaiter] = [:]
  private var lastID: UInt64 = 0

  /// Creates a clock whose time is `now`.
  public init(now: Instant = .zero) {
    currentNow = now
  }

  /// The clock's current time; it changes only when the clock is advanced.
  public var now: Instant {
    withLock { currentNow }
  }

  /// Zero: the clock has no granularity of its own.
  public var minimumResolution: Duration {
    .zero
  }

  /// Suspends until the clock is advanced to `deadline`, or returns at once if it already has been.
  ///
  /// - Parameters:
  ///   - deadline: When to resume.
  ///   - tolerance: Ignored: the clock resumes sleepers exactly at their deadline.
  /// - Throws: `CancellationError` if the task is cancelled, before or while sleeping.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    let id = withLock { () -> UInt64? in
      if deadline <= currentNow { return nil }
      lastID &+= 1
      return lastID
    }
    guard let id else { return }
    try await withTaskCancellationHandler {
      try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
        let (outcome, waiters) = withLock { () -> (Result<Void, any Error>?, [UnsafeContinuation<Void, Never>]) in
          if deadline <= currentNow { return (.success(()), []) }
          // Checked under the lock: a cancellation handler running later finds the sleeper to remove.
          if Task.isCancelled { return (.failure(CancellationError()), []) }
          sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
          return (nil, takeSatisfiedWaiters())
        }
        if let outcome {
          continuation.resume(with: outcome)
        }
        for waiter in waiters {
          waiter.resume()
        }
      }
    } onCancel: {
      let sleeper = withLock { () -> Sleeper? in
        guard let index = sleepers.firstIndex(where: { $0.id == id }) else { return nil }
        return sleepers.remove(at: index)
      }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves the clock forward by `duration` and resumes every sleeper whose deadline has come, in deadline
  /// order; see ``advance(to:)``.
  ///
  /// A negative duration does nothing: time never goes back.
  public func advance(by duration: Duration) {
    let target = withLock { currentNow.advanced(by: duration) }
    advance(to: target)
  }

  /// Moves the clock to `deadline` and resumes every sleeper whose deadline has come, in deadline order.
  ///
  /// `now` reaches `deadline` before any sleeper resumes, so every woken task sees the new time. The woken
  /// tasks run concurrently with the caller, which does not wait for them. An earlier `deadline` leaves
  /// the time unchanged (time never goes back).
  public func advance(to deadline: Instant) {
    let due = withLock { () -> [Sleeper] in
      if deadline > currentNow {
        currentNow = deadline
      }
      let now = currentNow
      let due = sleepers.filter { $0.deadline <= now }
      guard !due.isEmpty else { return [] }
      sleepers.removeAll { $0.deadline <= now }
      return due.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
    }
    for sleeper in due {
      sleeper.continuation.resume()
    }
  }

  /// Advances to the latest deadline among the tasks sleeping now, resuming all of them in deadline order.
  ///
  /// Sleeps that the woken tasks start afterwards are not included: call `run()` again once they sleep.
  /// So a repeating timer never makes `run()` loop forever. Does nothing when nobody sleeps.
  public func run() {
    let latest = withLock { sleepers.map(\.deadline).max() }
    if let latest {
      advance(to: latest)
    }
  }

  /// The number of tasks sleeping on this clock now.
  public var sleeperCount: Int {
    withLock { sleepers.count }
  }

  /// The earliest deadline among the tasks sleeping now, or nil if nobody sleeps.
  public var nextDeadline: Instant? {
    withLock { sleepers.map(\.deadline).min() }
  }

  /// Returns once at least `count` tasks are sleeping on this clock (at once if they already are).
  ///
  /// Call it before advancing, so that the advance finds the sleepers it should wake. It waits for an
  /// event, not for time.
  ///
  /// - Throws: `CancellationError` if the calling task is cancelled first.
  public func waitForSleepers(count: Int = 1) async throws {
    let id = withLock { () -> UInt64 in
      lastID &+= 1
      return lastID
    }
    try await withTaskCancellationHandler {
      await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
        let waiting = withLock { () -> Bool in
          if sleepers.count >= count || Task.isCancelled { return false }
          sleeperWaiters[id] = SleeperWaiter(count: count, continuation: continuation)
          return true
        }
        if !waiting {
          continuation.resume()
        }
      }
      try Task.checkCancellation()
    } onCancel: {
      withLock { sleeperWaiters.removeValue(forKey: id) }?.continuation.resume()
    }
  }

  /// Removes and returns the waiters whose count is reached. Call with the lock held.
  private func takeSatisfiedWaiters() -> [UnsafeContinuation<Void, Never>] {
    let count = sleepers.count
    let satisfied = sleeperWaiters.filter { $0.value.count <= count }
    guard !satisfied.isEmpty else { return [] }
    for id in satisfied.keys {
      sleeperWaiters[id] = nil
    }
    return satisfied.values.map(\.continuation)
  }

  private func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body()
  }
}
