import Foundation
import KatanaPromises
import Testing

// `.katana6` stores start their tasks on task executors of the package's own where Swift has task executors,
// and on the cooperative pool on macOS 13-14 / iOS 16-17 (see `TaskExecutorFallbacks`). `#available` is always
// true on Linux, so the suites of `.katana6` stores take that second path only in a run with
// KATANA_TASK_EXECUTOR_FALLBACKS=forced, which .ci/run does after the plain `swift test`. Each of those suites
// runs its tests inside `onTaskExecutorPathOfThisRun` (XCTest cases, from `invokeTest`) or with the
// `.taskExecutorPathOfThisRun` trait (Swift Testing).

/// Whether this run forces the fallbacks of the Apple versions without task executors:
/// `KATANA_TASK_EXECUTOR_FALLBACKS=forced`.
public let taskExecutorFallbacksForcedInThisRun =
  ProcessInfo.processInfo.environment["KATANA_TASK_EXECUTOR_FALLBACKS"] == "forced"

/// Runs `body` with `TaskExecutorFallbacks.areForced` as this run asks. For an XCTest case of a `.katana6`
/// store: `override func invokeTest() { onTaskExecutorPathOfThisRun { super.invokeTest() } }` (set-up,
/// the test, and the task an `async` test runs in all see it).
public func onTaskExecutorPathOfThisRun<Result>(_ body: () throws -> Result) rethrows -> Result {
  try TaskExecutorFallbacks.$areForced.withValue(taskExecutorFallbacksForcedInThisRun, operation: body)
}

/// A trait for the Swift Testing suites of `.katana6` stores: each test runs with
/// `TaskExecutorFallbacks.areForced` as this run asks.
public struct TaskExecutorPathOfThisRun: SuiteTrait, TestTrait, TestScoping {
  public var isRecursive: Bool { true }

  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    try await TaskExecutorFallbacks.$areForced.withValue(taskExecutorFallbacksForcedInThisRun) {
      try await function()
    }
  }
}

extension Trait where Self == TaskExecutorPathOfThisRun {
  /// Runs each test with `TaskExecutorFallbacks.areForced` as this run asks (KATANA_TASK_EXECUTOR_FALLBACKS).
  public static var taskExecutorPathOfThisRun: Self { TaskExecutorPathOfThisRun() }
}
