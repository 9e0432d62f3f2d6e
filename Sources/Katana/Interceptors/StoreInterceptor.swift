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

/// Composes the store's chain: the first interceptor's handler runs first, the last one calls `final`.
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
