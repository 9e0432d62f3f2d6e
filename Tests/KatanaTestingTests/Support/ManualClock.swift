/// A clock whose time moves only when the test calls `advance(by:)`, and which tells the test how many
/// tasks sleep on it, so that tests synchronise on "the side effect is sleeping" instead of on time.
///
/// A minimal stand-in for the `TestClock` of the effect toolkit, used by this target's tests only.
final class ManualClock: Clock, Sendable {
  struct Instant: InstantProtocol {
    var offset: Duration

    func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    func duration(to other: Instant) -> Duration { other.offset - offset }
    static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
  }

  private struct Sleeper {
    let deadline: Instant
    let continuation: UnsafeContinuation<Void, any Error>
  }

  private struct ClockState {
    var now = Instant(offset: .zero)
    var lastID: UInt64 = 0
    var sleepers: [UInt64: Sleeper] = [:]
  }

  private let state = LockedValue(ClockState())
  private let sleepersArrived = EventCounter()

  var now: Instant { state.withLock { $0.now } }
  var minimumResolution: Duration { .zero }

  /// How many tasks have started sleeping on this clock so far (including those that woke up since).
  var sleepCount: Int { sleepersArrived.count }

  func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    let id = state.withLock { state -> UInt64 in
      state.lastID += 1
      return state.lastID
    }
    try await withTaskCancellationHandler {
      try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
        let immediate: Result<Void, any Error>? = state.withLock { state in
          if Task.isCancelled { return .failure(CancellationError()) }
          if deadline <= state.now { return .success(()) }
          state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
          return nil
        }
        if let immediate {
          continuation.resume(with: immediate)
        } else {
          sleepersArrived.increment()
        }
      }
    } onCancel: {
      let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves time forward and wakes every sleeper whose deadline has come, earliest first.
  func advance(by duration: Duration) {
    let due = state.withLock { state -> [Sleeper] in
      state.now = state.now.advanced(by: duration)
      let now = state.now
      let due = state.sleepers.filter { $0.value.deadline <= now }
      for id in due.keys { state.sleepers[id] = nil }
      return due.values.sorted { $0.deadline < $1.deadline }
    }
    for sleeper in due {
      sleeper.continuation.resume()
    }
  }

  /// Returns once `count` sleeps have started on this clock since it was created.
  func waitForSleeps(_ count: Int) async {
    await sleepersArrived.wait(for: count)
  }
}
