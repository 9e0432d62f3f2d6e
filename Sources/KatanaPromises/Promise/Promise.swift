import Katana

/// A value that becomes available later, or an error: Hydra's promise, on locks and Swift concurrency.
///
/// ```swift
/// func loadUser(id: Int) -> Promise<User> {
///   Promise { resolve, reject, _ in
///     api.user(id: id) { result in
///       switch result {
///       case .success(let user): resolve(user)
///       case .failure(let error): reject(error)
///       }
///     }
///   }
/// }
///
/// loadUser(id: 3)
///   .then { user in print(user.name) }              // on the main queue, as in Hydra
///   .catch { error in print("failed: \(error)") }
///
/// let user = try await loadUser(id: 3).value         // from async code
/// ```
///
/// A promise settles once: it resolves with a value, rejects with an error, or is cancelled; later calls
/// are ignored. The one exception is ``retry(_:delay:_:)``, which resets a rejected promise and runs its
/// body again.
///
/// - Important: A body given to ``init(in:token:_:)`` is *lazy*, as in Hydra: it runs when something
///   observes the promise (`then`, `catch`, `value`, `all`, ...), not when the promise is created. Operators
///   call your closures asynchronously on their ``Context``, never inside the call that registers them.
public final class Promise<Value: Sendable>: @unchecked Sendable {
  // Sendable: all mutable state lives in `storage` and is only touched under its lock; the other stored
  // properties are immutable and Sendable.

  /// Resolves a promise from its body.
  public typealias Resolved = @Sendable (Value) -> Void
  /// Rejects a promise from its body.
  public typealias Rejector = @Sendable (any Error) -> Void
  /// A promise's body: call `resolve` or `reject` once (or throw, which rejects); `status` reports
  /// cancellation.
  public typealias Body =
    @Sendable (_ resolve: @escaping Resolved, _ reject: @escaping Rejector, _ status: PromiseStatus) throws -> Void

  @usableFromInline let storage: LockedBuffer<PromiseMachine<Value>>
  /// Where the body runs, and where `retry` decides whether to run it again.
  @usableFromInline let context: Context
  /// The invalidation token given at creation, shared with the promises derived from this one.
  @usableFromInline let token: InvalidationToken?

  @inlinable
  init(machine: PromiseMachine<Value>, context: Context, token: InvalidationToken?) {
    storage = LockedBuffer.make(machine)
    self.context = context
    self.token = token
  }

  /// Creates a promise whose `body` runs on `context` (default ``Context/background``) when the promise is
  /// first observed.
  ///
  /// The body calls `resolve` or `reject` once, now or later from any thread; throwing rejects the promise.
  /// It gets a ``PromiseStatus`` to check for cancellation of `token`.
  ///
  /// - Important: The body is lazy: nothing runs until you chain an operator, await the promise, or pass it
  ///   to `all`, `any`, `zip`, `map` or `reduce`. The promise keeps the body: ``retry(_:delay:_:)`` runs it
  ///   again.
  @inlinable
  public convenience init(in context: Context? = nil, token: InvalidationToken? = nil, _ body: @escaping Body) {
    let context = context ?? .background
    self.init(
      machine: PromiseMachine(
        outcome: nil,
        body: { resolver in
          context.schedule {
            do {
              try body(resolver.resolve, resolver.reject, resolver.status)
            } catch {
              resolver.reject(error)
            }
          }
        },
        bodyStarted: false),
      context: context, token: token)
  }

  /// Creates a promise that has already resolved with `value`.
  @inlinable
  public convenience init(resolved value: Value) {
    self.init(
      machine: PromiseMachine(outcome: .resolved(value), body: nil, bodyStarted: true), context: .background, token: nil
    )
  }

  /// Creates a promise that has already rejected with `error`.
  @inlinable
  public convenience init(rejected error: any Error) {
    self.init(
      machine: PromiseMachine(outcome: .rejected(error), body: nil, bodyStarted: true), context: .background, token: nil
    )
  }

  /// Creates a pending promise without a body: settle it yourself with ``resolve(_:)`` or ``reject(_:)``.
  ///
  /// - Important: `retry` cannot run such a promise again: it rejects with the error at once.
  @inlinable
  public convenience init() {
    self.init(machine: PromiseMachine(outcome: nil, body: nil, bodyStarted: true), context: .background, token: nil)
  }

  /// A pending promise without a body of its own: what operators return (see ``derive(in:_:)``).
  @inlinable
  init(derivedWith context: Context, token: InvalidationToken?) {
    storage = LockedBuffer.make(PromiseMachine(outcome: nil, body: nil, bodyStarted: true))
    self.context = context
    self.token = token
  }

  // MARK: Settling

  /// Resolves the promise with `value`, if it is pending.
  @inlinable
  public func resolve(_ value: Value) {
    settle(.resolved(value), generation: nil)
  }

  /// Rejects the promise with `error`, if it is pending.
  @inlinable
  public func reject(_ error: any Error) {
    settle(.rejected(error), generation: nil)
  }

