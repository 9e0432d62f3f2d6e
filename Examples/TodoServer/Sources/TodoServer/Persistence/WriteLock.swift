import DequeModule
import NIOConcurrencyHelpers

/// An asynchronous mutex that admits waiters first come, first served: the server's single writer.
///
/// Every change takes this lock for its whole write path (validate against the committed state, append to
/// the journal, commit to the store), so changes reach the journal and the state in the same order, and
/// each one is validated against the state its predecessors left. See ``TodoDependencies``.
///
/// - Important: Waiting for the lock is not cancellable. A body that should not run for a cancelled task
///   checks `Task.isCancelled` once it holds the lock.
final class WriteLock: Sendable {
  private struct State {
    var isLocked = false
    var waiters: Deque<CheckedContinuation<Void, Never>> = []
  }

  private let state = NIOLockedValueBox(State())

  /// Runs `body` while holding the lock, in the caller's isolation, and releases the lock when it returns or
  /// throws.
  nonisolated(nonsending) func withLock<Result>(_ body: () async throws -> Result) async rethrows -> Result {
    await acquire()
    defer { release() }
    return try await body()
  }

  private func acquire() async {
    let acquired = state.withLockedValue { state in
      if state.isLocked { return false }
      state.isLocked = true
      return true
    }
    if acquired { return }
    await withCheckedContinuation { continuation in
      let acquired = state.withLockedValue { state in
        if state.isLocked {
          state.waiters.append(continuation)
          return false
        }
        state.isLocked = true
        return true
      }
      if acquired { continuation.resume() }
    }
  }

  private func release() {
    // The lock passes straight to the first waiter (it stays locked), so nobody can overtake the queue.
    let next = state.withLockedValue { state in
      guard let next = state.waiters.popFirst() else {
        state.isLocked = false
        return CheckedContinuation<Void, Never>?.none
      }
      return next
    }
    next?.resume()
  }
}
