/// An item that was dispatched through a scope, as the root store's interceptors see it.
///
/// A feature's items reach the root store's interceptor chain wrapped in a value of this protocol, so an
/// interceptor can tell which feature an item came from:
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
/// Hand the wrapper itself to `next`: it knows where in the state the feature's item applies. Handing
/// `base` on instead dispatches the feature's item to the root store, where its state type does not match.
public protocol ScopedDispatchable: Dispatchable {
  /// The scope the item was dispatched through.
  var scope: ScopeID { get }
  /// The feature's item, as the feature dispatched it.
  var base: any Dispatchable { get }
}

/// A state updater that applies at a scope's place in a root state whose type it only knows generically.
protocol ScopeRoutedUpdater: AnyStateUpdater {
  /// Applies the feature's updater at the scope's slice of `state`, in place.
  ///
  /// - Throws: ``ScopeError`` if the slice is missing; ``StoreError/wrongStateType(expected:actual:)`` if
  ///   `state` is not the root state of the scope's store.
  func applyRouted<Root: FeatureState>(to state: inout Root) throws
}

/// A feature's state updater, dispatched through a scope of a store with state `Root`.
@usableFromInline
struct ScopedStateUpdater<Root: FeatureState>: ScopedDispatchable, ScopeRoutedUpdater {
  @usableFromInline let scope: ScopeID
  @usableFromInline let base: any Dispatchable
  /// Applies the feature's updater at the scope's place in the root state.
  @usableFromInline let apply: @Sendable (inout Root) throws -> Void

  @inlinable
  init(scope: ScopeID, base: any Dispatchable, apply: @escaping @Sendable (inout Root) throws -> Void) {
    self.scope = scope
    self.base = base
    self.apply = apply
  }

  @usableFromInline
  func applyRouted<R: FeatureState>(to state: inout R) throws {
    guard R.self == Root.self else {
      throw StoreError.wrongStateType(expected: String(reflecting: Root.self), actual: String(reflecting: R.self))
    }
    // `R` and `Root` are the same type: viewing the state through a pointer to `Root` keeps it in place.
    try withUnsafeMutablePointer(to: &state) { pointer in
      try pointer.withMemoryRebound(to: Root.self, capacity: 1) { try apply(&$0.pointee) }
    }
  }

  @usableFromInline
  func updatedState(currentState: any State) throws -> any State {
    guard var root = currentState as? Root else {
      throw StoreError.wrongStateType(
        expected: String(reflecting: Root.self), actual: String(reflecting: type(of: currentState)))
    }
    try apply(&root)
    // `currentState` was a `State`, and cast to `Root`: `root` is one too.
    guard let result = root as? any State else {
      throw StoreError.wrongStateType(expected: String(reflecting: Root.self), actual: "a state that is not a State")
    }
    return result
  }
}

extension UpdaterFrame {
  /// A frame for a dispatch through a scope: an item handed on unchanged applies at the scope's place, in
  /// place; anything else, or a scope whose slice is missing (which throws ``ScopeError`` there), takes the
  /// type-erased path.
  @inlinable
  convenience init(storeID: ObjectIdentifier, scoped _: Void) {
    self.init(storeID: storeID, applyIfDispatchedType: Self.applyingScoped)
  }

  /// What a frame for a dispatch through a scope applies in place: the scope's item, handed on unchanged.
  @inlinable
  static var applyingScoped: TypedApply {
    { item, state in
      guard let scoped = item as? ScopedStateUpdater<S> else { return false }
      do {
        try scoped.apply(&state)
        return true
      } catch {
        // Thrown before anything changed (the slice is missing, or the task was cancelled): the type-erased
        // path throws it again.
        return false
      }
    }
  }
}

/// A feature's side effect, dispatched through a scope: it runs with the feature's context wherever the
/// root store runs it.
struct ScopedSideEffect<Base: SideEffect>: ScopedDispatchable, SideEffect {
  let scope: ScopeID
  let effect: Base
  let context: SideEffectContext<Base.StateType, Base.Dependencies>

  var base: any Dispatchable { effect }

  nonisolated(nonsending) func sideEffect(_ context: SideEffectContext<Base.StateType, Base.Dependencies>) async throws
  {
    try await effect.sideEffect(context)
  }

  /// Runs with the feature's context, whatever context the store passes (its own, on type-erased paths).
  nonisolated(nonsending) func anySideEffect(_: any AnySideEffectContext) async throws -> any Sendable {
    try await effect.sideEffect(context)
    return ()
  }
}

/// A feature's returning side effect, dispatched through a scope, with the feature's context.
struct ScopedReturningSideEffect<Base: ReturningSideEffect, S: FeatureState, D: SideEffectDependencyContainer>:
  ScopedDispatchable, ReturningSideEffect
{
  let scope: ScopeID
  let effect: Base
  let context: SideEffectContext<S, D>

  var base: any Dispatchable { effect }

  nonisolated(nonsending) func sideEffect(_: any AnySideEffectContext) async throws -> Base.ReturnValue {
    try await effect.sideEffect(context)
  }
}

/// A type-erased feature side effect, dispatched through a scope, with the feature's context.
struct ScopedAnySideEffect<S: FeatureState, D: SideEffectDependencyContainer>: ScopedDispatchable, AnySideEffect {
  let scope: ScopeID
  let effect: any AnySideEffect
  let context: SideEffectContext<S, D>

  var base: any Dispatchable { effect }

  nonisolated(nonsending) func anySideEffect(_: any AnySideEffectContext) async throws -> any Sendable {
    try await effect.anySideEffect(context)
  }
}
