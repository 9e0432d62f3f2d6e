/// The outcome of an item handed to the store with `send`: await it, or cancel it.
///
/// ```swift
/// let handle = store.send(AddTodo(title: "eggs"))  // from synchronous code; the position is fixed now
/// try await handle.value                            // later, if the outcome matters
/// ```
///
/// The store owns the work: it runs whether or not anyone awaits the handle, and store shutdown cancels
/// it.
public struct DispatchHandle<Value: Sendable>: Sendable {
  let storage: HandleStorage<Value>

  /// Waits for the item to be handled and returns its value (`()` for state updaters and for side effects
  /// that return nothing).
  ///
  /// - Throws: What the item's dispatch throws: the side effect's or an interceptor's error,
  ///   `CancellationError` if the handle was cancelled before the item started, a ``StoreError``.
  ///
  /// - Important: Like `Task.value`, waiting is not cancelled with the waiting task. Call ``cancel()`` to
  ///   cancel the item itself.
  public var value: Value {
    get async throws { try await storage.wait().get() }
  }

  /// Waits for the item to be handled and returns its outcome.
  public var result: Result<Value, any Error> {
    get async { await storage.wait() }
  }

  /// Cancels the item.
  ///
  /// An item still waiting in the mailbox is withdrawn (never handled) and the handle fails with
  /// `CancellationError`. A running side effect is cancelled cooperatively. A state updater that has
  /// started completes.
  public func cancel() {
    storage.cancel()
  }

  /// Calls `callback` once with the outcome: immediately if the item is already handled, otherwise on
  /// the thread that completes it. Used by the promise compatibility module.
  package func whenComplete(_ callback: @escaping @Sendable (Result<Value, any Error>) -> Void) {
    storage.whenComplete(callback)
  }
}

/// The completion state behind a ``DispatchHandle``: a result set once, and whoever waits for it.
///
/// Subclassed by the jobs that run sent items, which know how to cancel themselves.
class HandleStorage<Value: Sendable>: @unchecked Sendable {  // Sendable: `state` is only touched under its lock.
  private enum Waiter {
    case continuation(UnsafeContinuation<Result<Value, any Error>, Never>)
    case callback(@Sendable (Result<Value, any Error>) -> Void)

    func resume(with result: Result<Value, any Error>) {
      switch self {
      case .continuation(let continuation): continuation.resume(returning: result)
      case .callback(let callback): callback(result)
      }
    }
  }

  private enum State {
    case pending([Waiter])
    case completed(Result<Value, any Error>)
  }

  private let state = Locked(State.pending([]))

  /// Sets the outcome; only the first call has an effect. Wakes every waiter outside the lock.
  final func complete(_ result: Result<Value, any Error>) {
    let waiters: [Waiter] = state.withLock { state in
      guard case .pending(let waiters) = state else { return [] }
      state = .completed(result)
      return waiters
    }
    for waiter in waiters {
      waiter.resume(with: result)
    }
  }

  final func wait() async -> Result<Value, any Error> {
    if let error = deadlockIfWaited() {
      return .failure(error)
    }
    return await withUnsafeContinuation { continuation in
      let completed: Result<Value, any Error>? = state.withLock { state in
        switch state {
        case .completed(let result):
          return result
        case .pending(var waiters):
          waiters.append(.continuation(continuation))
          state = .pending(waiters)
          return nil
        }
      }
      if let completed {
        continuation.resume(returning: completed)
      }
    }
  }

  final func whenComplete(_ callback: @escaping @Sendable (Result<Value, any Error>) -> Void) {
    let completed: Result<Value, any Error>? = state.withLock { state in
      switch state {
      case .completed(let result):
        return result
      case .pending(var waiters):
        waiters.append(.callback(callback))
        state = .pending(waiters)
        return nil
      }
    }
    if let completed {
      callback(completed)
    }
  }

  /// Cancels the work behind the handle. Overridden by jobs.
  func cancel() {}

  /// The error to return instead of waiting, when waiting from the calling task would deadlock.
  /// Overridden by updater jobs.
  func deadlockIfWaited() -> (any Error)? { nil }
}
