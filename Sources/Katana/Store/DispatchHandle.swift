/// The outcome of an item handed to the store with `send`: await it, or cancel it.
///
/// ```swift
/// let handle = store.send(AddTodo(title: "eggs"))  // from synchronous code; the position is fixed now
/// try await handle.value                            // later, if the outcome matters
/// ```
///
/// The store owns the work: it runs whether or not anyone awaits the handle, and store shutdown cancels
/// it.
public struct DispatchHandle<Value: Sendable>: @unchecked Sendable {
  // Sendable: the storage's state is only touched under its lock (ManagedBuffer itself is not Sendable).
  /// Where the outcome comes from.
  @usableFromInline
  enum Outcome {
    /// The completion state of an item the store handles later (or has handled).
    case pending(HandleStorage<Value>)
    /// The completion state of a sent state updater, whose storage completes with `()`, seen through a type-erased
    /// handle (`anySend`), which gives `unit` (`()` as `any Sendable`) instead. One storage per job, whichever
    /// handle reads it: cancelling or waiting on either acts on the job itself (see ``init(erasing:)``).
    case pendingUpdater(HandleStorage<Void>, unit: Value)
    /// A sent updater applied on the sending thread: it has succeeded with this value. (One shared storage
    /// served those once, but every `send` then retained and released it: an atomic on a line that every sending
    /// thread wrote, which cost more than the send itself under contention.)
    case applied(Value)
  }

  @usableFromInline let outcome: Outcome

  @inlinable
  init(storage: HandleStorage<Value>) {
    self.outcome = .pending(storage)
  }

  /// The handle of a sent updater applied on the sending thread: it has succeeded with `value`.
  @inlinable
  init(appliedOnSend value: Value) {
    self.outcome = .applied(value)
  }

  /// Waits for the item to be handled and returns its value (`()` for state updaters and for side effects
  /// that return nothing).
  ///
  /// - Throws: What the item's dispatch throws: the side effect's or an interceptor's error,
  ///   `CancellationError` if the handle was cancelled before the item started, a ``StoreError``.
  ///
  /// - Important: Like `Task.value`, waiting is not cancelled with the waiting task. Call ``cancel()`` to
  ///   cancel the item itself.
  public var value: Value {
    get async throws {
      switch outcome {
      case .pending(let storage): try await storage.wait().get()
      case .pendingUpdater(let storage, let unit): try await storage.wait().map { unit }.get()
      case .applied(let value): value
      }
    }
  }

  /// Waits for the item to be handled and returns its outcome.
  public var result: Result<Value, any Error> {
    get async {
      switch outcome {
      case .pending(let storage): await storage.wait()
      case .pendingUpdater(let storage, let unit): await storage.wait().map { unit }
      case .applied(let value): .success(value)
      }
    }
  }

  /// Cancels the item.
  ///
  /// An item that has not started is withdrawn (never handled) and the handle has failed with
  /// `CancellationError` by the time `cancel()` returns. A running side effect is cancelled cooperatively. A
  /// state updater that has started completes.
  public func cancel() {
    switch outcome {
    case .pending(let storage): storage.cancel()
    case .pendingUpdater(let storage, _): storage.cancel()
    case .applied: break
    }
  }

  /// Calls `callback` once with the outcome: immediately if the item is already handled, otherwise on
  /// the thread that completes it. Used by the promise compatibility module.
  @usableFromInline package func whenComplete(_ callback: @escaping @Sendable (Result<Value, any Error>) -> Void) {
    switch outcome {
    case .pending(let storage): storage.whenComplete(callback)
    case .pendingUpdater(let storage, let unit): storage.whenComplete { callback($0.map { unit }) }
    case .applied(let value): callback(.success(value))
    }
  }

  /// Whether this is the handle of a sent updater that was applied on the sending thread (so it has succeeded
  /// with `()`): lets the promise module settle without taking a lock.
  @inlinable
  package var isAppliedOnSend: Bool {
    if case .applied = outcome { return true }
    return false
  }

  /// Completes the handle (only the first completion counts; a handle without storage has completed already).
  @inlinable
  func complete(_ result: Result<Value, any Error>) {
    switch outcome {
    case .pending(let storage): storage.complete(result)
    case .pendingUpdater(let storage, _): storage.complete(result.map { _ in () })
    case .applied: break
    }
  }

  /// A handle that has already succeeded with `value`.
  static func succeeded(_ value: Value) -> DispatchHandle {
    let storage = HandleStorage<Value>.make()
    storage.complete(.success(value))
    return DispatchHandle(storage: storage)
  }

  /// A handle that has already failed with `error`.
  @usableFromInline
  static func failed(_ error: any Error) -> DispatchHandle {
    let storage = HandleStorage<Value>.make()
    storage.complete(.failure(error))
    return DispatchHandle(storage: storage)
  }
}

extension DispatchHandle where Value == any Sendable {
  /// The handle of a sent state updater, as `anySend` returns it: the same job and storage, read as `any Sendable`.
  /// So the erased handle cancels and waits for the job itself (a handle wrapping it in a storage of its own could
  /// not withdraw it, nor see that waiting would deadlock).
  @inlinable
  init(erasing handle: DispatchHandle<Void>) {
    switch handle.outcome {
    case .pending(let storage): outcome = .pendingUpdater(storage, unit: ())
    case .pendingUpdater(let storage, _): outcome = .pendingUpdater(storage, unit: ())
    case .applied: outcome = .applied(())
    }
  }
}

