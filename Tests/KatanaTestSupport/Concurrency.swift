// Synchronisation helpers shared by the test targets. Every wait ends when its event happens, never after
// a delay, and also when the waiting task is cancelled (see `Gate`), so that a suite's time limit can end a
// test that waits for something a regression prevents.
import Foundation

/// A one-shot latch: `wait()` suspends until `open()` is called. Opening twice is harmless.
///
/// `wait()` also returns when the calling task is cancelled, so that a test's time limit ends a test that
/// waits for something a regression prevents (Swift Testing cannot end a test blocked in a wait that
/// ignores cancellation). Side effects that model work ignoring cancellation use
/// `waitIgnoringCancellation()`.
public final class Gate: Sendable {
  public init() {}

  private struct GateState {
    var isOpen = false
    var lastID = 0
    var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
  }

  private let state = LockedValue(GateState())

  public func open() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.isOpen = true
      defer { state.waiters = [:] }
      return Array(state.waiters.values)
    }
    for waiter in waiters { waiter.resume() }
  }

  public var isOpen: Bool { state.withLock { $0.isOpen } }

  public func wait() async {
    let id = makeID()
    await withTaskCancellationHandler {
      await suspend(id: id, cancellable: true)
    } onCancel: {
      let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
      waiter?.resume()
    }
  }

  /// Like `wait()`, but only `open()` ends it.
  public func waitIgnoringCancellation() async {
    await suspend(id: makeID(), cancellable: false)
  }

  private func makeID() -> Int {
    state.withLock { state in
      state.lastID += 1
      return state.lastID
    }
  }

  private func suspend(id: Int, cancellable: Bool) async {
    await withCheckedContinuation { continuation in
      let resumeNow = state.withLock { state -> Bool in
        if state.isOpen || (cancellable && Task.isCancelled) { return true }
        state.waiters[id] = continuation
        return false
      }
      if resumeNow { continuation.resume() }
    }
  }
}

/// Counts events and lets a test wait until a given count is reached, without polling (or until the
/// waiting task is cancelled).
public final class EventCounter: Sendable {
  public init() {}

  private struct CounterState {
    var count = 0
    var lastID = 0
    var waiters: [Int: (target: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
  }

  private let state = LockedValue(CounterState())

  public func increment() {
    let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.count += 1
      let count = state.count
      let ready = state.waiters.filter { $0.value.target <= count }
      for id in ready.keys { state.waiters[id] = nil }
      return ready.values.map(\.continuation)
    }
    for waiter in ready { waiter.resume() }
  }

  public var count: Int { state.withLock { $0.count } }

  /// Returns once `increment()` has been called at least `target` times.
  public func wait(for target: Int) async {
    let id = state.withLock { state -> Int in
      state.lastID += 1
      return state.lastID
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let reached = state.withLock { state -> Bool in
          if state.count >= target || Task.isCancelled { return true }
          state.waiters[id] = (target, continuation)
          return false
        }
        if reached { continuation.resume() }
      }
    } onCancel: {
      let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
      waiter?.continuation.resume()
    }
  }
}

/// A lock-protected value for test bookkeeping.
public final class LockedValue<Value>: @unchecked Sendable {  // Sendable: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value: Value

  public init(_ value: Value) { self.value = value }

  public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }

  public var current: Value { withLock { $0 } }
}

/// Appends values from any thread and reads them back in order.
public final class Recorder<Element: Sendable>: Sendable {
  public init() {}

  private let storage = LockedValue<[Element]>([])
  private let counter = EventCounter()

  public func append(_ element: Element) {
    storage.withLock { $0.append(element) }
    counter.increment()
  }

  public var values: [Element] { storage.current }

  /// Returns once at least `count` values were recorded.
  public func wait(forCount count: Int) async {
    await counter.wait(for: count)
  }
}

/// A deterministic pseudo-random generator (SplitMix64), so that "random" test schedules are reproducible.
public struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64

  public init(seed: UInt64) { state = seed }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

extension Gate {
  /// Blocks the calling thread (never a task's) until the gate opens.
  public func waitBlocking() {
    let semaphore = DispatchSemaphore(value: 0)
    Task {
      await waitIgnoringCancellation()
      semaphore.signal()
    }
    semaphore.wait()
  }
}
