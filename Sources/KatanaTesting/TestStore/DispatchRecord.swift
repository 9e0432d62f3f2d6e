import Katana

/// One item dispatched to the store under test, as the ``TestStore`` saw it.
///
/// Kept when ``TestStoreConfiguration/recordsDispatches`` is on, in the order the test store's interceptor
/// saw the items (for state updaters, the order they were applied in); read it with
/// ``TestStore/dispatchLog``.
///
/// ```swift
/// #expect(store.dispatchLog.map(\.typeName) == ["Search", "SetLoading", "SetResults"])
/// ```
public struct DispatchRecord: Sendable {
  /// Who dispatched an item.
  public enum Origin: Sendable, Equatable {
    /// The test, through the test store's `dispatch` or `send`.
    case test
    /// Anything else: side effects, interceptors substituting items, the dependency container. These are
    /// the items that `receive` asserts.
    case received
  }

  /// The item. An item dispatched through a scope is the `ScopedDispatchable` the store's interceptors saw:
  /// its `ScopedDispatchable.base` is the feature's item.
  public let item: any Dispatchable

  /// Who dispatched it.
  public let origin: Origin

  /// The name of the item's type, without its module: `SetResults`. For an item dispatched through a scope,
  /// the name of the feature's item's type.
  public var typeName: String {
    KatanaTesting.typeName(of: item)
  }
}
