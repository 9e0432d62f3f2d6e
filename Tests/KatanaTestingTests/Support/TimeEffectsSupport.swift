import Foundation
import KatanaTestSupport
import KatanaTesting

/// The tests of the time-based effect tools and of `TestClock`, with their helpers. Everything is nested in
/// this namespace so that it cannot clash with the other helpers of this test target.
enum TimeEffects {
  /// A one-shot latch: `wait()` suspends until `open()` is called.
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

  /// Appends values from any thread, and lets a test wait, without polling, until it has `count` of them.
  final class Recorder<Element: Sendable>: Sendable {
    private let state = LockedValue<(values: [Element], waiters: [(Int, CheckedContinuation<Void, Never>)])>(([], []))

    func append(_ element: Element) {
      let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
        state.values.append(element)
        let count = state.values.count
        let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
        state.waiters.removeAll { $0.0 <= count }
        return ready
      }
      for waiter in ready { waiter.resume() }
    }

    var values: [Element] { state.withLock { $0.values } }

    func wait(forCount count: Int) async {
      await withCheckedContinuation { continuation in
        let reached = state.withLock { state -> Bool in
          if state.values.count >= count { return true }
          state.waiters.append((count, continuation))
          return false
        }
        if reached { continuation.resume() }
      }
    }
  }

  /// A deterministic pseudo-random generator (SplitMix64).
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

  struct CounterState: State, Equatable {
    var ticks = 0
    var log: [String] = []
  }

  struct Tick: StateUpdater {
    func updateState(_ state: inout CounterState) { state.ticks += 1 }
  }

  struct Log: StateUpdater {
    let entry: String
    func updateState(_ state: inout CounterState) { state.log.append(entry) }
  }

  typealias TestStore = Store<CounterState, EmptySideEffectDependencyContainer>
  typealias Context = SideEffectContext<CounterState, EmptySideEffectDependencyContainer>

  /// A side effect that runs a closure.
  struct Script: SideEffect {
    let body: @Sendable (Context) async throws -> Void
    func sideEffect(_ context: Context) async throws { try await body(context) }
  }

  /// An effect id for these tests.
  struct ID: Hashable, Sendable {
    var value = 0
  }

  struct TestError: Error, Equatable {
    let code: Int
  }

  /// A ready store on `clock`.
  static func makeStore(clock: TestClock) async throws -> TestStore {
    let store = TestStore(initialState: CounterState(), configuration: StoreConfiguration(clock: clock))
    try await store.waitUntilReady()
    return store
  }
}
