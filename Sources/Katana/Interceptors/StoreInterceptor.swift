/// Hands an item on to the rest of the interceptor chain, and eventually to the store.
///
/// Returns when the item has been handled (a state updater committed, a side effect's body returned) and
/// throws what handling it threw.
public typealias StoreInterceptorNext = @Sendable (_ dispatchable: any Dispatchable) async throws -> Void

/// A function that sees every item dispatched to a store before the store handles it.
///
/// ```swift
/// let timing: StoreInterceptor = { context in
///   { next in
///     { item in
///       let start = ContinuousClock.now
///       defer { print(item.debugDescription, ContinuousClock.now - start) }
///       try await next(item)
///     }
///   }
/// }
/// let store = Store<AppState, AppDependencies>(interceptors: [timing])
/// ```
///
/// The three levels run at different times:
/// 1. the outer closure runs **once per store**, during start-up, in array order, with the store's context;
/// 2. the middle closure runs **once per store** too, right after, to compose the chain: it receives the
///    rest of the chain (`next`) and returns this interceptor's handler;
/// 3. the handler runs **once per dispatch**, first interceptor first.
///
/// A handler may:
/// - call `next(item)` to hand the item on, and then do more work after it has been handled;
/// - call `next` with a different item of the same kind, which is handled in place of the original;
/// - call `next` with an item of the other kind (an updater instead of a side effect or the reverse): that
///   item is dispatched as a new item through the whole chain once the current chain has returned, and
///   the original call waits for it and rethrows its error. A ``ReturningSideEffect``'s caller then gets
///   ``StoreError/returnValueUnavailable(_:)``;
/// - throw, which rejects the dispatch: the item is not handled (unless `next` already ran) and the caller
///   gets the error;
/// - return without calling `next`: a state updater or a side effect returning nothing is silently
///   dropped, and a ``ReturningSideEffect``'s caller gets ``StoreError/returnValueUnavailable(_:)``.
///
/// - Important: For a state updater, the handler runs while the updater holds the store's turn: no later
///   updater is applied until it returns, even if it suspends. Awaiting another state updater of the same
///   store from there would deadlock, so the store throws ``StoreError/deadlock(_:)`` instead. Handlers
///   for side effects run concurrently.
public typealias StoreInterceptor =
  @Sendable (_ context: any AnySideEffectContext) ->
  @Sendable (_ next: @escaping StoreInterceptorNext) ->
  StoreInterceptorNext

/// Composes the store's chain, the plain way: the first interceptor's handler runs first, the last one calls `final`.
/// Stores made with ``StoreConfiguration/usesPlainInterceptorChain`` run their updaters through it; every other
/// store composes ``composeOpaqueChain(_:context:tail:done:)`` instead (STYLE 11: this is its plain twin).
///
/// Swift stores the functions of an array at maximal abstraction (arguments and results passed indirectly, the
/// functions they return too), so a function taken out of `[StoreInterceptor]` and called with its own type goes
/// through reabstraction thunks, and so does every handler it returns and every `next` it is given: each one more
/// async frame on every dispatch. ``composeOpaque(_:context:final:)`` composes the chain where the functions'
/// types are generic parameters, whose representation is the array's own, so the handlers call each other
/// without converting (only the thunks that the interceptors' own code made when it put them in the array
/// remain), and the chain is converted once at each end.
func composeInterceptors(
  _ interceptors: [StoreInterceptor], context: any AnySideEffectContext, final: @escaping StoreInterceptorNext
) -> StoreInterceptorNext {
  composeOpaque(interceptors, context: context, final: final)
}

/// ``composeInterceptors(_:context:final:)`` at maximal abstraction. Never specialised: specialised for the
/// concrete function types, it would convert each function again.
@_semantics("optimize.sil.specialize.generic.never")
@inline(never)
func composeOpaque<Context, Next>(
  _ interceptors: [@Sendable (Context) -> @Sendable (Next) -> Next], context: Context, final: Next
) -> Next {
  var middles: [@Sendable (Next) -> Next] = []
  middles.reserveCapacity(interceptors.count)
  for interceptor in interceptors {
    middles.append(interceptor(context))
  }
  var next = final
  for middle in middles.reversed() {
    next = middle(next)
  }
  return next
}

/// The interceptor chain's final `next`, made by ``StoreCore/makeChainEnd()`` where it is specialised for the store's
/// state type, in the two forms the chain's two representations call. Both take the frame of the dispatch the call
/// belongs to, found by whoever calls them: a ``DispatchInterceptorNext`` carries it, a ``StoreInterceptorNext`` (made
/// once per store) finds it in the calling task's task-local value, ``DispatchFrame/current``.
@usableFromInline
struct ChainTail: Sendable {
  /// Handles an item handed on for the dispatch of the frame given, synchronously, and returns true if that is a state
  /// updater's; returns false, having done nothing, if it is a side effect's (then ``next`` handles it).
  ///
  /// - Throws: ``StoreError/nextCalledOutOfScope(_:)`` without a frame of the store; what handling threw.
  @usableFromInline let updater: @Sendable (any Dispatchable, DispatchFrame?) throws -> Bool
  /// The whole final `next`, for the dispatch of the frame given: the plain chain's end, and the opaque chain's for side
  /// effects.
  @usableFromInline let next: @Sendable (any Dispatchable, DispatchFrame?) async throws -> Void

