/// Fires once `bound` has passed on the failsafe clock after its creation, calling `wake` so that a wait
/// that would never end gives up. Each wait of the test store (and of a ``TestClock``) that has to
/// suspend starts one, and cancels it when it returns.
final class Failsafe: Sendable {
  private let state = TestLock<(isExpired: Bool, task: Task<Void, Never>?)>((false, nil))
  let bound: Duration

  init(bound: Duration, clock: any Clock<Duration>, wake: @escaping @Sendable () -> Void) {
    self.bound = bound
    let task = Task { [state] in
      do {
        try await clock.sleep(for: bound)
      } catch {
        return
      }
      state.withLock { $0.isExpired = true }
      wake()
    }
    state.withLock { $0.task = task }
  }

  var isExpired: Bool {
    state.withLock { $0.isExpired }
  }

  func cancel() {
    let task = state.withLock { $0.task }
    task?.cancel()
  }
}
