import Foundation
import Katana

/// The state updaters an app declares replayable from a log, each under a stable name: the name is what a log
/// writes, so renaming or moving a type does not break the logs already written. The state type has a stable name
/// too (``stateType``): a log names the state type it records, and is read only by a registry of that name.
///
/// ```swift
/// var registry = ReplayRegistry<AppState>()
/// registry.register(AddTodo.self, as: "todos.add")
/// registry.register(AddToCart.self, as: "cart.add", at: \.cart)          // a feature's updater, through its scope
/// registry.register(PostMessage.self, as: "rooms.post", onElementsOf: \.rooms)  // any element's scope
/// ```
///
/// An updater that is not registered (or not `Codable`) is written by name only, and replay stops at it with
/// `ReplayError/unknownType(sequence:typeName:)`. A feature's updater is matched with the scope it came through
/// (by the scope's identity, however the scope was made: `store.scope(\.shop.cart, ...)` and
/// `store.scope(\.shop, ...).scope(\.cart, ...)` are the same): register it once per place it is mounted at. A
/// later registration under a name already used, or for a type and place already registered, replaces the earlier
/// one.
///
/// ```swift
/// let registry = ReplayRegistry<AppState>(stateType: "myapp.state")  // survives renaming or moving AppState
/// ```
public struct ReplayRegistry<S: State>: Sendable {
  /// How one registered type is written and read.
  struct Entry: Sendable {
    let name: String
    let type: ObjectIdentifier
    /// Where it applies: a description of the place (the scope's, or a pattern for elements), nil for the root.
    let place: String?
    /// For a field setter (`SetField`), the field it sets: one entry per field, where other entries are one per type.
    let field: String?
    /// Whether `base`, committed through `scope` (nil: the root), is this entry's.
    let matches: @Sendable (_ base: any Dispatchable, _ scope: ScopeID?) -> Bool
    /// Writes the updater (and, for an element's scope, the element's id).
    let encode:
      @Sendable (_ base: any Dispatchable, _ scope: ScopeID?, _ container: inout KeyedEncodingContainer<LogKey>) throws
        -> Void
    let decode: @Sendable (_ container: KeyedDecodingContainer<LogKey>) throws -> any Dispatchable
  }

  private(set) var byName: [String: Entry] = [:]

  /// The state type's name in a log's header: a log is read only by a registry of the same name (a log of
  /// another state type, even one with the same short name, is refused with
  /// ``RecordingLogError/wrongStateType(expected:found:)``).
  public let stateType: String

  /// Creates an empty registry that names the state type by its module-qualified name
  /// (``defaultStateTypeName``).
  ///
  /// - Important: That name changes if the type is renamed or moved to another module or namespace, and logs
  ///   written before are then refused: name it yourself with ``init(stateType:)`` to keep them readable.
  public init() {
    stateType = Self.defaultStateTypeName
  }

  /// Creates an empty registry that names the state type `stateType` in the logs it writes and reads: a name of
  /// your own that stays when the type is renamed or moved (`"myapp.state"`, say).
  public init(stateType: String) {
    self.stateType = stateType
  }

  /// The state type's module-qualified name (`String(reflecting:)`, `"MyApp.AppState"`), without the parts that
  /// change from one run to the next: a private or local type's `(unknown context at $…)` is left out, so such a
  /// type is named by its module and its own name (give two of them of the same name names of your own).
  public static var defaultStateTypeName: String {
    var name = String(reflecting: S.self)
    while let context = name.range(of: "(unknown context at $") {
      guard let close = name[context.upperBound...].firstIndex(of: ")") else { break }
      var end = name.index(after: close)
      if end < name.endIndex, name[end] == "." { end = name.index(after: end) }
      name.removeSubrange(context.lowerBound..<end)
    }
    return name
  }

  /// Registers a state updater of the root state under `name`.
  public mutating func register<U: StateUpdater & Codable>(_ type: U.Type, as name: String) where U.StateType == S {
    addRoot(Codec<U>.codable(), as: name)
  }

  /// Registers a feature's state updater, dispatched through the scope mounted at `keyPath`, under `name`.
  public mutating func register<U: StateUpdater & Codable>(
    _ type: U.Type, as name: String, at keyPath: WritableKeyPath<S, U.StateType>
  ) {
    addField(Codec<U>.codable(), as: name, at: keyPath)
  }

