/// Everything a store reports about misuse or about its own lifecycle.
///
/// Errors thrown by your side effects and interceptors reach the caller unchanged; the store only adds
/// these. Each case's description says what happened and what to do about it.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The store has shut down (``Store/shutdown()``, or the store was released) and accepts no more
  /// dispatches.
  ///
  /// Its `shutdown()` was called, or the store was released. Keep a strong reference to a store for as long as
  /// you dispatch to it, or create a new one.
  case storeShutDown

  /// The store's state initializer threw, so the store never became ready and rejects every dispatch.
  ///
  /// The associated value is the initializer's error. Fix the initializer, or create a new store (for
  /// example after a retry).
  case startupFailed(any Error)

  /// A type-erased state updater does not work with the store's state type.
  ///
  /// Only the type-erased paths (``Store/anyDispatch(_:)``, ``AnyStateUpdater``, an interceptor handing a
  /// different item to `next`) can get here; the typed `dispatch` overloads check the state type at
  /// compile time.
  case wrongStateType(expected: String, actual: String)

  /// A side effect needs a context of another state or dependency type than the store provides.
  ///
  /// Dispatch it to a store of the right type, or, in a ``ReturningSideEffect``, call
  /// ``AnySideEffectContext/typed(_:_:)`` with the types of the store it runs in.
  case wrongContextType(expected: String, actual: String)

  /// The item is both a state updater and a side effect; the store cannot tell how to handle it.
  ///
  /// Split it into two types.
  case ambiguousDispatchable(String)

  /// The item is neither a state updater nor a side effect.
  ///
  /// Conform it to ``StateUpdater``, ``SideEffect`` or ``ReturningSideEffect``.
  case unsupportedDispatchable(String)

  /// Waiting would deadlock, so the store threw instead.
  ///
  /// This happens when the task that holds the updater turn (an interceptor running for a state updater)
  /// waits for another state updater of the same store, directly or through a side effect it awaits; and
  /// when the store's state initializer dispatches to its own store and waits. Let the interceptor call
  /// `next` and return, and dispatch the follow-up from a side effect, or without waiting (`send`).
  case deadlock(String)

  /// A state updater tried to dispatch (for example with ``Store/send(_:)-(U)``) from inside
  /// `updateState`.
  ///
  /// Updaters must be pure. Dispatch follow-ups from a side effect, a listener or an interceptor.
  case dispatchFromStateUpdater(String)

  /// A ``ReturningSideEffect`` or a ``ReturningStateUpdater`` could not produce its value: an interceptor did
  /// not call `next`, or handed `next` an item of the other kind (for a returning state updater: of another
  /// type), or caught the error of the updater's commit, so the dispatch returned without the commit that
  /// computes the value.
  ///
  /// Check the interceptors: to reject a dispatch, throw from the interceptor instead.
  case returnValueUnavailable(String)

  /// An interceptor replaced a ``ReturningSideEffect`` with a side effect whose value has another type.
  case returnValueTypeMismatch(expected: String, actual: String)

  /// An interceptor called `next` after its dispatch had finished (or outside of any dispatch of this
  /// store), so the item was not handled.
  ///
  /// Call `next` before the interceptor's handler returns. To dispatch later, use the context's
  /// `dispatch` or `send`.
  case nextCalledOutOfScope(String)

  /// An interceptor running for a state updater called `next` while an earlier call of the same dispatch's
  /// `next` was still being handled (for example from two `async let`s), so the item was not handled.
  ///
  /// A state updater is applied, and its change delivered to observers, one at a time: call `next` again only
  /// after the previous call has returned.
  case nextCalledConcurrently(String)

  /// Interceptors kept replacing items with items of the other kind, so the store stopped after
  /// ``StoreError/redirectLimit`` replacements.
  ///
  /// An interceptor that turns every updater into a side effect and every side effect into an updater
  /// loops forever; make the replacement conditional.
  case redirectLimitExceeded(String)

  /// The most replacements by items of the other kind a single dispatch follows (see
  /// ``redirectLimitExceeded(_:)``).
  public static let redirectLimit = 16

  /// What happened and what to do about it, in one or two sentences.
  public var description: String {
    switch self {
    case .storeShutDown:
      "The store has shut down and accepts no more dispatches: its shutdown() was called, or it was released. "
        + "If nothing was meant to shut it down, it was released: keep a strong reference to the store while "
        + "you dispatch to it."
    case .startupFailed(let error):
      "The store's state initializer threw (\(error)); the store never became ready and rejects every "
        + "dispatch. Fix the initializer or create a new store."
    case .wrongStateType(let expected, let actual):
      "State type mismatch: the updater works on \(expected) but the store's state is \(actual). Dispatch it "
        + "to a store of the right type."
    case .wrongContextType(let expected, let actual):
      "Context type mismatch: the side effect needs \(expected) but got \(actual). Dispatch it to a store of "
        + "the right state and dependency types."
    case .ambiguousDispatchable(let type):
      "\(type) is both a state updater and a side effect, so the store cannot tell how to handle it. Split "
        + "it into two types."
    case .unsupportedDispatchable(let type):
      "\(type) is neither a state updater nor a side effect. Conform it to StateUpdater, SideEffect or "
        + "ReturningSideEffect."
    case .deadlock(let detail):
      "Deadlock avoided: \(detail)"
    case .dispatchFromStateUpdater(let type):
      "\(type) was dispatched from inside a state updater. Updaters must be pure: dispatch follow-ups from a "
        + "side effect, a listener or an interceptor."
    case .returnValueUnavailable(let type):
      "\(type) produced no value: an interceptor did not call `next`, handed it an item of the other kind (for "
        + "a returning state updater: of another type), or caught the error of its commit. To reject a dispatch, "
        + "throw from the interceptor."
    case .returnValueTypeMismatch(let expected, let actual):
      "An interceptor replaced a returning side effect: its caller expects \(expected) but the replacement "
        + "returned \(actual)."
    case .nextCalledOutOfScope(let type):
      "An interceptor called `next` with \(type) after its dispatch finished, so it was not handled. Call "
        + "`next` before the handler returns, or dispatch it through the context."
    case .nextCalledConcurrently(let type):
      "An interceptor called `next` with \(type) while an earlier call of the same dispatch's `next` was still "
        + "being handled, so it was not handled. Await each call of `next` before calling it again."
    case .redirectLimitExceeded(let type):
      "Interceptors replaced \(type) with items of the other kind more than \(Self.redirectLimit) times in "
        + "a row; an unconditional replacement loops forever."
    }
  }

  /// Two errors are equal when they are the same case with equal details; start-up failures compare the
  /// description of their underlying errors.
  public static func == (lhs: StoreError, rhs: StoreError) -> Bool {
    switch (lhs, rhs) {
    case (.storeShutDown, .storeShutDown): true
    case (.startupFailed(let a), .startupFailed(let b)): String(reflecting: a) == String(reflecting: b)
    case (.wrongStateType(let a1, let a2), .wrongStateType(let b1, let b2)): a1 == b1 && a2 == b2
    case (.wrongContextType(let a1, let a2), .wrongContextType(let b1, let b2)): a1 == b1 && a2 == b2
    case (.ambiguousDispatchable(let a), .ambiguousDispatchable(let b)): a == b
    case (.unsupportedDispatchable(let a), .unsupportedDispatchable(let b)): a == b
    case (.deadlock(let a), .deadlock(let b)): a == b
    case (.dispatchFromStateUpdater(let a), .dispatchFromStateUpdater(let b)): a == b
    case (.returnValueUnavailable(let a), .returnValueUnavailable(let b)): a == b
    case (.returnValueTypeMismatch(let a1, let a2), .returnValueTypeMismatch(let b1, let b2)):
      a1 == b1 && a2 == b2
    case (.nextCalledOutOfScope(let a), .nextCalledOutOfScope(let b)): a == b
    case (.nextCalledConcurrently(let a), .nextCalledConcurrently(let b)): a == b
    case (.redirectLimitExceeded(let a), .redirectLimitExceeded(let b)): a == b
    default: false
    }
  }
}

/// The name the store uses for a value's type in errors and logs.
@usableFromInline func typeName(of value: Any) -> String {
  String(reflecting: type(of: value))
}
