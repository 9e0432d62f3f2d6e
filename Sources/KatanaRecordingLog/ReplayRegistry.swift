import Katana

/// The state updaters an app declares replayable from a log, each under a stable name: the name is what a log
/// writes, so renaming or moving a type does not break the logs already written.
///
/// ```swift
/// var registry = ReplayRegistry<AppState>()
/// registry.register(AddTodo.self, as: "todos.add")
/// registry.register(AddToCart.self, as: "cart.add", at: \.cart)   // a feature's updater, through its scope
/// ```
///
/// An updater that is not registered (or not `Codable`) is written by name only, and replay stops at it with
/// `ReplayError/unknownType(sequence:typeName:)`. A feature's updater is matched with its scope: register it once
/// per key path it is mounted at. A later registration under a name already used, or for a type and scope already
/// registered, replaces the earlier one.
public struct ReplayRegistry<S: State>: Sendable {
  /// How one registered type is written and read.
  struct Entry: Sendable {
    let name: String
    let type: ObjectIdentifier
    /// The scope's description (``ScopeID/description``), nil for the root.
    let scope: String?
    let encode: @Sendable (_ base: any Dispatchable, _ container: inout KeyedEncodingContainer<LogKey>) throws -> Void
    let decode: @Sendable (_ container: KeyedDecodingContainer<LogKey>) throws -> any Dispatchable
  }

  struct TypeKey: Hashable {
    let type: ObjectIdentifier
    let scope: String?
  }

  private(set) var byName: [String: Entry] = [:]
  private var byType: [TypeKey: Entry] = [:]

  /// Creates an empty registry.
  public init() {}

  /// Registers a state updater of the root state under `name`.
  public mutating func register<U: StateUpdater & Codable>(_ type: U.Type, as name: String) where U.StateType == S {
    add(type, as: name, scope: nil) { $0 }
  }

  /// Registers a feature's state updater, dispatched through the scope mounted at `keyPath`, under `name`.
  public mutating func register<U: StateUpdater & Codable>(
    _ type: U.Type, as name: String, at keyPath: WritableKeyPath<S, U.StateType>
  ) {
    let scope = ScopeID.field(keyPath)
    // Key paths are immutable values.
    nonisolated(unsafe) let keyPath = keyPath
    add(type, as: name, scope: scope.description) { base in
      makeScopedUpdater(scope: scope, base: base) { (root: inout S) in base.updateState(&root[keyPath: keyPath]) }
    }
  }

  /// Registers a feature's state updater, dispatched through the scope mounted at the optional field `keyPath`,
  /// under `name`. Replaying it while the field is nil fails as the dispatch would (`ScopeError`).
  public mutating func register<U: StateUpdater & Codable>(
    _ type: U.Type, as name: String, at keyPath: WritableKeyPath<S, U.StateType?>
  ) {
    let scope = ScopeID.optionalField(keyPath)
    // Key paths are immutable values.
    nonisolated(unsafe) let keyPath = keyPath
    add(type, as: name, scope: scope.description) { base in
      makeScopedUpdater(scope: scope, base: base) { (root: inout S) in
        guard root[keyPath: keyPath] != nil else { throw ScopeError.missingChild(scope) }
        base.updateState(&root[keyPath: keyPath]!)
      }
    }
  }

  private mutating func add<U: StateUpdater & Codable>(
    _ type: U.Type, as name: String, scope: String?, route: @escaping @Sendable (U) -> any Dispatchable
  ) {
    if let replaced = byName[name] {
      byType[TypeKey(type: replaced.type, scope: replaced.scope)] = nil
    }
    let entry = Entry(
      name: name, type: ObjectIdentifier(U.self), scope: scope,
      encode: { base, container in
        // Only called with a base of type `U` (looked up by its type).
        guard let base = base as? U else { return }
        try container.encode(base, forKey: .updater)
      },
      decode: { container in route(try container.decode(U.self, forKey: .updater)) })
    let key = TypeKey(type: ObjectIdentifier(U.self), scope: scope)
    if let replaced = byType[key] { byName[replaced.name] = nil }
    byName[name] = entry
    byType[key] = entry
  }

  /// The entry that writes `base`, dispatched through the scope described by `scope`.
  func entry(for base: any Dispatchable, scope: String?) -> Entry? {
    byType[TypeKey(type: ObjectIdentifier(type(of: base)), scope: scope)]
  }
}
