/// Returns a promise that settles like the first of `promises` to settle: resolved, rejected (as in Hydra,
/// a rejection wins if it comes first) or cancelled.
///
/// The promises are watched from the call on, so "first" is the first in time even if they settle before
/// anything observes the returned promise. Observing the returned promise starts their lazy bodies.
/// `context` is accepted for source compatibility; no code of yours runs there. With no promises, the
/// returned promise rejects with ``PromiseError/invalidInput``.
public func any<L>(in context: Context? = nil, _ promises: Promise<L>...) -> Promise<L> {
  any(in: context, promises)
}

/// Returns a promise that settles like the first of `promises` to settle; see
/// ``any(in:_:)-(_,Promise<L>...)``.
public func any<L>(in context: Context? = nil, _ promises: [Promise<L>]) -> Promise<L> {
  guard !promises.isEmpty else { return Promise(rejected: PromiseError.invalidInput) }
  // The body starts the lazy bodies (and, after a `retry`, observes the promises again). The inputs' observers
  // hold a link that lets go of `first` once it has settled: an input that never settles then keeps nothing
  // alive.
  let first = Promise<L>(lazy: { resolver in
    let link = SettleLink.make(resolver)
    for promise in promises {
      promise.subscribe(link.complete)
    }
  })
  let link = SettleLink.make(PromiseResolver(promise: first, generation: 0))
  for promise in promises {
    promise.observe(link.complete)
  }
  return first
}
