/// Returns a promise that settles like the first of `promises` to settle: resolved, rejected (as in Hydra,
/// a rejection wins if it comes first) or cancelled.
///
/// Observing the returned promise starts the lazy bodies of all of them. `context` is accepted for source
/// compatibility; no code of yours runs there. With no promises, the returned promise rejects with
/// ``PromiseError/invalidInput``.
public func any<L>(in context: Context? = nil, _ promises: Promise<L>...) -> Promise<L> {
  any(in: context, promises)
}

/// Returns a promise that settles like the first of `promises` to settle; see
/// ``any(in:_:)-(_,Promise<L>...)``.
public func any<L>(in context: Context? = nil, _ promises: [Promise<L>]) -> Promise<L> {
  guard !promises.isEmpty else { return Promise(rejected: PromiseError.invalidInput) }
  return Promise(lazy: { resolver in
    for promise in promises {
      promise.subscribe(resolver.complete)
    }
  })
}
