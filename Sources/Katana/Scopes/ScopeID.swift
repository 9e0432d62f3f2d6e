/// Which scope something came through: where a feature is mounted in the root state.
///
/// Every item dispatched through a scope reaches the root store's interceptors as a ``ScopedDispatchable``
/// whose ``ScopedDispatchable/scope`` is the scope's id:
///
/// ```swift
/// let audit: StoreInterceptor = { _ in
///   { next in
///     { item in
///       if let scoped = item as? any ScopedDispatchable, scoped.scope == cart.id {
///         print("cart:", scoped.base)
///       }
///       try await next(item)
///     }
///   }
/// }
/// ```
///
/// Two ids are equal when they stand for the same place in the state, however the scopes were made:
/// `store.scope(\.shop.cart, ...)` and `store.scope(\.shop, ...).scope(\.cart, ...)` have equal ids. Scopes
/// with equal ids share their effect ids (see ``ScopedStore/cancel(id:)``).
public struct ScopeID: Hashable, Sendable, CustomStringConvertible {
  let location: ScopeLocation

  /// The path from the root state, for example `AppState.cart` or `AppState.rooms[id: 3]`.
  public let description: String

  /// Two ids are equal when they stand for the same place in the state.
  public static func == (lhs: ScopeID, rhs: ScopeID) -> Bool {
    lhs.location == rhs.location
  }

  /// Hashes the place in the state the id stands for.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(location)
  }
}

/// An id used with the effect tools of a feature: the id within its scope's namespace, so that two features
/// using the same id value never reach each other's work.
struct ScopedEffectKey: Hashable, @unchecked Sendable {
  // Sendable: `id` is built from a Sendable value only.
  let location: ScopeLocation
  let id: AnyHashable
}
