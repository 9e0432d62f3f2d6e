/// What a suspended task is resumed through: an `UnsafeContinuation` in the package, a recording double in the
/// tests that explore the state machines.
@usableFromInline
package protocol Resumable<Value> {
  associatedtype Value
  /// Resumes the task with `result`. Called exactly once per suspension.
  func resumeWaiter(with result: Result<Value, any Error>)
}

extension UnsafeContinuation: Resumable where E == any Error {
  @inlinable
  package func resumeWaiter(with result: Result<T, any Error>) {
    // The result is handed over once (``Waiters`` resumes each waiter exactly once) and not used again; every
    // value the package passes this way is Sendable.
    nonisolated(unsafe) let result = result
    resume(with: result)
  }
}

/// A waiter's continuation with the outcome to resume it with: what a transition hands back, to perform after
/// unlocking.
@usableFromInline
package struct Resumption<C: Resumable> {
  @usableFromInline let continuation: C
  @usableFromInline let result: Result<C.Value, any Error>

  @inlinable
  init(_ continuation: C, _ result: Result<C.Value, any Error>) {
    self.continuation = continuation
    self.result = result
  }

  /// Resumes the waiter. Never call it while holding a lock.
  @inlinable
  package func perform() {
    continuation.resumeWaiter(with: result)
  }
}

// Sendable: both fields are Sendable then (`Result` of a Sendable value and `any Error`).
extension Resumption: @unchecked Sendable where C: Sendable, C.Value: Sendable {
  /// ``perform()``, as work to do after unlocking.
  @inlinable
  package var afterUnlock: @Sendable () -> Void {
    { perform() }
  }
}

/// The waiters of one kind that an owner keeps in its locked state: the pure half of Katana's one waiting
/// primitive (the other half is ``WaiterLock/suspend(install:cancel:)``).
///
/// A waiter goes through three steps, each under the owner's lock:
/// 1. ``add()``: the owner decides that a task must wait, and records it as pending;
/// 2. ``suspend(_:on:)``: the task has suspended, and hands over its continuation;
/// 3. ``resolve(_:with:)``: the outcome is decided, by the event waited for or by cancellation. The first
///    decision wins; later ones are ignored.
///
/// Steps 2 and 3 come in either order (cancellation, for one, may come before the task has suspended), and
/// whichever comes second returns the continuation with the outcome, to resume after unlocking. The waiter
/// is then forgotten. So each continuation is resumed exactly once, by whoever completed the pair, never
/// under a lock, and no waiter is left behind once both steps have happened. The tests check this over every
/// order of these steps for several waiters (`WaitingStateMachineTests`).
@usableFromInline
package struct Waiters<C: Resumable> {
  @usableFromInline
  enum Slot {
    /// Recorded; its task has not suspended yet, and no outcome is decided.
    case pending
    /// Its task has suspended on this continuation; no outcome is decided.
    case suspended(C)
    /// The outcome was decided before its task suspended.
    case decided(Result<C.Value, any Error>)
  }

  @usableFromInline var slots: [UInt64: Slot] = [:]
  @usableFromInline var lastID: UInt64 = 0

  @inlinable
  package init() {}

  /// Whether no waiter is recorded.
  @inlinable
  package var isEmpty: Bool { slots.isEmpty }

  /// The number of recorded waiters.
  package var count: Int { slots.count }

  /// Whether waiter `id` is recorded and its outcome is not decided yet.
  package func isWaiting(_ id: UInt64) -> Bool {
    switch slots[id] {
    case .pending, .suspended: true
    case .decided, nil: false
    }
  }

  /// The outcome decided for waiter `id` before its task suspended, if any (tests inspect it).
  package func decision(of id: UInt64) -> Result<C.Value, any Error>? {
    if case .decided(let result) = slots[id] { return result }
    return nil
  }

  /// Records a new pending waiter and returns its identifier.
  @inlinable
  package mutating func add() -> UInt64 {
    lastID &+= 1
    slots[lastID] = .pending
    return lastID
  }

  /// Waiter `id`'s task has suspended on `continuation`. Returns the resumption to perform if the outcome is
  /// already decided (the waiter is then forgotten), nil otherwise.
  @inlinable
  package mutating func suspend(_ id: UInt64, on continuation: C) -> Resumption<C>? {
    switch slots[id] {
    case .pending:
      slots[id] = .suspended(continuation)
      return nil
    case .decided(let result):
      slots[id] = nil
      return Resumption(continuation, result)
    case .suspended, nil:
      // Internal invariant: a waiter suspends once, after it was added, and is only forgotten after that.
      preconditionFailure("Katana internal error: waiter \(id) suspended twice or never added")
    }
  }

  /// Decides waiter `id`'s outcome, unless it is decided already. Returns the resumption to perform if its task
  /// has suspended (the waiter is then forgotten), nil otherwise.
  @inlinable
  package mutating func resolve(_ id: UInt64, with result: Result<C.Value, any Error>) -> Resumption<C>? {
    switch slots[id] {
    case .pending:
      slots[id] = .decided(result)
      return nil
    case .suspended(let continuation):
      slots[id] = nil
      return Resumption(continuation, result)
    case .decided, nil:
      return nil
    }
  }

  /// Decides the outcome of every waiter whose outcome is not decided yet; returns the resumptions to perform.
  @usableFromInline package mutating func resolveAll(with result: Result<C.Value, any Error>) -> [Resumption<C>] {
    var resumptions: [Resumption<C>] = []
    for id in Array(slots.keys) {
      if let resumption = resolve(id, with: result) {
        resumptions.append(resumption)
      }
    }
    return resumptions
  }
}

