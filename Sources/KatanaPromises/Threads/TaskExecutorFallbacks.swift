/// The switch between the two ways `.katana6` stores and ``promiseDispatch(_:)`` start their tasks: on task
/// executors of the package's own (``LegacyTaskExecutor``, ``BlockingTaskExecutor``) where Swift has task
/// executors (Linux; macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2 and later), and on Swift's cooperative
/// pool, with side-effect bodies handed to threads of their own, on the Apple versions before those
/// (macOS 13-14, iOS 16-17, tvOS 16-17, watchOS 9-10).
///
/// `#available` is always true on Linux, so without this hook the fallbacks would never run in the tests.
/// Every place that chooses checks ``areForced`` before `#available`: `LegacyTasks`, the task starters of
/// `StoreConfiguration.katana6`, and `LegacySideEffectRunner`.
package enum TaskExecutorFallbacks {
  /// Test hook: while true, tasks are started as on the Apple versions without task executors.
  ///
  /// A task-local value, so that tests that force the fallbacks and tests that do not can run at the same
  /// time. A `.katana6` configuration reads it when it is created, and the tasks its store starts, and those
  /// ``promiseDispatch(_:)`` starts, keep it for their whole run (the detached ones bind it again), so
  /// everything that runs for that store takes the fallbacks, as it would on those versions.
  @TaskLocal package static var areForced = false
}