/// The handle of a sent updater applied on the sending thread: it has succeeded, so cancelling it, waiting for it
/// and observing it never change it. It holds no reference (see ``DispatchHandle/Outcome``).
@inlinable
var succeededHandle: DispatchHandle<Void> { DispatchHandle(appliedOnSend: ()) }

/// What a handle needs from the job behind it, whatever the store's types.
@usableFromInline
protocol JobControl: AnyObject, Sendable {
  /// Withdraws the job if it is queued; cancels its task if it is a running side effect.
  func cancel()
  /// The error to return instead of waiting for the job, if waiting from the calling task would deadlock.
  func deadlockIfWaited(started: Bool) -> (any Error)?
}

/// What a job needs from the handle behind it, whatever its value type.
@usableFromInline
protocol HandleCompletion: AnyObject {
  /// Completes the handle with `error` (only the first completion counts).
  func fail(_ error: any Error)
  /// Records that the job starts, and returns true; returns false, after failing the handle with
  /// `CancellationError`, if the handle was cancelled first.
  func markStarted() -> Bool
  /// Fails the handle with `CancellationError` if it was cancelled before its job started: that job never will
  /// (``markStarted()`` refuses it), wherever it is (queued, handed to a task that has not run it yet, or being
  /// failed by a shutdown that closed the mailbox).
  func failIfCancelledBeforeStart()
}

/// The completion state behind a ``DispatchHandle``: a result set once, whoever waits for it, and the job
/// to cancel. One allocation, with the lock. Waiting tasks wait with the package's waiter primitive.
@usableFromInline
final class HandleStorage<Value: Sendable>: LockedBuffer<HandleStorage<Value>.State>, HandleCompletion, WaiterLock {
  @usableFromInline typealias Waiter = UnsafeContinuation<Result<Value, any Error>, any Error>
  @usableFromInline typealias Protected = State

  @usableFromInline
  struct State {
    @usableFromInline var result: Result<Value, any Error>?
    @usableFromInline var waiters = Waiters<Waiter>()
    @usableFromInline var callbacks: [@Sendable (Result<Value, any Error>) -> Void] = []
    /// The job behind the handle, until it completes (the job also references the handle).
    @usableFromInline var control: (any JobControl)?
    /// Whether the job has started running.
    @usableFromInline var started = false
    /// Whether ``DispatchHandle/cancel()`` was called.
    var cancelRequested = false

    @inlinable
    init() {}
  }

  @usableFromInline
  enum Wait {
    case done(Result<Value, any Error>)
    case wait(UInt64)
  }

  /// A handle that has not completed.
  @inlinable
  static func make() -> HandleStorage<Value> {
    make(State())
  }

  func setControl(_ control: any JobControl) {
    withLock { state in
      if state.result == nil { state.control = control }
    }
  }

  /// Sets the outcome; only the first call has an effect. Wakes every waiter outside the lock.
  @inlinable
  func complete(_ result: Result<Value, any Error>) {
    let woken = withLock {
      state -> ([Resumption<Waiter>], [@Sendable (Result<Value, any Error>) -> Void], (any JobControl)?)? in
      guard state.result == nil else { return nil }
      state.result = result
      defer {
        state.control = nil
        state.callbacks = []
      }
      return (state.waiters.resolveAll(with: .success(result)), state.callbacks, state.control)
    }
    guard let (resumptions, callbacks, _) = woken else { return }
    for resumption in resumptions {
      resumption.perform()
    }
    for callback in callbacks {
      callback(result)
    }
  }

  @usableFromInline func fail(_ error: any Error) {
    complete(.failure(error))
  }

  @usableFromInline func markStarted() -> Bool {
    let cancelled = withLock { state -> Bool in
      if state.cancelRequested { return true }
      state.started = true
      return false
    }
    if cancelled {
      complete(.failure(CancellationError()))
    }
    return !cancelled
  }

  @usableFromInline func failIfCancelledBeforeStart() {
    let neverStarts = withLock { $0.cancelRequested && !$0.started }
    if neverStarts {
      complete(.failure(CancellationError()))
    }
  }

  @inlinable
  func wait() async -> Result<Value, any Error> {
    let (result, control, started) = withLock { ($0.result, $0.control, $0.started) }
    if let result { return result }
    if let error = control?.deadlockIfWaited(started: started) {
      return .failure(error)
    }
    let decision = withLock { state -> Wait in
      if let result = state.result { return .done(result) }
      return .wait(state.waiters.add())
    }
    guard case .wait(let waiter) = decision else {
      if case .done(let result) = decision { return result }
      return .failure(CancellationError())
    }
    do {
      // Not cancellable, like `Task.value`: the handle's `cancel()` cancels the item instead.
      return try await suspend { state, continuation in state.waiters.suspend(waiter, on: continuation) }
    } catch {
      return .failure(error)
    }
  }

  @inlinable
  func whenComplete(_ callback: @escaping @Sendable (Result<Value, any Error>) -> Void) {
    let completed: Result<Value, any Error>? = withLock { state in
      if let result = state.result { return result }
      state.callbacks.append(callback)
      return nil
    }
    if let completed {
      callback(completed)
    }
  }

  func cancel() {
    let control = withLock { state -> (any JobControl)? in
      state.cancelRequested = true
      return state.control
    }
    control?.cancel()
  }
}
