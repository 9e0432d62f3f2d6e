import Foundation
import Katana

/// A clock whose time moves only when a test moves it, so that debounce, throttle, timers and any other
/// sleep run deterministically, without real waiting.
///
/// Give it to the test store (or to a store), then advance it by hand:
///
/// ```swift
/// let clock = TestClock()
/// var configuration = TestStoreConfiguration()
/// configuration.clock = clock
/// let store = TestStore(initialState: SearchState(), dependencies: deps, configuration: configuration)
///
/// store.send(QueryChanged(query: "ka"))      // debounces the search by 300 ms
/// try await clock.waitForSleepers(count: 1)  // the debounce is now sleeping on the clock
/// clock.advance(by: .milliseconds(299))      // nothing happens
/// clock.advance(by: .milliseconds(1))        // the search runs
/// await store.receive(SetResults.self) { $0.results = ["katana"] }
/// ```
///
/// ## How time moves
/// - `now` starts at ``Instant/zero`` and changes only through ``advance(by:)``, ``advance(to:)`` and
///   ``run(timeout:fileID:filePath:line:column:)``. Time never goes back: advancing to an earlier instant
///   does nothing.
/// - ``sleep(until:tolerance:)`` returns at once if the deadline has been reached; otherwise the task sleeps
///   until an advance reaches the deadline, or until the task is cancelled (it then throws
///   `CancellationError`).
/// - An advance moves `now` to its target and takes the sleepers whose deadline has come in one step (so
///   advances from several threads at once add up exactly), then resumes them in deadline order (in the
///   order they started sleeping, for equal deadlines). A woken task that sleeps again measures from the
///   new `now`, as after a real pause. So advance in the steps your code sleeps in: a side effect that
///   sleeps one second, then another second, needs two advances, with a wait for the second sleep between
///   them (or ``run(timeout:fileID:filePath:line:column:)``, which does that for you).
/// - Advancing does not wait for the woken tasks: they run concurrently. Synchronise on what they do (the
///   test store's `receive`, ``waitForSleepers(count:timeout:fileID:filePath:line:column:)``), never on a
///   sleep.
///
/// The one race to think about is advancing before the code under test has started to sleep: the advance
/// then finds nobody to wake, and the sleep that starts later measures from the new `now`. Call
/// ``waitForSleepers(count:timeout:fileID:filePath:line:column:)`` first, as in the example. A test store
/// that uses this clock notices the mistake: when its work can only go on once the clock moves, its
/// waits fail at once with a message that names the sleepers and their deadlines.
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

  /// A task sleeping on a ``TestClock``: until when, and for whose work.
  public struct Sleeper: Sendable, CustomStringConvertible {
    /// When the sleep ends.
    public let deadline: Instant

    /// The item whose work sleeps, when a ``TestStore`` runs it: the innermost item whose side effect (or
    /// interceptor) the sleeping task runs, for example `Search(query: "kat")`. Nil for a sleep that is not
    /// part of a test store's work.
    public let item: (any Dispatchable)?

    /// `Search(query: "kat") until 0.3 seconds`, or `a task until 0.3 seconds`.
    public var description: String {
      "\(item.map { KatanaTesting.describe($0) } ?? "a task") until \(deadline)"
    }
  }

  /// A sleeper as the clock keeps it, and as the test store compares it with the work it has in flight.
  struct SleeperRecord {
    let id: UInt64
    let deadline: Instant
    /// The sleeping task: the test store checks that it is the task that carries a piece of its work.
    let task: TaskIdentity?
    let item: (any Dispatchable)?
    /// The clock's time when this record was read.
    var now: Instant

    var workDescription: String {
      item.map { KatanaTesting.describe($0) } ?? "a task"
    }
  }

  /// What a test store that uses the clock offers it: its events, and whether its work is settled.
  struct Observer {
    weak var recorder: (any ClockObserving)?
  }

  private struct Entry {
    let record: SleeperRecord
    let continuation: UnsafeContinuation<Void, any Error>
  }

  private let lock = NSLock()
  private var currentNow: Instant
  private var entries: [Entry] = []
  private var observers: [Observer] = []
  private var lastID: UInt64 = 0
  /// Bumped under the lock on every change of time or sleepers: a reader that sees it unchanged after reading
  /// other state knows its snapshot of the clock still holds.
  private var changeCount: UInt64 = 0
  /// Bumped on every change of time or sleepers; ``waitForSleepers(count:timeout:fileID:filePath:line:column:)``
  /// and the test store wait for it to move.
  let signal = ChangeSignal()

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
    let record = SleeperRecord(
      id: id, deadline: deadline, task: TaskIdentity.current, item: WorkLabel.current?.item, now: .zero)
    try await withTaskCancellationHandler {
      try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
        let outcome = withLock { () -> Result<Void, any Error>? in
          if deadline <= currentNow { return .success(()) }
          // Checked under the lock: a cancellation handler running later finds the sleeper to remove.
          if Task.isCancelled { return .failure(CancellationError()) }
          entries.append(Entry(record: record, continuation: continuation))
          changeCount &+= 1
          return nil
        }
        if let outcome {
          continuation.resume(with: outcome)
        } else {
          didChange()
        }
      }
    } onCancel: {
      let entry = withLock { () -> Entry? in
        guard let index = entries.firstIndex(where: { $0.record.id == id }) else { return nil }
        changeCount &+= 1
        return entries.remove(at: index)
      }
      if let entry {
        entry.continuation.resume(throwing: CancellationError())
        didChange()
      }
    }
  }

  /// Moves the clock forward by `duration` and resumes every sleeper whose deadline has come, in deadline
  /// order; see ``advance(to:)``.
  ///
  /// The new time is computed from `now` in the same step that moves the clock, so advances from several
  /// threads at once add up exactly. A negative duration does nothing: time never goes back.
  public func advance(by duration: Duration) {
    advance { now in now.advanced(by: duration) }
  }

  /// Moves the clock to `deadline` and resumes every sleeper whose deadline has come, in deadline order.
  ///
  /// `now` reaches `deadline` before any sleeper resumes, so every woken task sees the new time. The woken
  /// tasks run concurrently with the caller, which does not wait for them. An earlier `deadline` leaves
  /// the time unchanged (time never goes back).
  public func advance(to deadline: Instant) {
    advance { _ in deadline }
  }

  /// Moves the clock to `target(now)` and takes the due sleepers in one critical section, then resumes
  /// them outside the lock.
  private func advance(_ target: (Instant) -> Instant) {
    let (due, moved) = withLock { () -> ([Entry], Bool) in
      let newNow = target(currentNow)
      let moved = newNow > currentNow
      if moved {
        currentNow = newNow
      }
      let now = currentNow
      let due = entries.filter { $0.record.deadline <= now }
      if moved || !due.isEmpty {
        changeCount &+= 1
      }
      guard !due.isEmpty else { return ([], moved) }
      entries.removeAll { $0.record.deadline <= now }
      return (due.sorted { ($0.record.deadline, $0.record.id) < ($1.record.deadline, $1.record.id) }, moved)
    }
    for entry in due {
      entry.continuation.resume()
    }
    if moved || !due.isEmpty {
      didChange()
    }
  }

  /// The tasks sleeping on this clock now, in deadline order (in the order they started sleeping, for
  /// equal deadlines).
  public var sleepers: [Sleeper] {
    snapshot().sleepers.map { Sleeper(deadline: $0.deadline, item: $0.item) }
  }

  /// The number of tasks sleeping on this clock now.
  public var sleeperCount: Int {
    withLock { entries.count }
  }

  /// The earliest deadline among the tasks sleeping now, or nil if nobody sleeps.
  public var nextDeadline: Instant? {
    withLock { entries.map(\.record.deadline).min() }
  }

  // MARK: - For the test store

  /// The clock's time and sleepers, read in one critical section, in deadline order.
  func snapshot() -> (now: Instant, sleepers: [SleeperRecord]) {
    versionedSnapshot().snapshot
  }

  /// ``snapshot()``, with the change count it was read at (compare it with ``version`` later).
  func versionedSnapshot() -> (version: UInt64, snapshot: (now: Instant, sleepers: [SleeperRecord])) {
    withLock {
      let now = currentNow
      let records = entries.map { entry in
        var record = entry.record
        record.now = now
        return record
      }
      return (changeCount, (now, records.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }))
    }
  }

  /// The number of changes of time or sleepers so far.
  var version: UInt64 {
    withLock { changeCount }
  }

  /// Registers a test store that uses this clock: it hears of every change, and the clock's waits ask it
  /// whether its work has settled. Held weakly.
  func attach(_ recorder: any ClockObserving) {
    withLock {
      observers.removeAll { $0.recorder == nil }
      observers.append(Observer(recorder: recorder))
    }
  }

  /// The test stores that use this clock and are still alive.
  var attachedRecorders: [any ClockObserving] {
    withLock { observers.compactMap(\.recorder) }
  }

  /// Announces a change of time or sleepers, outside the lock: to the clock's own waiters, and to the test
  /// stores that use the clock.
  private func didChange() {
    signal.bump()
    for recorder in attachedRecorders {
      recorder.clockDidChange()
    }
  }

  private func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body()
  }
}

/// What a ``TestClock`` needs from a test store that uses it. The test store's recorder conforms.
protocol ClockObserving: AnyObject, Sendable {
  /// The clock's time or sleepers changed: re-check what you wait for.
  func clockDidChange()
  /// The recorder's events, clock changes included.
  var signal: ChangeSignal { get }
  /// The test store's failsafe, and the clock it is measured on.
  var failsafeBound: Duration { get }
  var failsafeClock: any Clock<Duration> { get }
  /// Whether the test store has nothing in flight, or everything it has in flight is asleep on the clock.
  func settlement() -> Settlement
  /// Returns once the recorder's signal moves past `generation`, or its store has nothing in flight.
  func waitForChangeOrIdle(after generation: UInt64) async
}

/// Where a test store's work stands, as its waits and its clock's waits see it.
enum Settlement {
  /// Nothing is in flight.
  case idle
  /// Everything in flight is asleep on the test clock: these sleepers.
  case parked([TestClock.SleeperRecord])
  /// Something in flight may still make progress without the test; the description says what is known.
  case busy(String)
}
