/// Anything that can be dispatched to a ``Store``: a state updater (``StateUpdater``, ``AnyStateUpdater``)
/// or a side effect (``SideEffect``, ``ReturningSideEffect``, ``AnySideEffect``).
///
/// An item must be exactly one of the two kinds; the type-erased APIs throw
/// ``StoreError/ambiguousDispatchable(_:)`` or ``StoreError/unsupportedDispatchable(_:)`` otherwise.
public protocol Dispatchable: Sendable {}

extension Dispatchable {
  /// The fully qualified name of the item's type, for example `MyApp.AddTodo`. Loggers use it.
  public var debugDescription: String {
    String(reflecting: type(of: self))
  }
}