  @inlinable
  init(
    updater: @escaping @Sendable (any Dispatchable, DispatchFrame?) throws -> Bool,
    next: @escaping @Sendable (any Dispatchable, DispatchFrame?) async throws -> Void
  ) {
    self.updater = updater
    self.next = next
  }

  /// The final `next` as a ``StoreInterceptorNext``: for the dispatch whose frame the calling task carries.
  var storeInterceptorNext: StoreInterceptorNext {
    let next = next
    return { item in try await next(item, DispatchFrame.current) }
  }
}

/// ``StoreInterceptorNext`` with its result type a generic parameter, `Out` (only ever `Void`): seen where `Out` is
/// not specialised, its representation is the one the functions of `[StoreInterceptor]` have (see ``OpaqueChain``).
@usableFromInline typealias OpaqueNext<Out> = @Sendable (_ dispatchable: any Dispatchable) async throws -> Out

/// The store's interceptor chain kept at the representation its handlers have in the interceptors' array, so that a
/// state updater's dispatch calls it without converting at either end.
///
/// Functions taken out of `[StoreInterceptor]` are at maximal abstraction (an existential argument, a result
/// returned indirectly); ``StoreInterceptorNext``, a concrete function type, returns `Void` directly. Converting
/// between the two takes a reabstraction thunk, one more async frame on every call: the plain chain
/// (``composeInterceptors(_:context:final:)``) has one where the store calls the first handler and one where the last
/// handler calls the store. Here the head is kept, and the end made, where the result type is a generic parameter
/// (`Out`, which is only ever `Void`), whose representation is the array's own: the store calls the head from
/// ``run(_:)``, never specialised, and the end calls the store's specialised ``ChainTail/updater`` synchronously.
/// What remains per interceptor are the two thunks the interceptor's own code made when it was put in the array.
@usableFromInline
final class OpaqueChain<Out: Sendable>: Sendable {
  /// The first handler (the end itself, without interceptors), at the array's representation.
  @usableFromInline let head: OpaqueNext<Out>
  /// The store's ``DispatchInterceptor``s, when it has them and no closure interceptor: a state updater's dispatch
  /// calls them directly instead of ``run(_:)``, handing them its frame, which binds no task-local value then (``head``
  /// calls them too, one closure later, with the frame it finds in the calling task).
  @usableFromInline let dispatchChain: DispatchInterceptorChain?

  init(head: @escaping OpaqueNext<Out>, dispatchChain: DispatchInterceptorChain?) {
    self.head = head
    self.dispatchChain = dispatchChain
  }

  /// Runs the chain for `item`. The caller binds the dispatch's frame (``DispatchFrame/withFrame(_:_:)``), which the
  /// chain's closures find in the task: there, specialised, the binding is inlined; here it took two more async frames.
  /// The result goes to the caller, whose `Out` is `Void`: kept here, it took an allocation from the task's allocator
  /// and a destruction through the type's value witnesses.
  @_semantics("optimize.sil.specialize.generic.never")
  @inline(never) @usableFromInline
  nonisolated(nonsending) func run(_ item: any Dispatchable) async throws -> Out {
    try await head(item)
  }
}

/// Composes the chain once, as ``composeInterceptors(_:context:final:)`` does, into an ``OpaqueChain`` whose end hands
/// state updaters to `tail.updater` and side effects to `tail.next`, after the `dispatchInterceptors` if there are
/// any; `done` is what the end returns (`()`).
///
/// Never specialised: specialised for `Out == Void`, the functions would take the substituted representation again.
@_semantics("optimize.sil.specialize.generic.never")
@inline(never)
func composeOpaqueChain<Out: Sendable>(
  _ interceptors: [@Sendable (any AnySideEffectContext) -> @Sendable (@escaping OpaqueNext<Out>) -> OpaqueNext<Out>],
  dispatchInterceptors: [any DispatchInterceptor], context: any AnySideEffectContext, tail: ChainTail, done: Out
) -> OpaqueChain<Out> {
  let end: OpaqueNext<Out>
  let dispatchChain: DispatchInterceptorChain?
  if dispatchInterceptors.isEmpty {
    let updater = tail.updater
    let next = tail.next
    end = { item in
      let frame = DispatchFrame.current
      if try updater(item, frame) { return done }
      try await next(item, frame)
      return done
    }
    dispatchChain = nil
  } else {
    let chain = DispatchInterceptorChain(dispatchInterceptors, context: context, tail: tail)
    end = { item in
      try await chain.run(item, from: 0, frame: DispatchFrame.current)
      return done
    }
    dispatchChain = chain
  }
  return OpaqueChain(
    head: composeOpaque(interceptors, context: context, final: end),
    dispatchChain: interceptors.isEmpty ? dispatchChain : nil)
}
