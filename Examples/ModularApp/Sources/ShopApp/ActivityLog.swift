import Katana

/// A root interceptor that records every item the store handles, and which feature it came through.
///
/// Items dispatched through a feature's scope reach the root store's interceptors as `ScopedDispatchable`s:
/// `scope` says which feature (its place in the state, `AppState.cart`), `base` is the feature's own item.
/// Analytics, logging and auditing stay at the app level this way, and the features do not know about them.
public final class ActivityLog: Sendable {
  /// One item the store handled, recorded as its handling started.
  public struct Entry: Sendable, Equatable, CustomStringConvertible {
    /// The scope it came through; nil for an item of the app itself.
    public let scope: ScopeID?
    /// The item's type name, without its module.
    public let type: String
    /// The item, as `String(describing:)` shows it.
    public let item: String

    /// The scope (or "app") and the item.
    public var description: String {
      "\(scope.map { "\($0)" } ?? "AppState"): \(item)"
    }
  }

  private let entries = Locked<[Entry]>([])

  /// Creates an empty log.
  public init() {}

  /// The interceptor that fills the log: give it to the store.
  public var interceptor: StoreInterceptor {
    { [entries] _ in
      { next in
        { item in
          let entry: Entry
          if let scoped = item as? any ScopedDispatchable {
            entry = Entry(scope: scoped.scope, type: "\(type(of: scoped.base))", item: "\(scoped.base)")
          } else {
            entry = Entry(scope: nil, type: "\(type(of: item))", item: "\(item)")
          }
          entries.withLock { $0.append(entry) }
          // The wrapper itself, not `scoped.base`: it knows where in the state the feature's item applies.
          try await next(item)
        }
      }
    }
  }

  /// What the store handled so far, in the order the handling started.
  public var all: [Entry] {
    entries.withLock { $0 }
  }

  /// Forgets what was recorded.
  public func clear() {
    entries.withLock { $0.removeAll() }
  }
}
