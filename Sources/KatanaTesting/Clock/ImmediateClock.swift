import Foundation
import Katana
import Testing

/// A clock whose sleeps return at once, moving its time to their deadlines: for a test that does not care how long
/// something waits, only that it happens (a retry with a back-off, a toast that hides itself), as pointfreeco/
/// swift-clocks' `ImmediateClock`.
///
/// ```swift
/// var configuration = TestStoreConfiguration()
/// configuration.clock = ImmediateClock()
/// let store = TestStore(initialState: ToastState(), dependencies: deps, configuration: configuration)
/// try await store.dispatch(ShowToast(text: "Saved"))   // shows it, sleeps 3 s at once, hides it
/// ```
///
/// `now` starts at ``TestClock/Instant/zero`` and only moves forward: a sleep until a later deadline moves it
/// there, a sleep until an earlier one leaves it. A cancelled task's sleep throws `CancellationError` without
/// moving time. Every sleep yields once, so a loop of sleeps lets other tasks run.
public final class ImmediateClock: Clock, @unchecked Sendable {
  // Sendable: `current` is only touched while holding `lock`.

  /// The clock's instants: those of ``TestClock``.
  public typealias Instant = TestClock.Instant

  private let lock = NSLock()
  private var current: Instant

  /// A clock at `now` (zero by default).
  public init(now: Instant = .zero) {
    current = now
  }

  /// The clock's current time: the latest deadline slept until, or where it started.
  public var now: Instant {
    lock.withLock { current }
  }

  /// Zero: the clock has no granularity of its own.
  public var minimumResolution: Duration {
    .zero
  }

  /// Moves the clock to `deadline` if that is later than now, and returns after yielding once.
  ///
  /// - Parameters:
  ///   - deadline: Where the clock's time goes.
  ///   - tolerance: Ignored.
  /// - Throws: `CancellationError` if the task is cancelled (time does not move).
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    lock.withLock { current = Swift.max(current, deadline) }
    await Task.yield()
  }
}

/// A clock that code under test must not use: its first use (reading `now`, or a sleep) records an issue naming the
/// clock, as pointfreeco/swift-clocks' `UnimplementedClock`. Give it where a test expects no waiting, so that an
/// unexpected sleep fails the test instead of passing unnoticed.
///
/// ```swift
/// configuration.clock = UnimplementedClock(name: "the search debounce")
/// ```
///
/// After reporting, it behaves as an ``ImmediateClock``, so the code goes on and the test reports the one issue.
public final class UnimplementedClock: Clock, @unchecked Sendable {
  // Sendable: `reported` is only touched while holding `lock`; `base` is Sendable.

  /// The clock's instants: those of ``TestClock``.
  public typealias Instant = TestClock.Instant

  /// What the issue calls the clock.
  public let name: String
  private let base: ImmediateClock
  private let location: SourceLocation
  private let lock = NSLock()
  private var reported = false

  /// A clock named `name` in the issue its first use records.
  ///
  /// - Parameters:
  ///   - name: What the issue calls the clock ("Clock" by default).
  ///   - now: Where its time starts, once used.
  ///   - fileID: Where the clock is made; leave the default: the issue names it.
  ///   - filePath: Where the clock is made; leave the default.
  ///   - line: Where the clock is made; leave the default.
  ///   - column: Where the clock is made; leave the default.
  public init(
    name: String = "Clock", now: Instant = .zero,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    self.name = name
    base = ImmediateClock(now: now)
    location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// The clock's current time; the first use of the clock records an issue.
  public var now: Instant {
    reportFirstUse("read its time (now)")
    return base.now
  }

  /// Zero, without counting as a use.
  public var minimumResolution: Duration {
    .zero
  }

  /// Returns as an ``ImmediateClock``'s sleep does; the first use of the clock records an issue.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    reportFirstUse("slept until \(deadline)")
    try await base.sleep(until: deadline, tolerance: tolerance)
  }

  private func reportFirstUse(_ use: String) {
    let first = lock.withLock {
      defer { reported = true }
      return !reported
    }
    guard first else { return }
    recordIssue("Unimplemented: \(name) was used: something \(use). Give the test a clock it may use.", at: location)
  }
}
