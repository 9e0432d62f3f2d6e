/// Returns a promise of both values once both promises have resolved; it rejects with the first rejection
/// (and is cancelled if either is cancelled).
///
/// Starts both promises' lazy bodies now. `context` is accepted for source compatibility; no code of yours
/// runs there (unlike Hydra's, this `zip` does not need the main queue).
public func zip<A, B>(in context: Context? = nil, _ a: Promise<A>, _ b: Promise<B>) -> Promise<(A, B)> {
  let zipped = Promise<(A, B)>(derivedWith: .background, token: nil)
  let resolver = PromiseResolver(promise: zipped, generation: 0)
  let pending = Locked<(a: A?, b: B?)>((nil, nil))
  a.subscribe { outcome in
    guard let value = outcome.valueOrForward(to: resolver) else { return }
    let both = pending.withLock { pending -> (A, B)? in
      pending.a = value
      return pending.b.map { (value, $0) }
    }
    if let both { resolver.resolve(both) }
  }
  b.subscribe { outcome in
    guard let value = outcome.valueOrForward(to: resolver) else { return }
    let both = pending.withLock { pending -> (A, B)? in
      pending.b = value
      return pending.a.map { ($0, value) }
    }
    if let both { resolver.resolve(both) }
  }
  return zipped
}

/// Returns a promise of the three values once all three promises have resolved; see
/// ``zip(in:_:_:)``.
public func zip<A, B, C>(in context: Context? = nil, a: Promise<A>, b: Promise<B>, c: Promise<C>)
  -> Promise<(A, B, C)>
{
  zip(in: context, zip(in: context, a, b), c).mapInline { ab, c in (ab.0, ab.1, c) }
}

/// Returns a promise of the four values once all four promises have resolved; see ``zip(in:_:_:)``.
public func zip<A, B, C, D>(
  in context: Context? = nil, a: Promise<A>, b: Promise<B>, c: Promise<C>, d: Promise<D>
) -> Promise<(A, B, C, D)> {
  zip(in: context, zip(in: context, a, b), zip(in: context, c, d)).mapInline { ab, cd in (ab.0, ab.1, cd.0, cd.1) }
}