/// A lock whose protected state keeps ``Waiters``: what ``suspend(install:cancel:)`` waits on.
@usableFromInline
package protocol WaiterLock {
  associatedtype Protected
  /// Runs `body` with exclusive access to the protected state.
  func withLock<R>(_ body: (inout Protected) throws -> R) rethrows -> R
}

extension WaiterLock {
  /// Suspends the calling task as a waiter recorded in this lock's state, until its outcome is decided; a
  /// wait that cancellation does not end. See ``suspend(install:cancel:)``.
  @inlinable
  package nonisolated(nonsending) func suspend<T>(
    install: (inout Protected, UnsafeContinuation<T, any Error>) -> Resumption<UnsafeContinuation<T, any Error>>?
  ) async throws -> T {
    try await withUnsafeThrowingContinuation { continuation in
      withLock { install(&$0, continuation) }?.perform()
    }
  }
}

extension WaiterLock where Self: Sendable {
  /// Suspends the calling task as a waiter recorded in this lock's state, until its outcome is decided: the
  /// one place where the package suspends a task (the impure half of ``Waiters``).
  ///
  /// - Parameters:
  ///   - install: Runs once, under the lock, with the task's continuation: hands it to the waiter's table
  ///     with ``Waiters/suspend(_:on:)`` and returns what that returns.
  ///   - cancel: Runs under the lock if the calling task is cancelled, possibly before `install`: decides the
  ///     waiter's outcome with ``Waiters/resolve(_:with:)`` (usually a `CancellationError`), along with any
  ///     bookkeeping of the owner, and returns what to do after unlocking: the resumption `resolve` returned
  ///     (``Resumption/afterUnlock``), and whatever else the bookkeeping requires. Nil for a wait that
  ///     cancellation does not end (or use ``suspend(install:)``).
  /// - Returns: The outcome's value.
  /// - Throws: The outcome's error.
  @inlinable
  package nonisolated(nonsending) func suspend<T>(
    install: (inout Protected, UnsafeContinuation<T, any Error>) -> Resumption<UnsafeContinuation<T, any Error>>?,
    cancel: (@Sendable (inout Protected) -> (@Sendable () -> Void)?)?
  ) async throws -> T {
    guard let cancel else { return try await suspend(install: install) }
    return try await withTaskCancellationHandler {
      try await withUnsafeThrowingContinuation { continuation in
        withLock { install(&$0, continuation) }?.perform()
      }
    } onCancel: {
      withLock(cancel)?()
    }
  }
}