  /// Cancels the promise, if it is pending: the promises derived from it are cancelled too, and
  /// ``cancelled(in:_:)`` handlers run.
  ///
  /// A promise made from an async closure (``init(priority:_:)``) also cancels its task. A body of yours
  /// is not interrupted: check `status.isCancelled` in it if it can stop early.
  @inlinable
  public func cancel() {
    settle(.cancelled, generation: nil)
  }

  /// Settles the promise if it is pending (and still in `generation`, when given), then notifies its
  /// observers outside the lock.
  @inlinable
  func settle(_ outcome: PromiseOutcome<Value>, generation: UInt64?) {
    guard let observers = storage.withLock({ $0.settle(outcome, generation: generation) }) else { return }
    InlineDelivery.notify(observers, of: outcome)
  }

  // MARK: State

  /// The value, if the promise has resolved.
  @inlinable
  public var result: Value? {
    storage.withLock { machine in
      if case .resolved(let value) = machine.outcome { return value }
      return nil
    }
  }

  /// The error, if the promise has rejected.
  @inlinable
  public var error: (any Error)? {
    storage.withLock { machine in
      if case .rejected(let error) = machine.outcome { return error }
      return nil
    }
  }

  /// Whether the promise has not settled yet.
  @inlinable
  public var isPending: Bool {
    storage.withLock { $0.outcome == nil }
  }

  /// Whether the promise's ``InvalidationToken`` was invalidated (false without a token).
  ///
  /// - Important: As in Hydra, this reports the token, not whether ``cancel()`` was called.
  @inlinable
  public var isCancelled: Bool {
    token?.isCancelled ?? false
  }

  /// A name for debugging.
  public var name: String? {
    get { storage.withLock { $0.name } }
    set { storage.withLock { $0.name = newValue } }
  }

  /// The status a body of this promise gets: the token's flag, and a way to cancel the promise.
  public var operation: PromiseStatus {
    PromiseStatus(token: token) { [self] in cancel() }
  }

  /// A promise that resolves with `()` when this one resolves, and otherwise settles like it.
  ///
  /// Unlike Hydra's, it runs no code on the main queue, so it works where nothing services the main queue.
  public var void: Promise<Void> {
    mapInline { _ in () }
  }

  // MARK: Observation (internal)

  /// Calls `observer` with the outcome, on the settling thread, or now if the promise has settled. Does
  /// not start the body.
  @inlinable
  func observe(_ observer: @escaping PromiseObserver<Value>) {
    if let outcome = storage.withLock({ $0.addObserver(observer) }) {
      InlineDelivery.notify(.one(observer), of: outcome)
    }
  }

  /// Observes the promise and starts its body if it has not started: what every operator does.
  @inlinable
  func subscribe(_ observer: @escaping PromiseObserver<Value>) {
    observe(observer)
    runBody()
  }

  /// Runs the body if the promise is pending and the body has not run in this generation.
  @inlinable
  func runBody() {
    guard let (body, generation) = storage.withLock({ $0.claimBody() }) else { return }
    body(PromiseResolver(promise: self, generation: generation))
  }

  /// Makes a settled promise with a body pending again (for `retry`). Returns false if it cannot.
  func reset() -> Bool {
    storage.withLock { $0.reset() }
  }

  /// Whether the promise has a body that `retry` can run again.
  var canRunAgain: Bool {
    storage.withLock { $0.body != nil }
  }

  /// Transforms the value on the settling thread, without a queue hop: for library code that runs no user
  /// code.
  @inlinable
  func mapInline<N>(_ transform: @escaping @Sendable (Value) -> N) -> Promise<N> {
    derive(in: .background) { outcome, resolver in
      if let value = outcome.valueOrForward(to: resolver) {
        resolver.resolve(transform(value))
      }
    }
  }

  /// Creates the promise an operator returns: `handler` gets this promise's outcome (on the settling thread)
  /// and settles the new promise through the resolver. The new promise shares this one's token.
  ///
  /// The new promise keeps `handler` and the outcome as its body, so that retrying it applies the operator
  /// to the same outcome again (Hydra's semantics: retrying a derived promise does not re-run its source).
  /// It does not keep this promise: a chain whose head never settles is released with its last reference.
  ///
  /// `settlesOnlyAfterSource` is false for an operator that can settle before this promise does (`timeout`);
  /// otherwise a promise derived from a dispatch that a blocking wait would deadlock on deadlocks it too
  /// (``HeldTurn``).
  @inlinable
  func derive<Derived>(
    in context: Context,
    settlesOnlyAfterSource: Bool = true,
    _ handler: @escaping @Sendable (PromiseOutcome<Value>, PromiseResolver<Derived>) -> Void
  ) -> Promise<Derived> {
    let derived = Promise<Derived>(derivedWith: context, token: token)
    if settlesOnlyAfterSource { HeldTurn.noteDerived(derived, from: self) }
    subscribe { outcome in
      let generation = derived.storage.withLock { machine in
        machine.installBody { resolver in handler(outcome, resolver) }
      }
      handler(outcome, PromiseResolver(promise: derived, generation: generation))
    }
    return derived
  }
}
