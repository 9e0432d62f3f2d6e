/// A count of events that tasks wait on without polling: a waiter reads ``generation``, checks what it
/// waits for, and if it is not there yet calls ``wait(after:cancellable:)``, which returns once an event
/// has happened since that read.
///
/// The test store's recorder and each ``TestClock`` have one; a wait that depends on several (a clock and
/// the test stores that use it) waits for any of them with ``waitForAny(_:cancellable:)``.
final class ChangeSignal: Sendable {
  private struct Waiter {
    let resumer: Resumer
  }

  private struct SignalState {
    var generation: UInt64 = 0
    var waiters: [Waiter] = []
  }

  private let state = TestLock(SignalState())

  /// The number of events so far.
  var generation: UInt64 {
    state.withLock { $0.generation }
  }

  /// Records an event and wakes every waiter. Call it after the change it announces is visible (outside
  /// the lock that guards that change): the waiters re-read it.
  func bump() {
    let waiters = state.withLock { state in
      state.generation &+= 1
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters {
      waiter.resumer.resume()
    }
  }

  /// Returns once an event has happened after `generation` (at once if one has). A cancellable wait also
  /// returns when the calling task is cancelled.
  nonisolated(nonsending) func wait(after generation: UInt64, cancellable: Bool = true) async {
    await Self.waitForAny([(self, generation)], cancellable: cancellable)
  }

  /// Returns once any of `signals` has moved past the generation given with it.
  nonisolated(nonsending) static func waitForAny(
    _ signals: [(signal: ChangeSignal, generation: UInt64)], cancellable: Bool = true
  ) async {
    let resumer = Resumer()
    let register = { (continuation: UnsafeContinuation<Void, Never>) in
      resumer.set(continuation)
      if cancellable && Task.isCancelled {
        resumer.resume()
        return
      }
      for (signal, generation) in signals where !signal.add(Waiter(resumer: resumer), after: generation) {
        resumer.resume()
        return
      }
    }
    if cancellable {
      await withTaskCancellationHandler {
        await withUnsafeContinuation(register)
      } onCancel: {
        resumer.resume()
      }
    } else {
      await withUnsafeContinuation(register)
    }
    for (signal, _) in signals {
      signal.remove(resumer)
    }
  }

  /// Adds `waiter` unless the generation has already moved past `generation`; returns whether it did.
  private func add(_ waiter: Waiter, after generation: UInt64) -> Bool {
    state.withLock { state in
      guard state.generation == generation else { return false }
      state.waiters.append(waiter)
      return true
    }
  }

  private func remove(_ resumer: Resumer) {
    state.withLock { state in state.waiters.removeAll { $0.resumer === resumer } }
  }

  /// Resumes one continuation exactly once, whoever asks first (an event of any signal, cancellation).
  private final class Resumer: Sendable {
    private let state = TestLock<(continuation: UnsafeContinuation<Void, Never>?, isResumed: Bool)>((nil, false))

    func set(_ continuation: UnsafeContinuation<Void, Never>) {
      let resumeNow = state.withLock { state -> Bool in
        if state.isResumed { return true }
        state.continuation = continuation
        return false
      }
      if resumeNow { continuation.resume() }
    }

    func resume() {
      let continuation = state.withLock { state -> UnsafeContinuation<Void, Never>? in
        state.isResumed = true
        defer { state.continuation = nil }
        return state.continuation
      }
      continuation?.resume()
    }
  }
}
