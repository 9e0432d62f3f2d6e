import Foundation
import Katana

/// How strictly a ``TestStore`` checks what happened.
public enum Exhaustivity: Sendable, Equatable {
  /// Every state change and every received item must be asserted, and no work may be left running when the
  /// test ends. The default.
  ///
  /// - A state change is asserted by applying your mutation to the state *before* the item: the result must
  ///   equal the state after it, so a field you forget to mention fails the test.
  /// - Every item that side effects dispatch must be asserted with `receive`, in order, before the test
  ///   dispatches anything else and before it ends.
  /// - Work still running when the test store is released, or when ``TestStore/finish(fileID:filePath:line:column:)``
  ///   gives up waiting, records an issue.
  case on

  /// Only what the test names is checked.
  ///
  /// - A state change is asserted by applying your mutation to the state *after* the item: the mutation
  ///   must not change it. So only the fields the mutation assigns are checked; write absolute values
  ///   (`$0.count = 2`), not relative changes (`$0.count += 1`).
  /// - `receive` skips received items until one matches; unasserted items are not reported.
  /// - Work still running at the end is not reported: ``TestStore/finish(fileID:filePath:line:column:)``
  ///   cancels it.
  ///
  /// With `showSkippedAssertions`, what the test did not check is shown as known issues (Swift Testing's
  /// `withKnownIssue`): visible in the test's output, without failing it. Use it to see what a
  /// non-exhaustive test leaves out, or while turning it into an exhaustive one.
  case off(showSkippedAssertions: Bool)

  /// Only what the test names is checked, silently: ``off(showSkippedAssertions:)`` without showing what
  /// was skipped.
  public static let off = Exhaustivity.off(showSkippedAssertions: false)

  /// Whether skipped assertions are shown as known issues.
  var showsSkippedAssertions: Bool {
    if case .off(showSkippedAssertions: true) = self { return true }
    return false
  }
}

/// Settings of a ``TestStore``.
///
/// ```swift
/// var configuration = TestStoreConfiguration()
/// configuration.exhaustivity = .off
/// configuration.clock = testClock       // the store's clock, which side effects sleep on
/// let store = TestStore(initialState: SearchState(), configuration: configuration)
/// ```
public struct TestStoreConfiguration: Sendable {
  /// How strictly the test store checks; ``Exhaustivity/on`` by default. Also settable on the store, at any
  /// point of a test (``TestStore/exhaustivity``).
  public var exhaustivity: Exhaustivity

  /// The configuration of the store under test.
  ///
  /// The test store turns the store's activity tracking on (so that it knows when nothing is in flight) and
  /// starts the store's tasks on a serial executor of its own (so that it knows when nothing can run);
  /// everything else is used as given.
  public var store: StoreConfiguration

  /// The store's clock (`StoreConfiguration.clock`), which side effects reach through
  /// `SideEffectContext.clock`. Inject a ``TestClock`` to test debounces, throttles and timers without
  /// waiting for real time.
  ///
  /// If the test sets no clock (neither here nor through ``store``), the test store does not let the code
  /// under test wait for real time: it gives the store a ``TestClock`` that records an issue naming the
  /// sleeper the first time anything sleeps on it (only the test could move that clock, and the test does
  /// not know it). To really wait for real time, set `configuration.clock = ContinuousClock()` here.
  public var clock: any Clock<Duration> {
    get { store.clock }
    set {
      store.clock = newValue
      clockWasSet = true
    }
  }

  /// Whether ``clock`` was set here.
  private var clockWasSet = false

  /// Whether the test chose the store's clock: through ``clock``, or by giving ``store`` a clock other than
  /// the default `ContinuousClock`.
  var isClockSet: Bool {
    clockWasSet || !(store.clock is ContinuousClock)
  }

