/// How ``map(_:as:_:_:)`` runs the promises it creates.
public enum PromiseResolveType: Sendable {
  /// All at once.
  case parallel
  /// One after the other, in order: each item's promise is created once the previous one has resolved.
  case series
}

/// Turns each item into a promise with `transform` and returns a promise of all the values, in the order
/// of `items`; it rejects with the first rejection (or error thrown by `transform`).
///
/// `transform` runs on `context` (default ``Context/background``): for `.parallel`, for every item at once,
/// then the promises run together (like ``all(_:concurrency:)-(S,_)``); for `.series`, for each item once
/// the previous item's promise has resolved.
///
/// - Important: `items` is read once, when you call `map`.
public func map<A: Sendable, B, S: Sequence>(
  _ context: Context? = nil, as type: PromiseResolveType, _ items: S,
  _ transform: @escaping @Sendable (A) throws -> Promise<B>
) -> Promise<[B]> where S.Element == A {
  let context = context ?? .background
  let items = Array(items)
  switch type {
  case .parallel:
    return Promise(resolved: ()).then(in: context) { () -> Promise<[B]> in
      all(try items.map(transform))
    }
  case .series:
    return map_series(context: context, items: items, transform: transform)
  }
}

/// Turns each item into a promise with `transform`, one after the other, and returns a promise of all the
/// values: the same as ``map(_:as:_:_:)`` with `.series`.
// swift-format-ignore: AlwaysUseLowerCamelCase
public func map_series<A: Sendable, B, S: Sequence>(
  context: Context, items: S, transform: @escaping @Sendable (A) throws -> Promise<B>
) -> Promise<[B]> where S.Element == A {
  items.reduce(Promise<[B]>(resolved: [])) { chain, item in
    chain.then(in: context) { (results: [B]) -> Promise<[B]> in
      try transform(item).mapInline { results + [$0] }
    }
  }
}

/// Folds `items` into one value with an asynchronous step: starting from `initial`, each step gets the
/// previous result and the next item and returns a promise of the new result.
///
/// `transform` runs on `context` (default ``Context/main``, as in Hydra), one step after the other. The
/// returned promise rejects with the first error.
///
/// - Important: `items` is read once, when you call `reduce`.
public func reduce<A: Sendable, I, S: Sequence>(
  in context: Context? = nil, _ items: S, _ initial: I, _ transform: @escaping @Sendable (I, A) throws -> Promise<I>
) -> Promise<I> where S.Element == A {
  let context = context ?? .main
  return items.reduce(Promise<I>(resolved: initial)) { partial, item in
    partial.then(in: context) { (result: I) -> Promise<I> in try transform(result, item) }
  }
}
