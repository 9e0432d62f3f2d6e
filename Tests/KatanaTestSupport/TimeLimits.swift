import KatanaTesting
import Testing

extension TimeLimitTrait.Duration {
  /// `minutes` times `KATANA_FAILSAFE_SCALE` (``failsafeScale``): the time limit of a suite or test, which catches a
  /// hang as a failsafe does, and so waits as much longer as every failsafe does where the scale is raised.
  ///
  /// CI's thread-sanitizer pass sets 4, so a three-minute limit is twelve minutes there. Three-minute limits failed a
  /// thread-sanitizer run (2026-12-02) that shared two cores with a release build, package-benchmark's build and a
  /// browser test: the ordering, serial-executor and core-review suites, whose tests take 18 to 37 seconds in a debug
  /// run, went past them while nothing hung. A hang still fails, at the scaled limit.
  public static func failsafeMinutes(_ minutes: Int) -> Self {
    failsafeMinutes(minutes, scale: TestStoreConfiguration.failsafeScale)
  }

  /// `minutes` times `scale`: ``failsafeMinutes(_:)`` with a factor other than this run's, for its tests.
  public static func failsafeMinutes(_ minutes: Int, scale: Int) -> Self {
    .minutes(minutes * scale)
  }
}
