import Katana

/// Settles a combined promise for the observers a combinator puts on its inputs, and lets go of it once it has
/// settled.
///
/// A combinator's promise keeps its body for `retry`, and the body keeps the inputs; an input that never
/// settles keeps its observers. If those observers held the combined promise, neither would ever be released.
/// They hold a link instead, which the combined promise cuts when it settles.
final class SettleLink<Value: Sendable>: Sendable {
  private let resolver: Locked<PromiseResolver<Value>?>

  private init(_ resolver: PromiseResolver<Value>) {
    self.resolver = Locked(resolver)
  }

  /// A link to `resolver`'s promise, cut when that promise settles.
  static func make(_ resolver: PromiseResolver<Value>) -> SettleLink<Value> {
    let link = SettleLink(resolver)
    resolver.promise.observe { _ in link.cut() }
    return link
  }

  /// Settles the promise with `outcome`, unless it has settled already.
  func complete(_ outcome: PromiseOutcome<Value>) {
    resolver.withLock { $0 }?.complete(outcome)
  }

  /// The resolver, until the promise settles.
  var current: PromiseResolver<Value>? {
    resolver.withLock { $0 }
  }

  private func cut() {
    // Released after the lock, not under it.
    let released = resolver.withLock { resolver in
      defer { resolver = nil }
      return resolver
    }
    withExtendedLifetime(released) {}
  }
}
