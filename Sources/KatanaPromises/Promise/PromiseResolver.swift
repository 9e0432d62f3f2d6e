/// Settles one run of a promise's body.
///
/// A resolver belongs to one *generation* of its promise: after `retry` resets the promise and runs the
/// body again, a late call through the previous run's resolver is ignored.
///
/// This is the cheap path for code that settles promises from callbacks, such as the store completing a
/// dispatch through `DispatchHandle.whenComplete`:
///
/// ```swift
/// Promise<Void>(eager: { resolver in
///   let handle = core.send(item)            // the dispatch starts now, in order
///   handle.whenComplete(resolver.settle)    // settles the promise; no task, no queue hop
///   resolver.onCancel { handle.cancel() }
/// })
/// ```
@usableFromInline
package struct PromiseResolver<Value: Sendable>: Sendable {
  @usableFromInline let promise: Promise<Value>
  @usableFromInline let generation: UInt64

  @inlinable
  init(promise: Promise<Value>, generation: UInt64) {
    self.promise = promise
    self.generation = generation
  }

  /// Resolves this run of the promise with `value`.
  @inlinable
  package func resolve(_ value: Value) {
    promise.settle(.resolved(value), generation: generation)
  }

  /// Rejects this run of the promise with `error`.
  @inlinable
  package func reject(_ error: any Error) {
    promise.settle(.rejected(error), generation: generation)
  }

  /// Settles this run of the promise with `result`.
  @inlinable
  package func settle(_ result: Result<Value, any Error>) {
    switch result {
    case .success(let value): promise.settle(.resolved(value), generation: generation)
    case .failure(let error): promise.settle(.rejected(error), generation: generation)
    }
  }

  /// Cancels this run of the promise.
  @inlinable
  package func cancel() {
    promise.settle(.cancelled, generation: generation)
  }

  /// Settles this run of the promise with `outcome`.
  @inlinable
  func complete(_ outcome: PromiseOutcome<Value>) {
    promise.settle(outcome, generation: generation)
  }

  /// Whether the promise's invalidation token was invalidated.
  @inlinable
  package var isCancelled: Bool {
    promise.isCancelled
  }

  /// Calls `handler` (on the cancelling thread) if the promise is cancelled before it settles otherwise.
  @inlinable
  package func onCancel(_ handler: @escaping @Sendable () -> Void) {
    promise.observe { outcome in
      if case .cancelled = outcome { handler() }
    }
  }

  /// The status handed to a Hydra-style body: its `cancel` cancels this run.
  @inlinable
  var status: PromiseStatus {
    PromiseStatus(token: promise.token) { [self] in cancel() }
  }
}

extension Promise {
  /// Creates a promise whose `body` runs now, synchronously on the calling thread, and again on the thread
  /// that retries it each time ``retry(_:delay:_:)`` or ``retryWhen(_:delay:_:)`` runs it again.
  ///
  /// For the store's promise-returning `dispatch`: Katana 6's dispatch promises start their work
  /// immediately (eagerly), and `retry` on them dispatches the item again.
  @inlinable
  package convenience init(eager body: @escaping @Sendable (PromiseResolver<Value>) -> Void) {
    self.init(machine: PromiseMachine(outcome: nil, body: body, bodyStarted: false), context: .background, token: nil)
    runBody()
  }

  /// Creates a promise whose `body` runs inline on the thread that first observes the promise (lazy, but
  /// without a queue hop), and again on each retry.
  @inlinable
  convenience init(lazy body: @escaping @Sendable (PromiseResolver<Value>) -> Void) {
    self.init(machine: PromiseMachine(outcome: nil, body: body, bodyStarted: false), context: .background, token: nil)
  }

  /// Calls `callback` once with the outcome, on the settling thread (or now, if the promise has settled).
  /// Does not start a lazy body. A cancelled promise reports `CancellationError`.
  @inlinable
  package func whenSettled(_ callback: @escaping @Sendable (Result<Value, any Error>) -> Void) {
    observe { outcome in callback(outcome.result) }
  }
}
