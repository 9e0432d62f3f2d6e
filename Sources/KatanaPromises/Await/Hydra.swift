import Dispatch
import Foundation

/// Hydra's blocking wait, for synchronous code that has not moved to async/await yet.
///
/// ```swift
/// struct LoadAndStore: SideEffect {                 // a Katana 6 side effect, synchronous
///   func sideEffect(_ context: SideEffectContext<AppState, Dependencies>) throws {
///     let user = try Hydra.await(context.dependencies.api.loadUser())
///     try Hydra.await(context.dispatch(SetUser(user: user)))
///   }
/// }
/// ```
///
/// In async code, write `try await promise.value` instead.
public enum Hydra {
  /// Blocks the calling thread until `promise` settles, and returns its value or throws its error.
  ///
  /// Where it is called decides how it waits:
  /// - On a thread outside any Swift task (a dispatch queue, a thread of yours), it blocks the thread, as
  ///   in Hydra.
  /// - On the main thread, between main-queue blocks (an XCTest method, for example), it runs the main run
  ///   loop while it waits, as an XCTest wait does: main-queue blocks run in their order, the callbacks
  ///   scheduled on ``Context/main`` (Hydra's default for `then`) included. Waiting for a `then { ... }`
  ///   chain from the main thread therefore works.
  /// - In a block running on the main queue, where nothing else can run the main queue, it runs the
  ///   promise callbacks scheduled on ``Context/main`` itself, in their order, while it waits.
  /// - Inside a Swift task (async code, an actor, the main actor), it throws
  ///   ``PromiseError/invalidContext`` at once instead of blocking a thread that other tasks need: write
  ///   `try await promise.value` there.
  ///
  /// `context` is kept from Hydra, where it chose the queue of the wait's own callbacks; only ``Context/main``
  /// changes anything: it throws ``PromiseError/invalidContext``, as in Hydra.
  ///
  /// - Throws: The promise's error; `CancellationError` if the promise is cancelled (Hydra waited forever);
  ///   ``PromiseError/invalidContext`` as described above; `StoreError.deadlock(_:)` when a
  ///   ``synchronousInterceptor(_:)`` handling a state updater waits for a dispatch to its own store, which
  ///   cannot start before the interceptor returns (Katana 6 hung).
  ///
  /// - Important: Inside a block running on the main queue, only promise callbacks can run during the wait,
  ///   not other main-queue blocks (the main queue is busy with the caller): a promise that waits for other
  ///   main-queue work never settles there. Likewise, blocking a serial queue of yours while waiting for a
  ///   callback on that same queue deadlocks, as in Hydra. Prefer calling from background threads.
  @discardableResult
  public static func await<T>(in context: Context? = nil, _ promise: Promise<T>) throws -> T {
    if let context, context.isMain { throw PromiseError.invalidContext }
    let mayBlockTask = LegacyBlocking.isBlockingAllowed
    if !mayBlockTask, withUnsafeCurrentTask(body: { $0 != nil }) { throw PromiseError.invalidContext }
    if let error = HeldTurn.deadlockError(waitingFor: promise) { throw error }

    // A settled promise (a dispatch the store handled on the spot, for one) needs no waiting.
    if let outcome = promise.storage.withLock({ $0.outcome }) { return try outcome.result.get() }

    let waiter = BlockingWaiter()
    let result = Locked<Result<T, any Error>?>(nil)
    promise.subscribe { outcome in
      result.withLock { $0 = outcome.result }
      waiter.finish()
    }
    if MainQueueJobs.isMainQueueRunner {
      waiter.waitServicingMainQueue()
    } else {
      waiter.waitUntilFinished()
    }
    // Internal invariant: the waiter finishes only after the result is stored.
    guard let outcome = result.withLock({ $0 }) else { preconditionFailure("Hydra.await woke without a result") }
    return try outcome.get()
  }

  /// Runs `body` as a promise's body on `context` (default ``Context/background``) and blocks until it
  /// settles; see ``await(in:_:)-(Context?,Promise<T>)``.
  ///
  /// - Throws: What the body rejects with or throws; ``PromiseError/invalidContext`` with ``Context/main``,
  ///   and where ``await(in:_:)-(Context?,Promise<T>)`` cannot block.
  @discardableResult
  public static func await<T>(in context: Context = .background, _ body: @escaping Promise<T>.Body) throws -> T {
    if context.isMain { throw PromiseError.invalidContext }
    return try Hydra.await(in: context, Promise(in: context, body))
  }
}

prefix operator ..
prefix operator ..!

/// Blocks until `promise` settles and returns its value or throws: Hydra's shorthand for
/// ``Hydra/await(in:_:)-(Context?,Promise<T>)``.
public prefix func .. <T>(_ promise: Promise<T>) throws -> T {
  try Hydra.await(promise)
}

/// Blocks until `promise` settles and returns its value, or nil if it rejects (or cannot be awaited here):
/// Hydra's shorthand for `try? Hydra.await(promise)`.
public prefix func ..! <T>(_ promise: Promise<T>) -> T? {
  try? Hydra.await(promise)
}
