/// Why an item dispatched through a scope could not be applied: the part of the state the scope stands for
/// is not there.
///
/// A scope of an element of a collection (``Store/scope(_:id:dependencies:)``) or of an optional child
/// (`store.scope(\.child, dependencies: ...)` on an optional field) finds its slice when an item's turn
/// comes. If the element has been removed, or the child is nil, the item's dispatch throws this error and
/// nothing is applied: not to another element, not to the rest of the state. Observers see no change.
///
/// ```swift
/// let room = store.scope(\.rooms, id: roomID, dependencies: \.room)
/// try await store.dispatch(CloseRoom(id: roomID))       // removes the element
/// do {
///   try await room.dispatch(PostMessage("hello"))
/// } catch ScopeError.missingElement(let scope) {
///   print("\(scope) is gone")                           // AppState.rooms[id: 3] is gone
/// }
/// ```
public enum ScopeError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The collection has no element with the scope's id (or key) any more.
  ///
  /// The associated value is the element's scope. Stop dispatching to a scope once its element has been
  /// removed: drop the handle (a view model of a removed row), or check ``ScopedStore/stateIfPresent`` first.
  case missingElement(ScopeID)

  /// The optional child the scope stands for is nil.
  ///
  /// The associated value is the child's scope. Present the child (set it in the parent's state) before
  /// dispatching to it, and stop dispatching once it is dismissed.
  case missingChild(ScopeID)

  /// What happened and what to do about it.
  public var description: String {
    switch self {
    case .missingElement(let scope):
      "\(scope) is not in its collection any more, so the item dispatched through its scope was not applied. "
        + "Stop dispatching to a scope whose element was removed."
    case .missingChild(let scope):
      "\(scope) is nil, so the item dispatched through its scope was not applied. Set the child before "
        + "dispatching to it, and stop once it is dismissed."
    }
  }
}