  /// How long the test store waits for the store before it gives up, records an issue and moves on: a hang
  /// failsafe, ``defaultFailsafe`` (30 seconds) by default.
  ///
  /// The test store never waits for a duration to decide that something passed. It waits for events: the
  /// item it awaits returning, the item it expects arriving, the store having no work in flight. This bound
  /// only turns a wait that would never end (an effect blocked forever, a clock that nobody advances) into a
  /// failed test with a message that lists what is still running. It is measured on a `ContinuousClock`,
  /// never on ``clock``.
  public var failsafe: Duration

  /// Whether the test store keeps a log of every item dispatched to the store, the test's own and the
  /// received ones, in the order its interceptor saw them (``TestStore/dispatchLog``). Off by default.
  public var recordsDispatches: Bool

  /// The clock the failsafe is measured on. Tests of the test store replace it to expire the failsafe
  /// without waiting.
  package var failsafeClock: any Clock<Duration> = ContinuousClock()

  /// Whether the test store runs the store's work on a serial executor of its own (where task executors are
  /// available). Tests of the test store turn it off to check the fallback that Apple platforms before
  /// macOS 15 and iOS 18 use.
  package var usesSerialExecutor = true

  /// Receives the skipped assertions that ``Exhaustivity/off(showSkippedAssertions:)`` shows, instead of
  /// Swift Testing's known issues. Tests of the test store read them here.
  package var skippedAssertionHandler: (@Sendable (String) -> Void)?

  /// Creates a configuration.
  ///
  /// - Parameters:
  ///   - exhaustivity: How strictly the test store checks.
  ///   - store: The configuration of the store under test; its clock is the one side effects use.
  ///   - failsafe: How long the test store waits for the store before it records an issue instead of hanging.
  ///   - recordsDispatches: Whether to keep a log of every dispatched item.
  public init(
    exhaustivity: Exhaustivity = .on,
    store: StoreConfiguration = StoreConfiguration(),
    failsafe: Duration = TestStoreConfiguration.defaultFailsafe,
    recordsDispatches: Bool = false
  ) {
    self.exhaustivity = exhaustivity
    self.store = store
    self.failsafe = failsafe
    self.recordsDispatches = recordsDispatches
  }
}

extension TestStoreConfiguration {
  /// The failsafe of every wait in KatanaTesting that is given none: 30 seconds, times the whole number in the
  /// `KATANA_FAILSAFE_SCALE` environment variable when one from 1 to 100 is set.
  ///
  /// A failsafe turns a hang into a failed test; it never decides that something passed. On a machine much slower
  /// than the one the tests were written on, work that is only waiting for its turn can outlast it: under the
  /// thread sanitizer, a whole suite starting at once on two cores kept some tests' work from running for over 30
  /// seconds. Set `KATANA_FAILSAFE_SCALE=4` for such a run (Katana's own CI does, for its thread-sanitizer pass);
  /// a hang is then reported after 2 minutes instead of 30 seconds. Any other value (not a whole number, or
  /// outside 1 to 100) is ignored.
  ///
  /// ``failsafe``, ``TestClock``'s waits without a test store and the waits of an observable store's model
  /// (`waitUntilShows`) default to it; a failsafe a test gives explicitly is used as given.
  public static let defaultFailsafe: Duration = .seconds(30) * failsafeScale

  /// The factor `KATANA_FAILSAFE_SCALE` sets (see ``defaultFailsafe``); 1 when it is unset or not a whole number
  /// from 1 to 100.
  package static let failsafeScale: Int = failsafeScale(
    fromEnvironmentValue: ProcessInfo.processInfo.environment["KATANA_FAILSAFE_SCALE"])

  /// The factor a value of `KATANA_FAILSAFE_SCALE` sets: the whole number it spells, if from 1 to 100; otherwise 1.
  package static func failsafeScale(fromEnvironmentValue value: String?) -> Int {
    guard let value, let factor = Int(value), (1...100).contains(factor) else { return 1 }
    return factor
  }
}
