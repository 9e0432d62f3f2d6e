import NIOConcurrencyHelpers

/// Lets `count` tasks wait for each other: each `arriveAndWait()` returns once all `count` have arrived. For
/// starting racing requests at the same moment, without sleeping.
final class Barrier: Sendable {
  private struct State {
    var arrived = 0
    var waiters: [CheckedContinuation<Void, Never>] = []
  }

  private let count: Int
  private let state = NIOLockedValueBox(State())

  init(count: Int) {
    self.count = count
  }

  func arriveAndWait() async {
    await withCheckedContinuation { continuation in
      let released = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
        state.arrived += 1
        state.waiters.append(continuation)
        guard state.arrived >= count else { return [] }
        defer { state.waiters = [] }
        return state.waiters
      }
      for waiter in released { waiter.resume() }
    }
  }
}
