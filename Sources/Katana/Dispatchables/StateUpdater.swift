/// A state updater whose state type is only known at run time.
///
/// Prefer ``StateUpdater``: the store mutates the state in place through it and checks its state type at
/// compile time. Conform to `AnyStateUpdater` directly only for updaters that must work with several state
/// types (for example in a library); the store then calls ``updatedState(currentState:)`` with a copy of
/// the state and checks the type of the result.
public protocol AnyStateUpdater: Dispatchable {
  /// Returns the state that results from applying this updater to `currentState`.
  ///
  /// - Throws: Any error. ``StoreError/wrongStateType(expected:actual:)`` is the conventional answer to a
  ///   state this updater does not know.
  func updatedState(currentState: any State) throws -> any State
}

/// An intent to change the state: a pure, synchronous, in-place mutation.
///
/// ```swift
/// struct AddTodo: StateUpdater {
///   let title: String
///   func updateState(_ state: inout AppState) {
///     state.todos.append(Todo(title: title))
///   }
/// }
///
/// try await store.dispatch(AddTodo(title: "milk"))  // returns once the change is committed
/// ```
///
/// The store applies updaters one at a time, in the order they enter its mailbox, mutating its state in
/// place (no copy of the state or of its collections unless something you registered holds the old value).
///
/// - Important: `updateState` runs while the store holds its internal lock. Keep it pure and short: do not
///   read ``Store/state`` or dispatch from it (use the `inout` parameter; dispatch from side effects).
///   Reading the store's state from inside an updater returns `StateType()` and prints a runtime warning;
///   ``Store/send(_:)-(U)`` from inside an updater fails with
///   ``StoreError/dispatchFromStateUpdater(_:)``.
public protocol StateUpdater: AnyStateUpdater {
  /// The state this updater changes. It must be the store's state type.
  associatedtype StateType: FeatureState

  /// Applies the change to `state`.
  func updateState(_ state: inout StateType)
}

extension StateUpdater {
  /// Applies ``updateState(_:)`` to a copy of `currentState`.
  ///
  /// - Throws: ``StoreError/wrongStateType(expected:actual:)`` if `currentState` is not a `StateType`.
  public func updatedState(currentState: any State) throws -> any State {
    guard var state = currentState as? StateType else {
      throw StoreError.wrongStateType(
        expected: String(reflecting: StateType.self), actual: String(reflecting: type(of: currentState)))
    }
    updateState(&state)
    // A feature state that is not a `State` never gets here: `currentState` would not have cast to it.
    guard let result = state as? any State else {
      throw StoreError.wrongStateType(
        expected: String(reflecting: StateType.self), actual: String(reflecting: type(of: currentState)))
    }
    return result
  }
}
