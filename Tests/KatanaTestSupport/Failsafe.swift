// Failsafes that turn a hang into a test failure. The clock runs on a thread of its own, never on the
// cooperative pool, which the hang being detected may have starved.
//
// A failsafe catches hangs; it is not a timing check. Give it 30 seconds or more: the whole suite starts at once
// on two pool threads, and under the thread sanitizer on a busy 2-core machine a test may wait ten seconds for its
// turn to run (three scope tests with 10-second failsafes failed so while another build ran). Every bound here is
// multiplied by `failsafeScale`, which CI raises for its thread-sanitizer pass.
import Foundation
import KatanaPromises
import KatanaTesting

/// How many times longer every failsafe here waits: `KATANA_FAILSAFE_SCALE`, read as KatanaTesting reads it for its
/// own waits (`TestStoreConfiguration.defaultFailsafe`); 1 when unset.
///
/// CI's thread-sanitizer pass sets 4. There the whole suite starts at once, and tests that wait on the main actor or
/// behind the pool reported 65 to 110 seconds: 30-second failsafes (a model's first state, a sent side effect's
/// outcome, a read through a gate, a shutdown; and the test store's own) gave up on work that was only waiting for its
/// turn. A hang still fails: within the scaled bound, or at the suite's time limit (scaled too, by
/// `TimeLimitTrait.Duration.failsafeMinutes(_:)`), whichever comes first.
public let failsafeScale = Double(TestStoreConfiguration.failsafeScale)

/// Waits for `operation`, run in a new task, for at most `seconds` (times ``failsafeScale``) of wall-clock time.
///
/// Returns the operation's result, or nil if it did not finish in time (the task is then cancelled and left
/// to finish on its own).
public func withFailsafe<T: Sendable>(
  seconds: Double, _ operation: @escaping @Sendable () async -> T
) async -> T? {
  await FailsafeRace<T>.run(seconds: seconds, progress: nil, operation)
}

/// Waits for `operation`, run in a new task, until it returns or `progress` stops moving for `seconds` of wall-clock
/// time.
///
/// `progress` reads a count the operation raises as it goes (operations done, events seen); the failsafe reads it
/// every `seconds` and gives up only when it has not changed since the last read. A long run that keeps moving is
/// never cut short, however starved the machine (under the thread sanitizer, the first schedules of a fuzzer run while
/// the whole suite starts at once on two pool threads, and a 60-second bound on the whole schedule failed there); a
/// hang is reported within twice `seconds` of the last step before it. Returns nil when it gives up (the task is then
/// cancelled and left to finish on its own).
public func withFailsafe<T: Sendable>(
  seconds: Double, progress: @autoclosure @escaping @Sendable () -> Int,
  _ operation: @escaping @Sendable () async -> T
) async -> T? {
  await FailsafeRace<T>.run(seconds: seconds, progress: progress, operation)
}

/// The error a watchdog rejects a promise with when a test waited too long for it.
public struct WatchdogExpired: Error {
  public init() {}
}

/// Returns `promise`, rejecting it with ``WatchdogExpired`` if it is still pending after 30 seconds (times
/// ``failsafeScale``): a test that blocks a thread on it (`Hydra.await`) then fails instead of hanging the test run
/// (a suite's time limit cannot unblock a thread). Never reached when the code under test works.
public func failsafe<T>(_ promise: Promise<T>) -> Promise<T> {
  DispatchQueue.global().asyncAfter(deadline: .now() + 30 * failsafeScale) { [weak promise] in
    promise?.reject(WatchdogExpired())
  }
  return promise
}

/// Runs the blocking `body` on a thread of its own and returns whether it returned within `seconds` (times
/// ``failsafeScale``).
///
/// For deadlock tests: a body that deadlocks keeps its thread (and whatever lock it waits on) forever, but
/// the test goes on and fails instead of hanging.
public func completesOnThread(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
  let done = DispatchSemaphore(value: 0)
  let thread = Thread {
    body()
    done.signal()
  }
  thread.start()
  return done.wait(timeout: .now() + seconds * failsafeScale) == .success
}

/// The first of an operation's result and a timeout.
private final class FailsafeRace<T: Sendable>: Sendable {
  private struct State {
    var outcome: T??
    var continuation: CheckedContinuation<T?, Never>?
  }

  private let state = LockedValue(State())
  private let finished = DispatchSemaphore(value: 0)

  /// Runs `operation` in a new task and waits for it (see ``wait(seconds:progress:)``); cancels the task when the
  /// failsafe gives up.
  static func run(
    seconds: Double, progress: (@Sendable () -> Int)?, _ operation: @escaping @Sendable () async -> T
  ) async -> T? {
    let race = FailsafeRace<T>()
    let task = Task { race.finish(await operation()) }
    let result = await race.wait(seconds: seconds, progress: progress)
    if result == nil { task.cancel() }
    return result
  }

  func finish(_ value: T?) {
    let continuation = state.withLock { state -> CheckedContinuation<T?, Never>? in
      guard state.outcome == nil else { return nil }
      state.outcome = .some(value)
      defer { state.continuation = nil }
      return state.continuation
    }
    finished.signal()
    continuation?.resume(returning: value)
  }

  /// Waits for the outcome. Without `progress`, the clock gives up `seconds` (scaled) after it starts; with it, at
  /// the first read, one every `seconds` (scaled), that finds the count where the read before left it.
  func wait(seconds: Double, progress: (@Sendable () -> Int)?) async -> T? {
    let clock = Thread { [self] in
      var last = progress?()
      while finished.wait(timeout: .now() + seconds * failsafeScale) == .timedOut {
        let now = progress?()
        if now == nil || now == last {
          finish(nil)
          return
        }
        last = now
      }
    }
    clock.start()
    return await withCheckedContinuation { continuation in
      let outcome = state.withLock { state -> T?? in
        if let outcome = state.outcome { return outcome }
        state.continuation = continuation
        return nil
      }
      if let outcome { continuation.resume(returning: outcome) }
    }
  }
}

/// How much longer stress tests and the schedule fuzzer run than in CI: `KATANA_SOAK=<factor>` (for example
/// `KATANA_SOAK=50 swift test --filter Fuzz`). 1 when unset.
public let soakFactor: Int = {
  guard let value = ProcessInfo.processInfo.environment["KATANA_SOAK"], let factor = Int(value), factor > 0 else {
    return 1
  }
  return factor
}()
