import NIOConcurrencyHelpers

/// The page's acknowledgements as credits: a batch takes one, an acknowledgement gives it back. When the page is
/// ``InspectorConfiguration/batchesInFlight`` batches behind, the connection waits here (and the store does not).
final class CreditGate: Sendable {
  private struct Gate {
    var credits: Int
    var waiter: CheckedContinuation<Void, any Error>?
    var isCancelled = false
  }

  private let limit: Int
  private let gate: NIOLockedValueBox<Gate>

  init(credits: Int) {
    limit = max(1, credits)
    gate = NIOLockedValueBox(Gate(credits: max(1, credits)))
  }

  /// Takes a credit, waiting for one if none is left.
  ///
  /// - Throws: `CancellationError` if the calling task is cancelled while waiting, or the gate was cancelled.
  func acquire() async throws {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let result: Result<Void, any Error>? = gate.withLockedValue { gate in
          if gate.isCancelled { return .failure(CancellationError()) }
          if gate.credits > 0 {
            gate.credits -= 1
            return .success(())
          }
          gate.waiter = continuation
          return nil
        }
        // Resumed outside the lock.
        if let result { continuation.resume(with: result) }
      }
    } onCancel: {
      cancel()
    }
  }

  /// Gives a credit back (an acknowledgement); credits never exceed the limit the gate started with.
  func release() {
    let waiter = gate.withLockedValue { gate -> CheckedContinuation<Void, any Error>? in
      if let waiter = gate.waiter {
        gate.waiter = nil
        return waiter
      }
      gate.credits = min(limit, gate.credits + 1)
      return nil
    }
    waiter?.resume()
  }

  /// Fails the waiting and every later ``acquire()``.
  func cancel() {
    let waiter = gate.withLockedValue { gate -> CheckedContinuation<Void, any Error>? in
      gate.isCancelled = true
      defer { gate.waiter = nil }
      return gate.waiter
    }
    waiter?.resume(throwing: CancellationError())
  }
}
