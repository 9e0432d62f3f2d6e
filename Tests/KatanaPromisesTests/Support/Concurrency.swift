import Foundation

/// A one-shot latch: `wait()` suspends until `open()` is called. Opening twice is harmless.
final class Gate: Sendable {
  private let state = LockedValue<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

  func open() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.isOpen = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  var isOpen: Bool { state.withLock { $0.isOpen } }

  func wait() async {
    await withCheckedContinuation { continuation in
      let isOpen = state.withLock { state -> Bool in
        if state.isOpen { return true }
        state.waiters.append(continuation)
        return false
      }
      if isOpen { continuation.resume() }
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

extension Gate {
  /// Blocks the calling thread (never a task's) until the gate opens.
  func waitBlocking() {
    let semaphore = DispatchSemaphore(value: 0)
    Task {
      await wait()
      semaphore.signal()
    }
    semaphore.wait()
  }
}
