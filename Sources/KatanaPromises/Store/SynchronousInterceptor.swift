import Foundation
import Katana

/// Katana 6's `StoreInterceptorNext`: hands the item on and returns once it has been handled, blocking the
/// calling thread.
public typealias SynchronousStoreInterceptorNext = (_ dispatchable: any Dispatchable) throws -> Void

/// Katana 6's `StoreInterceptor`: a synchronous interceptor, to adapt with ``synchronousInterceptor(_:)``.
///
/// As in Katana 6, the outer closure runs once per store, with the store's context; the middle closure runs
/// once per dispatch, with that dispatch's `next`; the handler it returns runs once, with the item.
public typealias SynchronousStoreInterceptor =
  @Sendable (_ context: any AnySideEffectContext) ->
  @Sendable (_ next: @escaping SynchronousStoreInterceptorNext) ->
  (_ dispatchable: any Dispatchable) throws -> Void

/// Adapts a Katana 6 interceptor, whose `next` returns synchronously, to the store's async chain.
///
/// ```swift
/// // Katana 6: static func interceptor() -> StoreInterceptor { { context in { next in { item in … } } } }
/// static func interceptor() -> SynchronousStoreInterceptor { { context in { next in { item in … } } } }
///
/// let store = Store<AppState, AppDependencies>(
///   interceptors: [synchronousInterceptor(Analytics.interceptor())], stateInitializer: AppState.init,
///   configuration: .katana6)
/// ```
///
/// For each dispatch, the middle closure and the handler run on a thread of their own that may block
/// (never on the cooperative pool); when the handler calls `next`, that thread blocks while the rest of
/// the chain runs, as part of the dispatch, and `next` then returns or throws what handling the item
/// threw. The handler may block in ``Hydra/await(in:_:)-(Context?,Promise<T>)`` while it handles a side
/// effect.
///
/// - Important: As in Katana 6, a handler that blocks waiting for a dispatch to the same store while it
///   handles a *state updater* deadlocks: the updater holds the store's turn until the handler returns.
///   Calling `next` after the handler has returned throws `StoreError.nextCalledOutOfScope(_:)`. Each
///   dispatch through the adapter costs two thread switches; rewrite hot interceptors as
///   `StoreInterceptor`s.
public func synchronousInterceptor(_ interceptor: @escaping SynchronousStoreInterceptor) -> StoreInterceptor {
  { context in
    let middle = interceptor(context)
    return { next in
      { item in try await SynchronousInterceptorCall(next: next).run(middle, item) }
    }
  }
}

/// One dispatch through a synchronous interceptor: the handler on a legacy thread, the rest of the chain in
/// the dispatching task, and the hand-offs between them.
final class SynchronousInterceptorCall: @unchecked Sendable {
  // Sendable: every mutable property is only touched with `condition` locked.

  /// What the handler's thread tells the dispatching task.
  enum Event {
    /// The handler called `next` with this item and waits for ``reply``.
    case next(any Dispatchable)
    /// The handler returned or threw.
    case finished(Result<Void, any Error>)
  }

  private let next: StoreInterceptorNext
  private let condition = NSCondition()
  private var event: Event?
  private var waiter: UnsafeContinuation<Event, Never>?
  private var reply: Result<Void, any Error>?
  private var isFinished = false
  /// Whether a `next` call is waiting for its reply.
  private var isForwarding = false

  init(next: @escaping StoreInterceptorNext) {
    self.next = next
  }

  /// Runs the handler for `item` and serves its `next` calls until it is done.
  func run(
    _ middle: @escaping @Sendable (@escaping SynchronousStoreInterceptorNext) -> (any Dispatchable) throws -> Void,
    _ item: any Dispatchable
  ) async throws {
    LegacyThreads().execute { [self] in
      let result = Result { try middle({ [self] item in try forward(item) })(item) }
      post(.finished(result))
    }
    while true {
      switch await nextEvent() {
      case .next(let forwarded):
        let result: Result<Void, any Error>
        do {
          try await next(forwarded)
          result = .success(())
        } catch {
          result = .failure(error)
        }
        deliver(result)
      case .finished(let result):
        return try result.get()
      }
    }
  }

  /// The handler's `next`: hands `item` to the dispatching task and blocks until it has been handled.
  private func forward(_ item: any Dispatchable) throws {
    condition.lock()
    // Calls from several threads at once take turns.
    while isForwarding { condition.wait() }
    if isFinished {
      condition.unlock()
      throw StoreError.nextCalledOutOfScope(String(reflecting: type(of: item)))
    }
    isForwarding = true
    condition.unlock()
    post(.next(item))
    condition.lock()
    var result = reply
    while result == nil {
      condition.wait()
      result = reply
    }
    reply = nil
    isForwarding = false
    condition.broadcast()
    condition.unlock()
    try result?.get()
  }

  /// Hands `event` to the dispatching task.
  private func post(_ event: Event) {
    condition.lock()
    if case .finished = event { isFinished = true }
    if let waiter {
      self.waiter = nil
      // Resumed with the lock held, which the resumed task takes once more in `nextEvent`: the thread
      // sanitizer then sees the ordering (swiftlang/swift#57803).
      waiter.resume(returning: event)
    } else {
      self.event = event
    }
    condition.unlock()
  }

  /// Waits for the handler's next event.
  private func nextEvent() async -> Event {
    let event = await withUnsafeContinuation { (continuation: UnsafeContinuation<Event, Never>) in
      condition.lock()
      if let event = self.event {
        self.event = nil
        condition.broadcast()
        condition.unlock()
        continuation.resume(returning: event)
      } else {
        waiter = continuation
        condition.unlock()
      }
    }
    synchronizeWithResume()
    return event
  }

  /// Hands the outcome of a forwarded item back to the handler's thread.
  private func deliver(_ result: Result<Void, any Error>) {
    condition.lock()
    reply = result
    condition.broadcast()
    condition.unlock()
  }

  /// Takes the lock the resuming thread held, so that the thread sanitizer sees the resume happen first.
  private func synchronizeWithResume() {
    condition.lock()
    condition.broadcast()
    condition.unlock()
  }
}

/// Katana 6's dispatch closure for dependency containers: dispatches an item and returns a promise of its
/// outcome.
public typealias PromiseDispatch = @Sendable (_ dispatchable: any Dispatchable) -> Promise<any Sendable>

/// Wraps the `dispatch` closure a dependency container receives so that it returns promises, as in Katana
/// 6: change the stored property's type from `AnyDispatch` to ``PromiseDispatch``, and assign
/// `promiseDispatch(dispatch)` in `init`; call sites stay as they are.
///
/// ```swift
/// final class AppDependencies: SideEffectDependencyContainer {
///   let dispatch: PromiseDispatch
///   init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
///     self.dispatch = promiseDispatch(dispatch)
///   }
/// }
/// ```
///
/// - Important: Each call runs the dispatch in a task of its own. A call chained on the previous one's
///   promise runs after it, but two calls made one after the other from synchronous code may be handled
///   in either order (Katana 6 kept their order). Where order matters, dispatch through the store
///   (`store.dispatch`, `send`) or a side effect's context, which keep call order.
public func promiseDispatch(_ dispatch: @escaping AnyDispatch) -> PromiseDispatch {
  { item in
    let promise = Promise<any Sendable> { try await dispatch(item) }
    // Observing a promise with a body starts it: dispatch now, as Katana 6 did.
    promise.whenSettled { _ in }
    return promise
  }
}