  /// Registers a feature's state updater, dispatched through the scope mounted at the optional field `keyPath`,
  /// under `name`. Replaying it while the field is nil fails as the dispatch would (`ScopeError`).
  public mutating func register<U: StateUpdater & Codable>(
    _ type: U.Type, as name: String, at keyPath: WritableKeyPath<S, U.StateType?>
  ) {
    addOptional(Codec<U>.codable(), as: name, at: keyPath)
  }

  /// Registers a feature's state updater, dispatched through the scope of any element of the identified collection
  /// at `keyPath` (`store.scope(keyPath, id: ...)`), under `name`. The log writes the element's id with it;
  /// replaying it when no element has that id fails as the dispatch would (`ScopeError`).
  public mutating func register<U: StateUpdater & Codable, Elements: MutableCollection & Sendable>(
    _ type: U.Type, as name: String, onElementsOf keyPath: WritableKeyPath<S, Elements>
  ) where Elements.Element == U.StateType, U.StateType: Identifiable, U.StateType.ID: Codable & Sendable {
    addElements(Codec<U>.codable(), as: name, onElementsOf: keyPath)
  }

  // MARK: - Field setters

  /// Registers `SetField` for the root state's field `field` (what a binding sends) under `name`: the log writes
  /// the name and the value. A key path has no name of its own, so each field a log may hold is registered.
  ///
  /// ```swift
  /// registry.register(field: \.query, as: "query.set")
  /// ```
  public mutating func register<Value: Codable & Sendable>(
    field: any WritableKeyPath<S, Value> & Sendable, as name: String
  ) {
    addRoot(.setting(field), as: name)
  }

  /// Registers `SetField` for the field `field` of the feature mounted at `keyPath`, set through its scope, under
  /// `name`.
  public mutating func register<Feature: FeatureState, Value: Codable & Sendable>(
    field: any WritableKeyPath<Feature, Value> & Sendable, as name: String, at keyPath: WritableKeyPath<S, Feature>
  ) {
    addField(.setting(field), as: name, at: keyPath)
  }

  /// Registers `SetField` for the field `field` of the feature mounted at the optional field `keyPath`, set through
  /// its scope, under `name`. Replaying it while the feature is nil fails as the dispatch would (`ScopeError`).
  public mutating func register<Feature: FeatureState, Value: Codable & Sendable>(
    field: any WritableKeyPath<Feature, Value> & Sendable, as name: String, at keyPath: WritableKeyPath<S, Feature?>
  ) {
    addOptional(.setting(field), as: name, at: keyPath)
  }

  /// Registers `SetField` for the field `field` of any element of the identified collection at `keyPath`, set
  /// through the element's scope, under `name`. The log writes the element's id with it.
  public mutating func register<Value: Codable & Sendable, Elements: MutableCollection & Sendable>(
    field: any WritableKeyPath<Elements.Element, Value> & Sendable, as name: String,
    onElementsOf keyPath: WritableKeyPath<S, Elements>
  ) where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Codable & Sendable {
    addElements(.setting(field), as: name, onElementsOf: keyPath)
  }

  // MARK: - Places

  private mutating func addRoot<U: StateUpdater>(_ codec: Codec<U>, as name: String) where U.StateType == S {
    add(
      Entry(
        name: name, type: ObjectIdentifier(U.self), place: nil, field: codec.field,
        matches: { base, scope in scope == nil && codec.isFor(base) },
        encode: { base, _, container in try codec.encode(base, &container) },
        decode: { container in try codec.decode(container) }))
  }

  private mutating func addField<U: StateUpdater>(
    _ codec: Codec<U>, as name: String, at keyPath: WritableKeyPath<S, U.StateType>
  ) {
    // Key paths are immutable values.
    nonisolated(unsafe) let keyPath = keyPath
    addFixedPlace(codec, as: name, scope: ScopeID.field(keyPath)) { root, _, base in
      base.updateState(&root[keyPath: keyPath])
    }
  }

  private mutating func addOptional<U: StateUpdater>(
    _ codec: Codec<U>, as name: String, at keyPath: WritableKeyPath<S, U.StateType?>
  ) {
    // Key paths are immutable values.
    nonisolated(unsafe) let keyPath = keyPath
    addFixedPlace(codec, as: name, scope: ScopeID.optionalField(keyPath)) { root, scope, base in
      guard root[keyPath: keyPath] != nil else { throw ScopeError.missingChild(scope) }
      base.updateState(&root[keyPath: keyPath]!)
    }
  }

