import Katana
import Testing

/// A side effect that a ``TestStore`` started with `send`: cancel it, or wait for it.
///
/// ```swift
/// let timer = store.send(StartTimer())
/// await clock.advance(by: .seconds(1))
/// await store.receive(Tick.self) { $0.ticks = 1 }
/// timer.cancel()
/// await timer.finish()
/// ```
public struct TestStoreTask<Value: Sendable>: Sendable {
  let own: OwnTask<Value>
  let wait: @Sendable (_ location: SourceLocation) async -> Result<Value, any Error>
  /// Where `send` was called: issues found by ``value`` are attributed there.
  let location: SourceLocation

  init<S: State>(own: OwnTask<Value>, recorder: TestStoreRecorder<S>, location: SourceLocation) {
    self.own = own
    self.location = location
    let waiting = describe(own.item)
    self.wait = { location in await recorder.outcome(of: own, waiting: waiting, at: location) }
  }

  /// Cancels the side effect, cooperatively: it sees `Task.isCancelled`, and the state updaters it then
  /// dispatches are withdrawn with `CancellationError`.
  public func cancel() {
    own.cancel()
  }

  /// Waits for the side effect to return, ignoring its outcome (an error included: the end of the test does
  /// not report it).
  ///
  /// If it cannot return before the test advances the test clock (everything in flight is asleep on it), or
  /// has not returned within the failsafe (``TestStoreConfiguration/failsafe``), records an issue, cancels
  /// it, and returns.
  public nonisolated(nonsending) func finish(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    _ = await wait(sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Waits for the side effect to return, and returns its value.
  ///
  /// - Throws: The side effect's error; ``TestStoreError/waitsForTestClock(_:)`` if it cannot return before
  ///   the test advances the test clock, ``TestStoreError/failsafeExpired(_:)`` if it did not return within
  ///   the failsafe (in both cases an issue is recorded at the `send` call, and the side effect is
  ///   cancelled).
  public var value: Value {
    get async throws {
      try await wait(location).get()
    }
  }
}

/// Errors the ``TestStore`` throws itself.
///
/// - Important: In a Swift Testing test, the test store records the issue with a failed `#require` and
///   throws the `ExpectationFailedError` that `#require` throws, in place of these: Swift Testing does not
///   report that error again when the test throws it, so one mistake makes one issue, at the test's line.
///   These cases are what it throws elsewhere (in an XCTest case, say).
public enum TestStoreError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The item named in the associated value did not return within the test store's failsafe
  /// (``TestStoreConfiguration/failsafe``).
  ///
  /// An issue listing what was still in flight has been recorded and the item cancelled; the error only
  /// stops the test, which could not go on without the item's outcome. If the item waits for a clock or
  /// another event the test drives, start it with `send`, then drive it.
  case failsafeExpired(String)

  /// The item named in the associated value cannot return before the test advances the test clock: all the
  /// work in flight is asleep on it.
  ///
  /// An issue naming the sleepers has been recorded and the item cancelled; the error only stops the test.
  /// Advance the clock before waiting for the item (start it with `send`, then drive the clock).
  case waitsForTestClock(String)

  /// What happened and what to do about it.
  public var description: String {
    switch self {
    case .failsafeExpired(let item):
      "\(item) did not return within the test store's failsafe. If it waits for a clock or another event that "
        + "the test drives, start it with `send`, then drive it."
    case .waitsForTestClock(let item):
      "\(item) cannot return until the test clock moves. Start it with `send`, then advance the clock."
    }
  }
}
