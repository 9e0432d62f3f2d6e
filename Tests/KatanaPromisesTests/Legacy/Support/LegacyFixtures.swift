import Dispatch
import Foundation
import KatanaPromises
import KatanaTestSupport
import XCTest

// The app a Katana 6 test suite would test: a counter with a log, dependencies that dispatch and return
// promises, synchronous side effects that block in `Hydra.await`. Written the way Katana 6 code was, with
// only the mechanical changes that the migration needs.

struct CounterState: State, Equatable {
  var counter = 0
  var log: [String] = []
}

final class AppDependencies: SideEffectDependencyContainer {
  /// Katana 6's `AnyDispatch` returned a promise; `promiseDispatch` keeps that shape.
  let dispatch: PromiseDispatch
  let getState: GetState

  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    self.dispatch = promiseDispatch(dispatch)
    self.getState = getState
  }
}

typealias CounterStore = Store<CounterState, AppDependencies>

/// A Katana 6 store: `.katana6` configuration unless told otherwise.
func makeStore(
  interceptors: [StoreInterceptor] = [],
  initialState: CounterState = CounterState(),
  configuration: StoreConfiguration = .katana6
) -> CounterStore {
  CounterStore(interceptors: interceptors, stateInitializer: { initialState }, configuration: configuration)
}

// MARK: - State updaters

struct Increment: StateUpdater {
  func updateState(_ state: inout CounterState) { state.counter += 1 }
}

struct AddLog: StateUpdater {
  let entry: String
  func updateState(_ state: inout CounterState) { state.log.append(entry) }
}

/// A Katana 6 `AnyStateUpdater` that returns a new state instead of mutating one.
struct ResetCounter: AnyStateUpdater {
  func updatedState(currentState: any State) throws -> any State {
    guard var state = currentState as? CounterState else { return currentState }
    state.counter = 0
    return state
  }
}

// MARK: - Side effects, synchronous and blocking, as in Katana 6

struct IncrementTwice: SideEffect {
  func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) throws {
    try Hydra.await(context.dispatch(Increment()))
    try Hydra.await(context.dispatch(Increment()))
  }
}

/// Appends `entry` to the log through a nested, awaited dispatch.
struct LogEffect: SideEffect {
  let entry: String
  func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) throws {
    try Hydra.await(context.dispatch(AddLog(entry: entry)))
  }
}

struct Answer: ReturningSideEffect {
  let value: Int
  func sideEffect(_ context: any AnySideEffectContext) throws -> Int { value }
}

/// Throws `TestError(code:)`.
struct Fail: SideEffect {
  let code: Int
  func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) throws {
    throw TestError(code: code)
  }
}

/// Runs `body` on the side effect's thread: for tests that need to see or block that thread.
struct Run: SideEffect {
  let body: @Sendable (SideEffectContext<CounterState, AppDependencies>) throws -> Void
  func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) throws {
    try body(context)
  }
}

/// A returning side effect that runs `body`.
struct RunReturning: ReturningSideEffect {
  let body: @Sendable (any AnySideEffectContext) throws -> Int
  func sideEffect(_ context: any AnySideEffectContext) throws -> Int {
    try body(context)
  }
}

/// A returning side effect that throws `TestError(code: n)` on its n-th run while n < `success`, then returns
/// n; `attempts` counts the runs.
func failingUntil(attempt success: Int, counting attempts: LockedValue<Int>) -> RunReturning {
  RunReturning { _ in
    let attempt = attempts.incremented()
    if attempt < success { throw TestError(code: attempt) }
    return attempt
  }
}

extension LockedValue<Int> {
  /// Adds one and returns the new value.
  func incremented() -> Int {
    withLock { value in
      value += 1
      return value
    }
  }
}

/// Neither a state updater nor a side effect.
struct NotHandleable: Dispatchable {}

// MARK: - Interceptors, Katana 6 shape

/// An interceptor that records the type name of each item it sees, then hands it on.
func recordingInterceptor(_ seen: Recorder<String>) -> StoreInterceptor {
  synchronousInterceptor { _ in
    { next in
      { item in
        seen.append(itemName(item))
        try next(item)
      }
    }
  }
}

/// An interceptor whose handler is `handle(context, next, item)`.
func interceptor(
  _ handle:
    @escaping @Sendable (any AnySideEffectContext, SynchronousStoreInterceptorNext, any Dispatchable) throws
    -> Void
) -> StoreInterceptor {
  synchronousInterceptor { context in
    { next in
      { item in try handle(context, next, item) }
    }
  }
}

/// A short, readable name for a dispatched item: its type name, and the entry of an `AddLog`.
func itemName(_ item: any Dispatchable) -> String {
  if let log = item as? AddLog { return "AddLog(\(log.entry))" }
  return String(describing: type(of: item))
}

