/// An interceptor written as a type: the faster form of ``StoreInterceptor``, with the same powers.
///
/// ```swift
/// struct Timing: DispatchInterceptor {
///   func intercept(_ item: any Dispatchable, next: DispatchInterceptorNext) async throws {
///     let start = ContinuousClock.now
///     defer { print(item.debugDescription, ContinuousClock.now - start) }
///     try await next(item)
///   }
/// }
/// let store = Store<AppState, AppDependencies>(
///   configuration: StoreConfiguration(dispatchInterceptors: [Timing()]))
/// ```
///
/// ``intercept(_:next:)`` is what a ``StoreInterceptor``'s handler is, and may do all it may: call `next` to hand the
/// item on (from the handler, or from a task it starts), hand on a different item of the same kind or one of the
/// other kind, throw to reject the dispatch, or return without calling `next` to drop it. The rules, the turn a
/// state updater holds while its interceptors run, and the errors are those of ``StoreInterceptor``, with one
/// difference: a ``DispatchInterceptorNext`` carries the dispatch it was given for, so it hands on from any task while
/// that dispatch runs, and kept for a later dispatch it throws ``StoreError/nextCalledOutOfScope(_:)`` (a
/// ``StoreInterceptorNext`` belongs to whichever dispatch's chain the calling task runs). The store's
/// context, which a ``StoreInterceptor`` gets in its outer closure, is ``DispatchInterceptorNext/context``.
///
/// Why a second form: Swift keeps the functions of an array such as `[StoreInterceptor]` at their most general
/// representation, so every handler, and every `next` it is given, is called through reabstraction thunks, two
/// more async calls per interceptor on every dispatch. A method called through a protocol has no thunk: five
/// pass-through ``DispatchInterceptor``s cost about two thirds of what five pass-through ``StoreInterceptor``s cost
/// (see <doc:Performance>). Interceptors that only observe should be ``DispatchObserver``s, cheaper still.
///
/// A store's ``StoreConfiguration/dispatchInterceptors`` run after its `interceptors` (``StoreInterceptor``s), in
/// array order: the first ``StoreInterceptor`` sees an item first, the last ``DispatchInterceptor`` hands it to the
/// store.
public protocol DispatchInterceptor: Sendable {
  /// Sees `item` on its way to the store; `next` hands it on to the rest of the chain.
  ///
  /// - Parameters:
  ///   - item: The item dispatched, or what the interceptors before this one handed on.
  ///   - next: The rest of the chain. Call it to hand an item on; it returns when the item has been handled (a state
  ///     updater committed, a side effect's body returned) and throws what handling it threw.
  /// - Throws: Whatever rejects the dispatch: the caller gets the error.
  func intercept(_ item: any Dispatchable, next: DispatchInterceptorNext) async throws
}

/// The rest of a store's interceptor chain, as a ``DispatchInterceptor`` is given it: call it as a function.
///
/// A `next` belongs to the dispatch it was given for, and carries it: called while that dispatch runs, from the
/// interceptor or from any task (a child task, `Task {}`, a detached task), it hands the item on in that dispatch;
/// called once the dispatch has finished, kept for a later dispatch included, it throws
/// ``StoreError/nextCalledOutOfScope(_:)``. (A ``StoreInterceptorNext``, made once per store, cannot carry its dispatch:
/// it belongs to the dispatch whose chain the calling task runs, found in a task-local value.)
public struct DispatchInterceptorNext: Sendable {
  @usableFromInline let chain: DispatchInterceptorChain
  /// The position in the chain of the interceptor this hands on to (the store's end past the last).
  @usableFromInline let position: Int
  /// The frame of the dispatch this was given for (nil: given outside of any dispatch of the store, by a
  /// ``StoreInterceptorNext`` called outside of any).
  @usableFromInline let frame: DispatchFrame?

  @inlinable init(chain: DispatchInterceptorChain, position: Int, frame: DispatchFrame?) {
    self.chain = chain
    self.position = position
    self.frame = frame
  }

  /// Hands `item` on to the rest of the chain, and eventually to the store.
  ///
  /// - Throws: What handling the item threw; ``StoreError/nextCalledOutOfScope(_:)`` once the dispatch this was
  ///   given for has finished (or when it was given outside of any); ``StoreError/nextCalledConcurrently(_:)`` while
  ///   another call for the same state updater's dispatch is being handled.
  @inlinable @inline(__always)
  public nonisolated(nonsending) func callAsFunction(_ item: any Dispatchable) async throws {
    // Inlined into the interceptor's own code, with the chain's step: no async frame of its own (left to the
    // optimiser, it had one, about 20 ns of a dispatch through one interceptor).
    try await chain.run(item, from: position, frame: frame)
  }

  /// The store's context: what a ``StoreInterceptor``'s outer closure is given, to dispatch from the interceptor or
  /// read the state.
  public var context: any AnySideEffectContext { chain.context }
}

/// A store's ``DispatchInterceptor``s, composed once when the store starts: each one is called with a
/// ``DispatchInterceptorNext`` that names the next position and carries the dispatch's frame, and the position past the
/// last is the store's end, `tail`.
@usableFromInline
final class DispatchInterceptorChain: Sendable {
  @usableFromInline let interceptors: [any DispatchInterceptor]
  @usableFromInline let tail: ChainTail
  let context: any AnySideEffectContext

  init(_ interceptors: [any DispatchInterceptor], context: any AnySideEffectContext, tail: ChainTail) {
    self.interceptors = interceptors
    self.context = context
    self.tail = tail
  }

  /// Calls the interceptor at `position` for the dispatch of `frame`, or the store's end past the last: inlined into an
  /// interceptor's own call of `next`, and into the store's call of the first, so that each interceptor is one async
  /// call, through its conformance.
  @inlinable @inline(__always)
  nonisolated(nonsending) func run(_ item: any Dispatchable, from position: Int, frame: DispatchFrame?) async throws {
    if position < interceptors.count {
      try await interceptors[position].intercept(
        item, next: DispatchInterceptorNext(chain: self, position: position &+ 1, frame: frame))
    } else {
      if try tail.updater(item, frame) { return }
      try await tail.next(item, frame)
    }
  }
}

/// The head of the plain chain of `interceptors`, ending in `tail`'s whole `next` (the tail itself without any): for
/// the dispatch whose frame the calling task carries.
func composeDispatchInterceptors(
  _ interceptors: [any DispatchInterceptor], context: any AnySideEffectContext, tail: ChainTail
) -> StoreInterceptorNext {
  guard !interceptors.isEmpty else { return tail.storeInterceptorNext }
  let chain = DispatchInterceptorChain(
    interceptors, context: context, tail: ChainTail(updater: { _, _ in false }, next: tail.next))
  return { item in try await chain.run(item, from: 0, frame: DispatchFrame.current) }
}
