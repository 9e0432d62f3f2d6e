// Copied from Tests/KatanaTests/Support (test targets cannot import each other); `Gate` gained
// `waitUnlessCancelled()`.
import Foundation

/// A one-shot latch: `wait()` suspends until `open()` is called. Opening twice is harmless.
///
/// `wait()` ignores cancellation on purpose (tests use it to model work that does); a test waiting for an
/// outcome that a regression could prevent uses `waitUnlessCancelled()`, so that its time limit ends it.
final class Gate: Sendable {
  private struct GateState {
    var isOpen = false
    var lastID = 0
    var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
  }

  private let state = LockedValue(GateState())

  func open() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.isOpen = true
      defer { state.waiters = [:] }
      return Array(state.waiters.values)
    }
    for waiter in waiters { waiter.resume() }
  }

  var isOpen: Bool { state.withLock { $0.isOpen } }

  func wait() async {
    await suspend(id: makeID(), cancellable: false)
  }

  /// Like `wait()`, but also returns when the calling task is cancelled.
  func waitUnlessCancelled() async {
    let id = makeID()
    await withTaskCancellationHandler {
      await suspend(id: id, cancellable: true)
    } onCancel: {
      let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
      waiter?.resume()
    }
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

/// Counts events and lets a test wait until a given count is reached, without polling.
final class EventCounter: Sendable {
  private let state = LockedValue<(count: Int, waiters: [(Int, CheckedContinuation<Void, Never>)])>((0, []))

  func increment() {
    let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.count += 1
      let count = state.count
      let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
      state.waiters.removeAll { $0.0 <= count }
      return ready
    }
    for waiter in ready { waiter.resume() }
  }

  var count: Int { state.withLock { $0.count } }

  /// Returns once `increment()` has been called at least `target` times.
  func wait(for target: Int) async {
    await withCheckedContinuation { continuation in
      let reached = state.withLock { state -> Bool in
        if state.count >= target { return true }
        state.waiters.append((target, continuation))
        return false
      }
      if reached { continuation.resume() }
    }
  }
}

/// A lock-protected value for test bookkeeping.
final class LockedValue<Value>: @unchecked Sendable {  // Sendable: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }

  var current: Value { withLock { $0 } }
}

/// Appends values from any thread and reads them back in order.
final class Recorder<Element: Sendable>: Sendable {
  private let storage = LockedValue<[Element]>([])
  private let counter = EventCounter()

  func append(_ element: Element) {
    storage.withLock { $0.append(element) }
    counter.increment()
  }

  var values: [Element] { storage.current }

  /// Returns once at least `count` values were recorded.
  func wait(forCount count: Int) async {
    await counter.wait(for: count)
  }
}

/// A deterministic pseudo-random generator (SplitMix64), so that "random" test schedules are reproducible.
struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
