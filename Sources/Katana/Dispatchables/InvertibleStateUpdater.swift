/// A state updater whose change returns its own inverse: the updater that, applied to the state this change
/// produced, gives back the state it started from. An ``UndoHistory`` of the whole store undoes such a step by
/// applying the inverse, instead of replaying the commits it keeps.
///
/// ```swift
/// struct AddTodo: InvertibleStateUpdater {
///   let title: String
///   func updateState(_ state: inout AppState) -> RemoveLastTodo {
///     state.todos.append(Todo(title: title))
///     return RemoveLastTodo()
///   }
/// }
///
/// struct SetTitle: InvertibleStateUpdater {
///   let title: String
///   func updateState(_ state: inout AppState) -> SetTitle {
///     defer { state.title = title }
///     return SetTitle(title: state.title)   // the inverse puts the old title back
///   }
/// }
/// ```
///
/// It is a ``StateUpdater`` like any other: interceptors, observers, recorders and replays see the updater itself,
/// and the plain `updateState(_:)` this protocol supplies applies the change and drops the inverse. When the store
/// has an undo history of its whole state, its one commit transition applies the updater through the inverting form
/// instead (the same change) and hands the inverse to the history, which keeps it with the step, whichever path
/// the updater came by (typed, `send`, interceptors, type-erased). A history that gets no inverse (a scope's
/// history, a step through a scope, a step of several commits of which one is not invertible) undoes by replaying,
/// as for any updater.
///
/// - Important: The inverse must be exact: applied to the state the change produced, it gives back the state
///   before, field for field (the history applies it instead of a replay that would compute that state, so a wrong
///   inverse is a wrong undo). The change of both forms must be the same: implement only the inverting one. A type
///   cannot be both a ``ReturningStateUpdater`` and an invertible one (both supply the plain form).
///
/// - Note: A history keeps an inverse with its step until the step is folded or dropped: an inverse that holds a
///   large value (the old contents of a collection) holds it that long.
public protocol InvertibleStateUpdater: StateUpdater {
  /// The state this updater changes; see ``StateUpdater/StateType``. (Restated here so that Swift infers it from
  /// the inverting `updateState(_:)`.)
  associatedtype StateType
  /// The type of the inverse: a state updater of the same state.
  associatedtype Inverse: StateUpdater where Inverse.StateType == StateType

  /// Applies the change to `state` and returns the updater that undoes it.
  func updateState(_ state: inout StateType) -> Inverse
}

extension InvertibleStateUpdater {
  /// Applies the change and drops its inverse: how the store applies it when no undo history wants the inverse.
  public func updateState(_ state: inout StateType) {
    let _: Inverse = updateState(&state)
  }

  /// Applies the change to `state` and returns its inverse and the change itself, typed and ready to apply again, if
  /// `state` is this updater's state; otherwise returns nil and leaves `state` alone. The commit transition's door for
  /// an undo history (``CommitHook/wantsInverse``).
  @usableFromInline
  func applyInverting<T>(to state: inout T) -> InvertedCommit? {
    guard StateType.self == T.self else { return nil }
    // `StateType` and `T` are the same type, so viewing the state through a pointer to `StateType` is sound, and
    // keeps the mutation in place.
    let inverse = withUnsafeMutablePointer(to: &state) { pointer in
      pointer.withMemoryRebound(to: StateType.self, capacity: 1) { (updateState(&$0.pointee) as Inverse) }
    }
    return InvertedCommit(inverse: TypedStep(inverse), forward: TypedStep(self))
  }
}

/// A commit of an ``InvertibleStateUpdater`` of the whole state, as the commit transition hands it to an undo history:
/// the updater that undoes it and the one that makes it again, both typed (applying them takes no cast).
@usableFromInline
struct InvertedCommit: Sendable {
  @usableFromInline let inverse: any PreparedStep
  @usableFromInline let forward: any PreparedStep

  @inlinable init(inverse: any PreparedStep, forward: any PreparedStep) {
    self.inverse = inverse
    self.forward = forward
  }
}

/// Applies the items of one ``InvertibleStateUpdater`` type, as they were erased (``typeIdentity(of:)``), inverting,
/// without a cast: made once per type by ``invertingApplier(for:)``, and kept by the store (``CoreState``).
@usableFromInline
protocol InvertingApplying: AnyObject, Sendable {
  /// ``InvertibleStateUpdater/applyInverting(to:)`` for `item`, of the applier's type; nil, with `state` left alone,
  /// if `state` is not its updater's state.
  func applyInverting<T>(_ item: any Dispatchable, to state: inout T) -> InvertedCommit?
}

/// The inverting applier of the items of type `U`.
@usableFromInline
final class InvertingApplier<U: InvertibleStateUpdater>: InvertingApplying {
  @usableFromInline init() {}

  @usableFromInline func applyInverting<T>(_ item: any Dispatchable, to state: inout T) -> InvertedCommit? {
    exactly(item, U.self)?.applyInverting(to: &state)
  }
}

/// The inverting applier for the items of `item`'s type as it was erased, if that type is an
/// ``InvertibleStateUpdater``; nil otherwise.
@usableFromInline
func invertingApplier(for item: any Dispatchable) -> (any InvertingApplying)? {
  func opened<T: Dispatchable>(_: T) -> (any InvertingApplying)? {
    guard let invertibleType = T.self as? any InvertibleStateUpdater.Type else { return nil }
    func applier<U: InvertibleStateUpdater>(_: U.Type) -> any InvertingApplying { InvertingApplier<U>() }
    return applier(invertibleType)
  }
  return opened(item)
}

/// A state updater kept with its type, which applies to the state it was made for without a dynamic cast (where
/// ``StoreCore/applyErased(_:to:)`` casts an updater to a ``StateUpdater`` on every call: a conformance lookup that
/// cost more than an undo's own work).
@usableFromInline
protocol PreparedStep: Sendable {
  /// Applies the updater to `state`, if `state` is its state (it is left alone otherwise: a step is only ever made
  /// for the state it applies to).
  func apply<T>(to state: inout T)
}

/// A ``PreparedStep`` of a state updater of type `U`.
@usableFromInline
struct TypedStep<U: StateUpdater>: PreparedStep {
  @usableFromInline let updater: U

  @inlinable init(_ updater: U) {
    self.updater = updater
  }

  @inlinable
  func apply<T>(to state: inout T) {
    guard U.StateType.self == T.self else { return }
    // The same type: see ``InvertibleStateUpdater/applyInverting(to:)``.
    withUnsafeMutablePointer(to: &state) { pointer in
      pointer.withMemoryRebound(to: U.StateType.self, capacity: 1) { updater.updateState(&$0.pointee) }
    }
  }
}