// MARK: - Blocking helpers with failsafes

/// How long a blocked thread waits before it gives up and fails the test: far longer than any test takes,
/// so that it only bounds a regression that would otherwise hang the run.
let failsafeSeconds: TimeInterval = 30

/// A one-shot latch for threads (legacy side effects, interceptor handlers), not tasks.
final class ThreadLatch: @unchecked Sendable {
  // Sendable: `isOpen` is only touched with `condition` locked.
  private let condition = NSCondition()
  private var isOpen = false

  func open() {
    condition.lock()
    isOpen = true
    condition.broadcast()
    condition.unlock()
  }

  /// Blocks until ``open()``; throws ``WatchdogExpired`` after ``failsafeSeconds``.
  func wait() throws {
    let deadline = Date(timeIntervalSinceNow: failsafeSeconds)
    condition.lock()
    defer { condition.unlock() }
    while !isOpen {
      if !condition.wait(until: deadline) && !isOpen { throw WatchdogExpired() }
    }
  }
}

/// Blocks each arriving thread until `parties` threads have arrived: proves that they run at the same time.
final class ThreadBarrier: @unchecked Sendable {
  // Sendable: `arrived` is only touched with `condition` locked.
  private let condition = NSCondition()
  private let parties: Int
  private let timeout: TimeInterval
  private var arrived = 0

  init(parties: Int, timeout: TimeInterval = failsafeSeconds) {
    self.parties = parties
    self.timeout = timeout
  }

  /// Blocks until every party has arrived; throws ``WatchdogExpired`` after `timeout` seconds.
  func arriveAndWait() throws {
    let deadline = Date(timeIntervalSinceNow: timeout)
    condition.lock()
    defer { condition.unlock() }
    arrived += 1
    condition.broadcast()
    while arrived < parties {
      if !condition.wait(until: deadline) && arrived < parties { throw WatchdogExpired() }
    }
  }
}

/// A serial queue that tells code whether it runs there, to check where the store runs things.
final class MarkedQueue: Sendable {
  let queue: DispatchQueue
  private let key = SpecificKey()

  init(_ label: String) {
    queue = DispatchQueue(label: label)
    queue.setSpecific(key: key.key, value: ())
  }

  /// Whether the caller runs on this queue.
  var isCurrent: Bool { DispatchQueue.getSpecific(key: key.key) != nil }

  /// Blocks the queue until `latch` opens; returns once the queue is blocked.
  func block(until latch: ThreadLatch) {
    let blocked = DispatchSemaphore(value: 0)
    queue.async {
      blocked.signal()
      try? latch.wait()
    }
    blocked.wait()
  }

  /// Returns once everything submitted to the queue earlier has run.
  func drain() { queue.sync {} }
}

/// A dispatch-specific key, shared between threads (only its identity matters).
struct SpecificKey: @unchecked Sendable {
  let key = DispatchSpecificKey<Void>()
}

extension XCTestCase {
  /// Waits, as a Katana 6 test did (an expectation fulfilled from `then(in: .main)` and `catch(in: .main)`),
  /// until `promise` settles, and returns its outcome (`CancellationError` if it was cancelled); nil if it
  /// did not settle within the failsafe time.
  func outcome<T>(of promise: Promise<T>) -> Result<T, any Error>? {
    let settled = expectation(description: "promise settled")
    let outcome = LockedValue<Result<T, any Error>?>(nil)
    promise
      .then(in: .main) { value in
        outcome.withLock { $0 = .success(value) }
        settled.fulfill()
      }
      .catch(in: .main) { error in
        outcome.withLock { $0 = .failure(error) }
        settled.fulfill()
      }
      .cancelled(in: .main) {
        outcome.withLock { $0 = .failure(CancellationError()) }
        settled.fulfill()
      }
    wait(for: [settled], timeout: failsafeSeconds)
    return outcome.current
  }

  /// The value `promise` resolves with; fails the test if it rejects or does not settle.
  func value<T>(of promise: Promise<T>, file: StaticString = #filePath, line: UInt = #line) -> T? {
    switch outcome(of: promise) {
    case .success(let value):
      return value
    case .failure(let error):
      XCTFail("rejected with \(error)", file: file, line: line)
    case nil:
      XCTFail("did not settle", file: file, line: line)
    }
    return nil
  }

  /// The error `promise` rejects with; fails the test if it resolves or does not settle.
  func error<T>(of promise: Promise<T>, file: StaticString = #filePath, line: UInt = #line) -> (any Error)? {
    switch outcome(of: promise) {
    case .success(let value):
      XCTFail("resolved with \(value)", file: file, line: line)
    case .failure(let error):
      return error
    case nil:
      XCTFail("did not settle", file: file, line: line)
    }
    return nil
  }
}
