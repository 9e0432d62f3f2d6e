// Failsafes that turn a hang into a test failure. The clock runs on a thread of its own, never on the
// cooperative pool, which the hang being detected may have starved.
//
// A failsafe catches hangs; it is not a timing check. Give it 30 seconds or more: the whole suite starts at once
// on two pool threads, and under the thread sanitizer on a busy 2-core machine a test may wait ten seconds for its
// turn to run (three scope tests with 10-second failsafes failed so while another build ran).
import Foundation

/// Waits for `operation`, run in a new task, for at most `seconds` of wall-clock time.
///
/// Returns the operation's result, or nil if it did not finish in time (the task is then cancelled and left
/// to finish on its own).
public func withFailsafe<T: Sendable>(
  seconds: Double, _ operation: @escaping @Sendable () async -> T
) async -> T? {
  let race = FailsafeRace<T>()
  let task = Task { race.finish(await operation()) }
  let result = await race.wait(seconds: seconds)
  if result == nil { task.cancel() }
  return result
}

/// Runs the blocking `body` on a thread of its own and returns whether it returned within `seconds`.
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
  return done.wait(timeout: .now() + seconds) == .success
}

/// The first of an operation's result and a timeout.
private final class FailsafeRace<T: Sendable>: Sendable {
  private struct State {
    var outcome: T??
    var continuation: CheckedContinuation<T?, Never>?
  }

  private let state = LockedValue(State())
  private let finished = DispatchSemaphore(value: 0)

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

  func wait(seconds: Double) async -> T? {
    let clock = Thread { [self] in
      if finished.wait(timeout: .now() + seconds) == .timedOut {
        finish(nil)
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
