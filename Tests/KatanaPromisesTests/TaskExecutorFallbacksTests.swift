import KatanaTestSupport
import Testing
import XCTest

@testable import KatanaPromises

// The test hook that makes `.katana6` stores and `promiseDispatch` start their tasks as on macOS 13-14 /
// iOS 16-17, where Swift has no task executors: the `.katana6` suites run with it in .ci/run's second run
// (KATANA_TASK_EXECUTOR_FALLBACKS=forced). These tests check, in every run, that the hook reaches each place
// that chooses, and that it holds for everything a store created under it does.

@Suite("TaskExecutorFallbacks: the Apple versions without task executors, forced", .timeLimit(.failsafeMinutes(3)))
struct TaskExecutorFallbacksTests {
  /// Where code ran: whether its task preferred each of the package's executors, and whether it saw the hook.
  struct Place: Equatable, Sendable {
    var prefersStoreExecutor: Bool
    var prefersBlockingExecutor: Bool
    var fallbacksForced: Bool
  }

  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  @Test(arguments: [false, true])
  func legacyTasks_preferTheStoresExecutor_unlessForced_andForcedTasksKeepTheHook(forced: Bool) async {
    let places = Recorder<Place>()
    await TaskExecutorFallbacks.$areForced.withValue(forced) {
      await LegacyTasks.start { places.append(.current) }.value
      await LegacyTasks.startDetached { places.append(.current) }.value
    }
    let expected = Place(prefersStoreExecutor: !forced, prefersBlockingExecutor: false, fallbacksForced: forced)
    #expect(places.values == [expected, expected])
  }

  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  @Test(arguments: [false, true])
  func katana6Store_createdWhileForced_takesTheFallbacksWhereverItIsUsedFrom(forced: Bool) async throws {
    // Created inside the hook's scope, used outside it: the configuration decides once, when it is made.
    let store = TaskExecutorFallbacks.$areForced.withValue(forced) { makeStore() }
    let places = Recorder<Place>()
    let bodyPlaces = Recorder<Place>()
    // A sent side effect's task (the store's side-effect starter), a synchronous Katana 6 body, and a
    // `promiseDispatch` made from that body (the dependencies were built by the store).
    _ = try await store.dispatch(
      Run { context in
        bodyPlaces.append(.current)
        try Hydra.await(context.dependencies.dispatch(Run { _ in places.append(.current) }))
      }
    ).value
    // The task that runs the body prefers `BlockingTaskExecutor` only on the default path; a body on a thread
    // of its own (the fallback) runs in the task, on the island's executor, and sees the hook too.
    #expect(
      bodyPlaces.values
        == [Place(prefersStoreExecutor: false, prefersBlockingExecutor: !forced, fallbacksForced: forced)])
    // The nested dispatch's task is `promiseDispatch`'s, which prefers the store's executor on the default path.
    #expect(
      places.values
        == [Place(prefersStoreExecutor: !forced, prefersBlockingExecutor: false, fallbacksForced: forced)])
  }
}

/// The wiring of .ci/run's two runs: a suite with `.taskExecutorPathOfThisRun` (Swift Testing) or
/// `onTaskExecutorPathOfThisRun` in `invokeTest` (XCTest) takes the fallbacks in the run with
/// KATANA_TASK_EXECUTOR_FALLBACKS=forced, and the default path otherwise.
@Suite(
  "The .katana6 suites take the path this run asks for", .timeLimit(.failsafeMinutes(3)), .taskExecutorPathOfThisRun)
struct TaskExecutorPathOfThisRunTests {
  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  @Test func katana6Store_sideEffectBody_runsWhereThisRunAsks() async throws {
    #expect(try await sideEffectBodyPlace() == .expectedForThisRun)
  }
}

final class TaskExecutorPathOfThisRunXCTests: XCTestCase {
  override func invokeTest() {
    onTaskExecutorPathOfThisRun { super.invokeTest() }
  }

  func testKatana6Store_sideEffectBody_runsWhereThisRunAsks() async throws {
    guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else { return }
    let place = try await sideEffectBodyPlace()
    XCTAssertEqual(place, .expectedForThisRun)
  }
}

/// Where the body of a synchronous side effect dispatched to a new `.katana6` store runs.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private func sideEffectBodyPlace() async throws -> TaskExecutorFallbacksTests.Place? {
  let places = Recorder<TaskExecutorFallbacksTests.Place>()
  let store = makeStore()
  try await store.dispatch(Run { _ in places.append(.current) }).value
  withExtendedLifetime(store) {}
  return places.values.first
}

extension TaskExecutorFallbacksTests.Place {
  /// Where a `.katana6` store's side-effect body runs on the path this run asks for.
  static var expectedForThisRun: Self {
    let forced = taskExecutorFallbacksForcedInThisRun
    return Self(prefersStoreExecutor: false, prefersBlockingExecutor: !forced, fallbacksForced: forced)
  }

  /// Where the caller runs.
  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  static var current: Self {
    Self(
      prefersStoreExecutor: currentTaskPrefers(LegacyTaskExecutor.shared),
      prefersBlockingExecutor: BlockingTaskExecutor.isPreferredByCurrentTask,
      fallbacksForced: TaskExecutorFallbacks.areForced)
  }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private func currentTaskPrefers(_ executor: some TaskExecutor) -> Bool {
  let own = executor.asUnownedTaskExecutor()
  return withUnsafeCurrentTask { task in task?.unownedTaskExecutor == own }
}
