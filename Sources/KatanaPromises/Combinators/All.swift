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
    let run = AllRun.make(resolver: resolver, promises: promises, started: initialCount)
    for (index, promise) in promises.enumerated() {
      promise.observe { outcome in run.receive(outcome, at: index) }
    }
    for promise in promises.prefix(initialCount) {
      promise.runBody()
    }
  })
}

/// One run of `all`'s body: collects the inputs' values, starts the next lazy bodies, settles the combined
/// promise.
///
/// The inputs' observers hold the run, and the run lets go of the combined promise and of the inputs once the
/// combined promise has settled: an input that never settles then keeps nothing alive.
final class AllRun<L: Sendable>: Sendable {
  private struct Running {
    let resolver: PromiseResolver<[L]>
    let promises: [Promise<L>]
    var collector: AllCollector<L>
  }

  /// What an input's outcome leads to, done after the lock is released.
  private enum Step {
    case settle(PromiseResolver<[L]>, PromiseOutcome<[L]>)
    case start(Promise<L>)
    case nothing
  }

  /// Nil once the combined promise has settled.
  private let state: Locked<Running?>

  private init(_ running: Running) {
    state = Locked(running)
  }

  /// A run settling `resolver`'s promise, whose first `started` inputs' bodies the caller starts.
  static func make(resolver: PromiseResolver<[L]>, promises: [Promise<L>], started: Int) -> AllRun<L> {
    let run = AllRun(
      Running(
        resolver: resolver, promises: promises,
        collector: AllCollector(count: promises.count, nextToStart: started)))
    resolver.promise.observe { _ in run.finish() }
    return run
  }

  /// Takes the outcome of the input at `index`.
  func receive(_ outcome: PromiseOutcome<L>, at index: Int) {
    let step = state.withLock { running -> Step in
      guard let current = running else { return .nothing }
      switch outcome {
      case .rejected(let error):
        return .settle(current.resolver, .rejected(error))
      case .cancelled:
        return .settle(current.resolver, .cancelled)
      case .resolved(let value):
        let stored = running?.collector.store(value, at: index)
        if let values = stored?.values { return .settle(current.resolver, .resolved(values)) }
        if let next = stored?.next, next < current.promises.count { return .start(current.promises[next]) }
        return .nothing
      }
    }
    switch step {
    case .settle(let resolver, let outcome): resolver.complete(outcome)
    case .start(let promise): promise.runBody()
    case .nothing: break
    }
  }

  /// Lets go of the combined promise and the inputs: it has settled.
  private func finish() {
    // Released after the lock, not under it.
    let released = state.withLock { running in
      defer { running = nil }
      return running
    }
    withExtendedLifetime(released) {}
  }
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
