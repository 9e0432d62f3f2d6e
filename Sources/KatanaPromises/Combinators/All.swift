import Katana

/// Returns a promise of all the values, in the order of `promises`, once they have all resolved; it rejects
/// with the first rejection (and is cancelled if one of them is cancelled).
///
/// At most `concurrency` of the promises' lazy bodies run at once: when one resolves, the next body
/// starts. With no promises, or `concurrency == 0`, the returned promise resolves with `[]`.
///
/// - Important: The returned promise is lazy, as in Hydra: the bodies start when something observes it.
///   `concurrency` can only hold back lazy bodies; promises that are already running (a store's dispatch
///   promises, promises already observed) are not limited.
public func all<L>(_ promises: Promise<L>..., concurrency: UInt = UInt.max) -> Promise<[L]> {
  all(promises, concurrency: concurrency)
}

/// Returns a promise of all the values, in the order of `promises`, once they have all resolved; see
/// ``all(_:concurrency:)-(Promise<L>...,_)``.
public func all<L, S: Sequence>(_ promises: S, concurrency: UInt = UInt.max) -> Promise<[L]>
where S.Element == Promise<L> {
  let promises = Array(promises)
  guard !promises.isEmpty, concurrency > 0 else { return Promise(resolved: []) }
  let initialCount = Int(clamping: min(concurrency, UInt(promises.count)))
  return Promise(lazy: { resolver in
    let collector = Locked(AllCollector<L>(count: promises.count, nextToStart: initialCount))
    for (index, promise) in promises.enumerated() {
      promise.observe { outcome in
        guard let value = outcome.valueOrForward(to: resolver) else { return }
        let (values, next) = collector.withLock { $0.store(value, at: index) }
        if let values {
          resolver.resolve(values)
        } else if let next, next < promises.count {
          promises[next].runBody()
        }
      }
    }
    for promise in promises.prefix(initialCount) {
      promise.runBody()
    }
  })
}

/// The values `all` has collected so far.
struct AllCollector<L> {
  var values: [L?]
  var remaining: Int
  var nextToStart: Int

  init(count: Int, nextToStart: Int) {
    values = Array(repeating: nil, count: count)
    remaining = count
    self.nextToStart = nextToStart
  }

  /// Stores a value. Returns every value once the last one arrives; otherwise the index of the next
  /// promise whose body should start (one slot of the concurrency limit is free again).
  mutating func store(_ value: L, at index: Int) -> (values: [L]?, next: Int?) {
    values[index] = value
    remaining -= 1
    if remaining == 0 { return (values.compactMap { $0 }, nil) }
    defer { nextToStart += 1 }
    return (nil, nextToStart)
  }
}
