import NIOConcurrencyHelpers

/// Runs `body`, and throws `error` if it has not finished after `timeout`; throws `CancellationError` at once
/// if the calling task is cancelled first.
///
/// Either way `body` is cancelled, but not waited for: it runs in a task of its own, and its result, if it
/// ever comes, is dropped.
///
/// - Important: Not a task group, on purpose. A task group waits for its children, and postgres-nio's queries
///   do not react to cancellation: a query written to a connection that the server has just dropped has been
///   seen never to answer, even after the connection was closed. A deadline that waited for such a query
///   would hang with it.
func withDeadline<Result: Sendable>(
  _ timeout: Duration, orThrow error: some Error, _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
  try await race(body) {
    try await Task.sleep(for: timeout)
    throw error
  }
}

/// Runs `body` and `watchdog` side by side, and returns or throws what the first to finish does (the watchdog
/// can only throw); throws `CancellationError` at once if the calling task is cancelled first.
///
/// The other one is cancelled, and not waited for (see ``withDeadline(_:orThrow:_:)`` for why).
func race<Result: Sendable>(
  _ body: @escaping @Sendable () async throws -> Result,
  against watchdog: @escaping @Sendable () async throws -> Never
) async throws -> Result {
  let race = DeadlineRace<Result>()
  return try await withTaskCancellationHandler {
    try await withCheckedThrowingContinuation { continuation in
      race.begin(continuation)
      let work = Task {
        do {
          race.finish(.success(try await body()))
        } catch {
          race.finish(.failure(error))
        }
      }
      let timer = Task {
        do {
          try await watchdog()
        } catch {
          race.finish(.failure(error))
        }
      }
      race.set(work: work, timer: timer)
    }
  } onCancel: {
    race.finish(.failure(CancellationError()))
  }
}

/// The first of the body's outcome, the deadline and the caller's cancellation resumes the caller; the
/// others then do nothing. Whatever comes first also cancels both tasks.
private final class DeadlineRace<Result: Sendable>: Sendable {
  private struct State {
    var continuation: CheckedContinuation<Result, any Error>?
    /// Set when an outcome came before the continuation was registered (cancellation can).
    var early: Swift.Result<Result, any Error>?
    var isFinished = false
    var tasks: [Task<Void, Never>] = []
  }

  private let state = NIOLockedValueBox(State())

  func begin(_ continuation: CheckedContinuation<Result, any Error>) {
    let early: Swift.Result<Result, any Error>? = state.withLockedValue { state in
      if let early = state.early { return early }
      state.continuation = continuation
      return nil
    }
    if let early { continuation.resume(with: early) }
  }

  func set(work: Task<Void, Never>, timer: Task<Void, Never>) {
    let finished = state.withLockedValue { state in
      state.tasks = [work, timer]
      return state.isFinished
    }
    if finished {
      work.cancel()
      timer.cancel()
    }
  }

  func finish(_ outcome: Swift.Result<Result, any Error>) {
    let (continuation, tasks): (CheckedContinuation<Result, any Error>?, [Task<Void, Never>]) =
      state.withLockedValue { state in
        guard !state.isFinished else { return (nil, []) }
        state.isFinished = true
        guard let continuation = state.continuation else {
          state.early = outcome
          return (nil, state.tasks)
        }
        state.continuation = nil
        return (continuation, state.tasks)
      }
    continuation?.resume(with: outcome)
    for task in tasks { task.cancel() }
  }
}
