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
/// (never on the cooperative pool, and never waiting for Dispatch to start one); when the handler calls
/// `next`, that thread blocks while the rest of the chain runs, as part of the dispatch, and `next` then
/// returns or throws what handling the item threw. The handler may block in
/// ``Hydra/await(in:_:)-(Context?,Promise<T>)`` while it handles a side effect.
///
/// - Important: While it handles a *state updater*, the handler holds the store's turn: what it dispatches
///   to the same store runs after it returns. Blocking on such a dispatch (Katana 6 hung) throws
///   `StoreError.deadlock(_:)` from ``Hydra/await(in:_:)-(Context?,Promise<T>)`` when it waits for the
///   promise that `context.dispatch`, `store.dispatch` (or a `PartialStore`'s or `AnyStore`'s) returned, or
///   for a promise it derived from one (`then`, `catch`, `recover`, ...; a `timeout` settles on its own). A
///   wait the adapter cannot trace to the dispatch (a promise from `promiseDispatch`, a `zip`) still hangs,
///   as in Katana 6. Calling `next` after the handler has returned throws
///   `StoreError.nextCalledOutOfScope(_:)`. Each dispatch through the adapter costs two thread switches;
///   rewrite hot interceptors as `StoreInterceptor`s.
public func synchronousInterceptor(_ interceptor: @escaping SynchronousStoreInterceptor) -> StoreInterceptor {
  { context in
    let middle = interceptor(context)
    let store = HeldTurn.token(of: context.storeInternals)
    return { next in
      { item in
        // A handler for a state updater holds the store's turn.
        let heldTurn = (item is any AnyStateUpdater) ? store.map(HeldTurn.Scope.init) : nil
        try await SynchronousInterceptorCall(next: next, heldTurn: heldTurn).run(middle, item)
      }
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
  /// Events posted and not yet taken by the dispatching task, oldest first.
  private var events: [Event] = []
  private var waiter: UnsafeContinuation<Event, Never>?
  private var reply: Result<Void, any Error>?
  private var isFinished = false
  /// Whether a `next` call is waiting for its reply.
  private var isForwarding = false

  /// Set when the handler holds the store's turn (it handles a state updater).
  private let heldTurn: HeldTurn.Scope?

  init(next: @escaping StoreInterceptorNext, heldTurn: HeldTurn.Scope?) {
    self.next = next
    self.heldTurn = heldTurn
  }

  /// Runs the handler for `item` and serves its `next` calls until it is done.
  func run(
    _ middle: @escaping @Sendable (@escaping SynchronousStoreInterceptorNext) -> (any Dispatchable) throws -> Void,
    _ item: any Dispatchable
  ) async throws {
    // A thread that may block, from a pool that starts one whenever none is idle (Dispatch would stop at 255
    // on Linux, while the handlers it runs wait for each other), marked, for a state updater, as holding the
    // store's turn.
    ThreadPool.blocking.execute { [self] in
      let result = Result {
        try HeldTurn.holding(heldTurn) {
          try LegacyBlocking.allowingBlocking { try middle({ [self] item in try forward(item) })(item) }
        }
      }
      condition.lock()
      isFinished = true
      let waiter = post(.finished(result))
      condition.unlock()
      waiter?.resume(returning: .finished(result))
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
    // Checked and posted in one critical section: once the handler has finished, the dispatching task
    // takes no more events, so a later `next` must fail rather than wait for a reply that never comes.
    if isFinished {
      condition.unlock()
      throw StoreError.nextCalledOutOfScope(String(reflecting: type(of: item)))
    }
    isForwarding = true
    if let waiter = post(.next(item)) {
      // Resumed after unlocking; the reply is read under the lock again (the task may have replied already).
      condition.unlock()
      waiter.resume(returning: .next(item))
      condition.lock()
    }
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

  /// Hands `event` to the dispatching task: queues it, or returns the waiting task's continuation, which the
  /// caller resumes with `event` once it has unlocked. Called with `condition` locked.
  private func post(_ event: Event) -> UnsafeContinuation<Event, Never>? {
    if let waiter {
      self.waiter = nil
      return waiter
    }
    events.append(event)
    return nil
  }

  /// Waits for the handler's next event.
  private func nextEvent() async -> Event {
    let event = await withUnsafeContinuation { (continuation: UnsafeContinuation<Event, Never>) in
      condition.lock()
      if !events.isEmpty {
        let event = events.removeFirst()
        condition.unlock()
        continuation.resume(returning: event)
      } else {
        waiter = continuation
        condition.unlock()
      }
    }
    return event
  }

  /// Hands the outcome of a forwarded item back to the handler's thread.
  private func deliver(_ result: Result<Void, any Error>) {
    condition.lock()
    reply = result
    condition.broadcast()
    condition.unlock()
  }

}