  /// Registers `U` for the one scope `scope`; `apply` applies a decoded updater at the scope's place in a root state.
  private mutating func addFixedPlace<U: StateUpdater>(
    _ codec: Codec<U>, as name: String, scope: ScopeID,
    apply: @escaping @Sendable (_ root: inout S, _ scope: ScopeID, _ base: U) throws -> Void
  ) {
    add(
      Entry(
        name: name, type: ObjectIdentifier(U.self), place: scope.description, field: codec.field,
        matches: { base, commitScope in commitScope == scope && codec.isFor(base) },
        encode: { base, _, container in try codec.encode(base, &container) },
        decode: { container in
          let base = try codec.decode(container)
          return makeScopedUpdater(scope: scope, base: base) { (root: inout S) in try apply(&root, scope, base) }
        }))
  }

  private mutating func addElements<U: StateUpdater, Elements: MutableCollection & Sendable>(
    _ codec: Codec<U>, as name: String, onElementsOf keyPath: WritableKeyPath<S, Elements>
  ) where Elements.Element == U.StateType, U.StateType: Identifiable, U.StateType.ID: Codable & Sendable {
    let place = ScopeID.description(of: keyPath, in: S.self) + "[id: _]"
    // Key paths are immutable values.
    nonisolated(unsafe) let keyPath = keyPath
    add(
      Entry(
        name: name, type: ObjectIdentifier(U.self), place: place, field: codec.field,
        matches: { base, scope in scope?.elementID(in: keyPath)?.base is U.StateType.ID && codec.isFor(base) },
        encode: { base, scope, container in
          try codec.encode(base, &container)
          if let id = scope?.elementID(in: keyPath)?.base as? U.StateType.ID {
            try container.encode(id, forKey: .element)
          }
        },
        decode: { container in
          let base = try codec.decode(container)
          let id = try container.decode(U.StateType.ID.self, forKey: .element)
          let scope = ScopeID.element(keyPath, id: id)
          return makeScopedUpdater(scope: scope, base: base) { (root: inout S) in
            guard let index = root[keyPath: keyPath].firstIndex(where: { $0.id == id }) else {
              throw ScopeError.missingElement(scope)
            }
            base.updateState(&root[keyPath: keyPath][index])
          }
        }))
  }

  private mutating func add(_ entry: Entry) {
    // A type registered again for the same place replaces its entry (and frees that entry's name).
    if let same = byName.values.first(where: {
      $0.type == entry.type && $0.place == entry.place && $0.field == entry.field
    }) {
      byName[same.name] = nil
    }
    byName[entry.name] = entry
  }

  /// The entry that writes `base`, dispatched through `scope` (nil: the root).
  func entry(for base: any Dispatchable, scope: ScopeID?) -> Entry? {
    let type = ObjectIdentifier(Swift.type(of: base))
    return byName.values.first { $0.type == type && $0.matches(base, scope) }
  }
}

/// How the updaters of type `U` that one registration covers are written and read: every value of a `Codable` type,
/// or the `SetField` values of one field.
private struct Codec<U: StateUpdater>: Sendable {
  /// The field, for a field setter.
  let field: String?
  let isFor: @Sendable (any Dispatchable) -> Bool
  let encode: @Sendable (any Dispatchable, inout KeyedEncodingContainer<LogKey>) throws -> Void
  let decode: @Sendable (KeyedDecodingContainer<LogKey>) throws -> U

  /// Every value of `U`, written with its own `Codable` conformance.
  static func codable() -> Codec where U: Codable {
    Codec(
      field: nil, isFor: { $0 is U },
      encode: { base, container in
        // Only called with a base of type `U` (entries are looked up by the base's type).
        guard let base = base as? U else { return }
        try container.encode(base, forKey: .updater)
      },
      decode: { container in try container.decode(U.self, forKey: .updater) })
  }

  /// The field setters of `field`, written as their value.
  static func setting<F: FeatureState, Value: Codable & Sendable>(_ field: any WritableKeyPath<F, Value> & Sendable)
    -> Codec where U == SetField<F, Value>
  {
    Codec(
      field: String(describing: field as AnyKeyPath),
      isFor: { ($0 as? SetField<F, Value>)?.keyPath == field },
      encode: { base, container in
        guard let set = base as? SetField<F, Value> else { return }
        try container.encode(set.value, forKey: .updater)
      },
      decode: { container in SetField(field, try container.decode(Value.self, forKey: .updater)) })
  }
}
