/// A state updater that returns a value computed from the state it produced, which the awaited `dispatch` returns:
/// mutate, then decide on the new state, in one step.
///
/// ```swift
/// struct Decrement: ReturningStateUpdater {
///   func updateState(_ state: inout Counter) -> Bool {
///     state.count -= 1
///     return state.count < 0   // decided on the state this updater produced
///   }
/// }
///
/// // In a side effect: no other item can land between the change and the decision.
/// let wentNegative = try await context.dispatch(Decrement())
/// if wentNegative { try await context.dispatch(ShowAlert()) }
/// ```
///
/// Reading the state after a plain updater's awaited dispatch gives the latest committed state, which other items
/// may already have changed; the value returned here is computed inside the updater's own commit.
///
/// It is a ``StateUpdater`` like any other, still pure and synchronous: interceptors, observers, recorders, replays
/// and undo histories see it as one (this protocol supplies the plain `updateState(_:)`, which applies the change and
/// drops the value). Only the typed `dispatch` of ``Store``, ``ScopedStore`` and ``SideEffectContext`` returns the
/// value; `send` and the type-erased paths (`anyDispatch`) treat it as a plain updater.
///
/// - Important: The value is the one computed by the commit of this dispatch's item (or of an item of the same type
///   that an interceptor handed to `next` in its place; with several such commits, the last one's). When no such
///   commit happened although the dispatch did not fail (an interceptor returned without calling `next`, handed it
///   an item of another type, or caught the error of the commit), `dispatch` throws
///   ``StoreError/returnValueUnavailable(_:)``.
public protocol ReturningStateUpdater: StateUpdater {
  /// The state this updater changes; see ``StateUpdater/StateType``. (Restated here so that Swift infers it from
  /// the returning `updateState(_:)`: the plain one is this protocol's own, for every conforming type.)
  associatedtype StateType
  /// The type of the value the updater returns.
  associatedtype ReturnValue: Sendable

  /// Applies the change to `state` and returns a value computed from it.
  func updateState(_ state: inout StateType) -> ReturnValue
}

extension ReturningStateUpdater {
  /// Applies the change and drops the value: how every path that treats this updater as a plain one (`send`,
  /// interceptors, type-erased dispatch, replay, undo) applies it.
  public func updateState(_ state: inout StateType) {
    let _: ReturnValue = updateState(&state)
  }
}
