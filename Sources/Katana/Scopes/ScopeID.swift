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
  /// What the feature is: the path from the root state. Decides equality, and so the effect-id namespace.
  let identity: ScopeIdentity
  /// Where the feature's slice lies in memory: decides which observers a commit through it may concern (see
  /// ``ScopeCommitFilter``), never equality.
  let location: ScopeLocation

  /// The path from the root state, for example `AppState.cart` or `AppState.rooms[id: 3]`.
  public let description: String

  /// Two ids are equal when they stand for the same place in the state.
  public static func == (lhs: ScopeID, rhs: ScopeID) -> Bool {
    lhs.identity == rhs.identity
  }

  /// Hashes the place in the state the id stands for.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(identity)
  }
}

/// What a scope is: the steps from the root state to its slice, as key paths, element ids and optionals.
///
/// Two scopes are the same feature exactly when they take the same steps: key paths are equal when they name
/// the same properties (`\.shop.cart` and `\.shop` then `\.cart` are one path), so two different fields never
/// share an identity, whatever their types or sizes (an identity made from memory offsets gave every field
/// of zero size the same one). Only this decides a feature's effect-id namespace; which observers a commit
/// may concern is ``ScopeLocation``'s job.
struct ScopeIdentity: Hashable, @unchecked Sendable {
  // Sendable: key paths are immutable; element ids are built from Sendable values only.

  enum Segment: Hashable {
    /// One or more properties; consecutive ones are joined into one key path.
    case keyPath(AnyKeyPath)
    /// One element of the collection the previous segments lead to, by id.
    case element(AnyHashable)
    /// The value of the optional the previous segments lead to.
    case some
  }

  private(set) var segments: [Segment] = []

  /// The whole state.
  static let root = ScopeIdentity()

  /// This identity followed by the property (or properties) at `keyPath`.
  func appending(_ keyPath: AnyKeyPath) -> ScopeIdentity {
    var result = self
    if case .keyPath(let last) = segments.last, let joined = last.appending(path: keyPath) {
      result.segments[segments.count - 1] = .keyPath(joined)
    } else {
      result.segments.append(.keyPath(keyPath))
    }
    return result
  }

  func appending(_ segment: Segment) -> ScopeIdentity {
    var result = self
    result.segments.append(segment)
    return result
  }
}

/// An id used with the effect tools of a feature: the id within its scope's namespace, so that two features
/// using the same id value never reach each other's work.
struct ScopedEffectKey: Hashable, @unchecked Sendable {
  // Sendable: `id` is built from a Sendable value only.
  let scope: ScopeIdentity
  let id: AnyHashable
}

extension ScopeID {
  /// The ``description`` of the scope a store mounts at `keyPath` of its state `Root` (`store.scope(keyPath, ...)`):
  /// with `optional`, of a scope on an optional field (which adds `?`). The log format matches scopes by it.
  package static func description<Root: FeatureState>(of keyPath: AnyKeyPath, in _: Root.Type, optional: Bool = false)
    -> String
  {
    ScopeCore<Root>.describe(keyPath, from: String(describing: Root.self)) + (optional ? "?" : "")
  }
}

extension ScopeID {
  /// The id of the scope a store of state `Root` mounts at `keyPath` (as `store.scope(keyPath, ...)` makes it).
  package static func field<Root: FeatureState, C>(_ keyPath: WritableKeyPath<Root, C>) -> ScopeID {
    ScopeID(
      identity: ScopeIdentity.root.appending(keyPath), location: rootLocation(of: keyPath),
      description: description(of: keyPath, in: Root.self))
  }

  /// The id of the scope a store of state `Root` mounts at the optional field `keyPath`.
  package static func optionalField<Root: FeatureState, C>(_ keyPath: WritableKeyPath<Root, C?>) -> ScopeID {
    ScopeID(
      identity: ScopeIdentity.root.appending(keyPath).appending(.some),
      location: rootLocation(of: keyPath).appending(.some),
      description: description(of: keyPath, in: Root.self, optional: true))
  }

  fileprivate static func rootLocation<Root, C>(of keyPath: WritableKeyPath<Root, C>) -> ScopeLocation {
    guard let offset = MemoryLayout<Root>.offset(of: keyPath) else { return ScopeLocation.root.appending(.computed) }
    return ScopeLocation.root.appendingBytes(offset: offset, size: MemoryLayout<C>.size)
  }
}

/// A feature's updater that applies at `scope`'s place in a root state (what a log decodes a scoped commit into).
package func makeScopedUpdater<Root: FeatureState>(
  scope: ScopeID, base: any Dispatchable, apply: @escaping @Sendable (inout Root) throws -> Void
) -> any AnyStateUpdater {
  ScopedStateUpdater(scope: scope, base: base, apply: apply)
}

extension ScopeID {
  /// The id of the scope a store of state `Root` mounts on the element `id` of the collection at `keyPath`.
  package static func element<Root: FeatureState, C, ID: Hashable & Sendable>(
    _ keyPath: WritableKeyPath<Root, C>, id: ID
  )
    -> ScopeID
  {
    ScopeID(
      identity: ScopeIdentity.root.appending(keyPath).appending(.element(AnyHashable(id))),
      location: rootLocation(of: keyPath).appending(.element(hash: id.hashValue)),
      description: description(of: keyPath, in: Root.self) + "[id: \(id)]")
  }

  /// If this is the id of a scope on an element of the collection at `keyPath` of the root state, that element's
  /// id.
  package func elementID(in keyPath: AnyKeyPath) -> AnyHashable? {
    let segments = identity.segments
    guard segments.count == 2, case .keyPath(let path) = segments[0], path == keyPath,
      case .element(let id) = segments[1]
    else { return nil }
    return id
  }
}
