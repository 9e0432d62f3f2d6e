/// The state updater that sets one field: `SetField(\.stepCount, 5)` sets `stepCount` to 5. What a binding sends
/// when all it does is set the field it shows (``ObservableStore/fieldBinding(_:)``), where TCA's `BindableAction`
/// sets any field through one action.
///
/// ```swift
/// try await store.dispatch(SetField(\AppState.query, "milk"))
/// model.fieldBinding(\.query).set("milk")   // sends SetField(\.query, "milk")
/// ```
///
/// It is an updater like any other: interceptors, observers, recorders and undo histories see it, and a test store
/// receives it (two are equal when they set the same key path to equal values). A log of a recording writes it once
/// its field is registered by name (`ReplayRegistry.register(field:as:)` in `KatanaRecordingLog`): a key path has no
/// name of its own to write.
public struct SetField<S: FeatureState, Value: Sendable>: StateUpdater {
  /// The field set.
  public let keyPath: any WritableKeyPath<S, Value> & Sendable
  /// The value it is set to.
  public let value: Value

  /// An updater that sets the field at `keyPath` to `value`.
  public init(_ keyPath: any WritableKeyPath<S, Value> & Sendable, _ value: Value) {
    self.keyPath = keyPath
    self.value = value
  }

  /// An updater that sets the optional field at `keyPath` to `value`: `SetField(\.draft, Draft())`.
  public init<Wrapped>(_ keyPath: any WritableKeyPath<S, Wrapped?> & Sendable, _ value: Wrapped)
  where Value == Wrapped? {
    self.init(keyPath, Optional(value))
  }

  /// Sets the field to ``value``.
  public func updateState(_ state: inout S) {
    state[keyPath: keyPath] = value
  }
}

extension SetField: Equatable where Value: Equatable {
  /// Whether both set the same field to equal values.
  public static func == (lhs: SetField, rhs: SetField) -> Bool {
    lhs.keyPath == rhs.keyPath && lhs.value == rhs.value
  }
}

extension SetField: CustomStringConvertible {
  /// `SetField(\AppState.query, "milk")`.
  public var description: String {
    "SetField(\(String(describing: keyPath as AnyKeyPath)), \(String(reflecting: value)))"
  }
}
