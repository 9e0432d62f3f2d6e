/// How a promise ended, as its observers receive it.
@usableFromInline
enum PromiseOutcome<Value: Sendable>: Sendable {
  case resolved(Value)
  case rejected(any Error)
  /// ``Promise/cancel()`` (or a body's `status.cancel()`) ran before the promise settled otherwise.
  case cancelled

  /// The outcome as a `Result`; a cancelled promise fails with `CancellationError`.
  @inlinable
  var result: Result<Value, any Error> {
    switch self {
    case .resolved(let value): .success(value)
    case .rejected(let error): .failure(error)
    case .cancelled: .failure(CancellationError())
    }
  }

  /// The value if the promise resolved. Otherwise settles `resolver` with the same rejection or
  /// cancellation, and returns nil: how operators pass on the outcomes they do not handle.
  @inlinable
  func valueOrForward<Other>(to resolver: PromiseResolver<Other>) -> Value? {
    switch self {
    case .resolved(let value): return value
    case .rejected(let error): resolver.reject(error)
    case .cancelled: resolver.cancel()
    }
    return nil
  }
}

/// Receives a promise's outcome, on whatever thread settles the promise. Observers never run user code
/// directly: the operators hop to their ``Context`` first.
@usableFromInline
typealias PromiseObserver<Value: Sendable> = @Sendable (PromiseOutcome<Value>) -> Void

/// What a promise runs to settle: the body given at creation, or, for a promise derived from another, the
/// step that re-applies the operator to the source's outcome (what `retry` re-runs).
@usableFromInline
typealias PromiseBody<Value: Sendable> = @Sendable (PromiseResolver<Value>) -> Void

/// The observers waiting for a promise. Most promises have one, so that case needs no array.
@usableFromInline
enum ObserverList<Value: Sendable> {
  case none
  case one(PromiseObserver<Value>)
  case many([PromiseObserver<Value>])

  @inlinable
  mutating func append(_ observer: @escaping PromiseObserver<Value>) {
    switch self {
    case .none: self = .one(observer)
    case .one(let first): self = .many([first, observer])
    case .many(var observers):
      self = .none  // keeps `observers` uniquely referenced while appending
      observers.append(observer)
      self = .many(observers)
    }
  }

  @inlinable
  func notify(_ outcome: PromiseOutcome<Value>) {
    switch self {
    case .none: break
    case .one(let observer): observer(outcome)
    case .many(let observers): for observer in observers { observer(outcome) }
    }
  }
}

/// The state of one promise: a pure state machine, only ever touched under the promise's lock. Each
/// transition returns what the caller must do once the lock is released (notify observers, run the body).
///
/// A promise settles once. The exception is `retry`, which resets a rejected promise and runs its body
/// again (Hydra's semantics); every reset starts a new *generation*, so that a late call from an earlier run
/// of the body cannot settle the new run.
@usableFromInline
struct PromiseMachine<Value: Sendable> {
  /// Nil while pending.
  @usableFromInline var outcome: PromiseOutcome<Value>?
  @usableFromInline var observers: ObserverList<Value> = .none
  /// Kept after it runs, so that `retry` can run it again.
  @usableFromInline var body: PromiseBody<Value>?
  /// Whether the body ran (or is running) in this generation.
  @usableFromInline var bodyStarted: Bool
  @usableFromInline var generation: UInt64 = 0
  @usableFromInline var name: String?

  @inlinable
  init(outcome: PromiseOutcome<Value>?, body: PromiseBody<Value>?, bodyStarted: Bool) {
    self.outcome = outcome
    self.body = body
    self.bodyStarted = bodyStarted
  }

  /// Adds an observer. Returns the outcome if the promise has already settled: the caller then notifies
  /// the observer itself, outside the lock.
  @inlinable
  mutating func addObserver(_ observer: @escaping PromiseObserver<Value>) -> PromiseOutcome<Value>? {
    if let outcome { return outcome }
    observers.append(observer)
    return nil
  }

  /// Settles the promise if it is pending (and, when `generation` is given, still in that generation).
  /// Returns the observers to notify, or nil if the call had no effect.
  @inlinable
  mutating func settle(_ newOutcome: PromiseOutcome<Value>, generation: UInt64?) -> ObserverList<Value>? {
    guard outcome == nil else { return nil }
    if let generation, generation != self.generation { return nil }
    outcome = newOutcome
    let notified = observers
    observers = .none
    return notified
  }

  /// Claims the body for this generation if the promise is pending and the body has not started.
  @inlinable
  mutating func claimBody() -> (PromiseBody<Value>, UInt64)? {
    guard outcome == nil, !bodyStarted, let body else { return nil }
    bodyStarted = true
    return (body, generation)
  }

  /// Makes a settled promise pending again, for `retry`. Returns false, and changes nothing, if the promise
  /// is pending or has no body to run again.
  @inlinable
  mutating func reset() -> Bool {
    guard outcome != nil, body != nil else { return false }
    outcome = nil
    bodyStarted = false
    generation &+= 1
    return true
  }

  /// Sets the body of a derived promise, which only exists once its source has settled. Returns the
  /// generation the caller settles.
  @inlinable
  mutating func installBody(_ newBody: @escaping PromiseBody<Value>) -> UInt64 {
    body = newBody
    bodyStarted = true
    return generation
  }
}
