/// A feature's handle on the store it is mounted in: the store's surface, typed to the feature's state `S`
/// and dependencies `D`.
///
/// Made by `store.scope(_:dependencies:)` and its variants (see <doc:BuildingFeatures>):
///
/// ```swift
/// let cart = store.scope(\.cart, dependencies: \.cart)   // ScopedStore<CartState, CartDependencies>
/// try await cart.dispatch(AddItem(sku: "A1"))             // a StateUpdater of CartState
/// let items = cart.state.items
/// ```
///
/// - Items dispatched or sent through a scope take their place in the root store's one mailbox, ordered
///   with everything else dispatched to the store or to any of its scopes, and go through the root store's
///   interceptors, which see them as ``ScopedDispatchable``s.
/// - State updaters apply in place at the scope's key path: neither the slice nor the rest of the state is
///   copied.
/// - Side effects get a ``SideEffectContext`` of the feature's types: `getState()` reads the slice,
///   `dependencies` is the feature's container, `dispatch` goes through the scope, and the effect tools'
///   ids are the scope's own (two features using the same id value never cancel each other's work).
/// - Observers of a scope (``addListener(_:)``, ``states(buffering:)``, ``values(of:buffering:)``) are
///   not called for commits that leave an `Equatable` slice equal. For a slice that is not `Equatable`,
///   they are called for every commit that may change it (commits through other features' scopes do not:
///   they are never even looked at, so observers of other features cost a feature's dispatch nothing).
///
/// A scope does not keep the store alive, only its internals, as a side effect's context does.
public final class ScopedStore<S: FeatureState, D: SideEffectDependencyContainer>: Sendable {
  @usableFromInline let core: ScopeCore<S>

  /// The feature's dependency container.
  public let dependencies: D

  /// Where the feature's outputs go: the handler given to `scope(_:dependencies:outputs:)`, if any.
  let outputs: FeatureOutputRoute?

  @usableFromInline
  init(core: ScopeCore<S>, dependencies: D, outputs: FeatureOutputRoute? = nil) {
    self.core = core
    self.dependencies = dependencies
    self.outputs = outputs
  }

  /// The same scope, whose side effects hand their outputs to `outputs`.
  func handlingOutputs(_ outputs: FeatureOutputRoute) -> ScopedStore<S, D> {
    ScopedStore(core: core, dependencies: dependencies, outputs: outputs)
  }

  /// Which scope this is: where the feature is mounted in the root state.
  public var id: ScopeID { core.id }

  /// The context the feature's side effects get.
  var context: SideEffectContext<S, D> {
    SideEffectContext(scope: core, dependencies: dependencies, outputs: outputs)
  }

  // MARK: - Reading state

  /// The feature's slice of the latest committed state, or nil if the scope's element of a collection has
  /// been removed or its optional child is nil.
  ///
  /// Available for every feature state; ``state``, which answers `S()` for a missing slice, needs a
  /// ``State``.
  public var stateIfPresent: S? {
    core.stateIfPresent
  }

  // MARK: - Dispatching

  /// Dispatches a state updater of the feature and returns once its change is committed; see
  /// ``Store/dispatch(_:)-(U)``.
  ///
  /// - Throws: What ``Store/dispatch(_:)-(U)`` throws; ``ScopeError`` if the scope's element or optional
  ///   child is missing when the updater's turn comes (the updater is then not applied, anywhere).
  @inlinable
  public nonisolated(nonsending) func dispatch<U: StateUpdater>(_ dispatchable: U) async throws
  where U.StateType == S {
    try await core.dispatch(dispatchable)
  }

  /// Dispatches a returning state updater of the feature and returns the value it computed from the slice it
  /// produced; see ``Store/dispatch(_:)-(Updater)``.
  ///
  /// - Throws: What ``dispatch(_:)-(U)`` throws; ``StoreError/returnValueUnavailable(_:)`` if the dispatch returned
  ///   normally without committing the updater (an interceptor dropped or replaced it).
  @inlinable
  public nonisolated(nonsending) func dispatch<Updater: ReturningStateUpdater>(_ dispatchable: Updater) async throws
    -> Updater.ReturnValue where Updater.StateType == S
  {
    try await core.dispatchReturning(dispatchable)
  }

  /// Dispatches a side effect of the feature with the feature's context, in the calling task; see
  /// ``Store/dispatch(_:)-(E)``.
  public nonisolated(nonsending) func dispatch<E: SideEffect>(_ dispatchable: E) async throws
  where E.StateType == S, E.Dependencies == D {
    try await core.dispatch(dispatchable, context: context)
  }

  /// Dispatches a returning side effect with the feature's context and returns its value; see
  /// ``Store/dispatch(_:)-(R)``.
  public nonisolated(nonsending) func dispatch<R: ReturningSideEffect>(_ dispatchable: R) async throws
    -> R.ReturnValue
  {
    try await core.dispatch(dispatchable, context: context)
  }

  /// Dispatches any item through the scope, checking at run time that it is a state updater of `S` or a
  /// side effect for the feature's context; see ``Store/anyDispatch(_:)``.
  @discardableResult
  public nonisolated(nonsending) func anyDispatch(_ dispatchable: any Dispatchable) async throws -> any Sendable {
    try await core.anyDispatch(dispatchable, context: context)
  }

  /// Hands a state updater of the feature to the store now; see ``Store/send(_:)-(U)``. The handle fails
  /// with ``ScopeError`` if the scope's slice is missing when the updater's turn comes.
  @inlinable @discardableResult
  public func send<U: StateUpdater>(_ dispatchable: U) -> DispatchHandle<Void> where U.StateType == S {
    core.send(dispatchable)
  }

  /// Hands a side effect of the feature to the store now; see ``Store/send(_:)-(E)``.
  @discardableResult
  public func send<E: SideEffect>(_ dispatchable: E) -> DispatchHandle<Void>
  where E.StateType == S, E.Dependencies == D {
    core.send(dispatchable, context: context)
  }

  /// Hands a returning side effect to the store now, with the feature's context.
  @discardableResult
  public func send<R: ReturningSideEffect>(_ dispatchable: R) -> DispatchHandle<R.ReturnValue> {
    core.send(dispatchable, context: context)
  }

  /// Hands any item to the store now, through the scope; see ``anyDispatch(_:)``.
  @discardableResult
  public func anySend(_ dispatchable: any Dispatchable) -> DispatchHandle<any Sendable> {
    core.anySend(dispatchable, context: context)
  }

  // MARK: - Effect tools

  /// Cancels everything the feature runs under `id` (runs, debounced and throttled calls, timers); work
  /// that other features or the root store run under an equal id is not affected. See
  /// ``Store/cancel(id:)``.
  public func cancel(id: some Hashable & Sendable) {
    context.cancel(id: id)
  }

  // MARK: - Child scopes

  /// Mounts a child feature at a field of this feature's state; see
  /// `Store.scope(_:dependencies:)`.
  @inlinable
  public func scope<Child: FeatureState, ChildDependencies: SideEffectDependencyContainer>(
    _ keyPath: WritableKeyPath<S, Child>, dependencies: KeyPath<D, ChildDependencies>
  ) -> ScopedStore<Child, ChildDependencies> {
    ScopedStore<Child, ChildDependencies>(
      core: core.child(keyPath, id: core.childID(keyPath), routes: core.fieldRoutes(keyPath)),
      dependencies: self.dependencies[keyPath: dependencies])
  }

  /// Mounts a child feature at an optional field of this feature's state; see
  /// `Store.scope(_:dependencies:)` for optional fields.
  @inlinable
  public func scope<Child: FeatureState, ChildDependencies: SideEffectDependencyContainer>(
    _ keyPath: WritableKeyPath<S, Child?>, dependencies: KeyPath<D, ChildDependencies>
  ) -> ScopedStore<Child, ChildDependencies> {
    let id = core.optionalChildID(keyPath)
    return ScopedStore<Child, ChildDependencies>(
      core: core.child(optional: keyPath, id: id, routes: core.childRoutes(keyPath, scope: id)),
      dependencies: self.dependencies[keyPath: dependencies])
  }

  /// Mounts a child feature at a field of this feature's state, handling its outputs with this feature's
  /// context; see ``Store/scope(_:dependencies:outputs:)-(WritableKeyPath<S,Child>,_,_)``.
  public func scope<
    Child: FeatureState, ChildDependencies: SideEffectDependencyContainer, Output: FeatureOutput
  >(
    _ keyPath: WritableKeyPath<S, Child>, dependencies: KeyPath<D, ChildDependencies>,
    outputs: @escaping FeatureOutputHandler<Output, S, D>
  ) -> ScopedStore<Child, ChildDependencies> where Output.StateType == Child {
    scope(keyPath, dependencies: dependencies).handlingOutputs(FeatureOutputRoute(outputs, parent: context))
  }

  /// Mounts a child feature at an optional field of this feature's state, handling its outputs with this
  /// feature's context; see ``Store/scope(_:dependencies:outputs:)-(WritableKeyPath<S,Child>,_,_)``.
  public func scope<
    Child: FeatureState, ChildDependencies: SideEffectDependencyContainer, Output: FeatureOutput
  >(
    _ keyPath: WritableKeyPath<S, Child?>, dependencies: KeyPath<D, ChildDependencies>,
    outputs: @escaping FeatureOutputHandler<Output, S, D>
  ) -> ScopedStore<Child, ChildDependencies> where Output.StateType == Child {
    scope(keyPath, dependencies: dependencies).handlingOutputs(FeatureOutputRoute(outputs, parent: context))
  }

  /// Mounts a feature on one element of an identified collection of this feature's state, handling its
  /// outputs with this feature's context; see ``Store/scope(_:dependencies:outputs:)-(WritableKeyPath<S,Child>,_,_)``.
  public func scope<
    Elements: MutableCollection & RandomAccessCollection & Sendable, ChildDependencies: SideEffectDependencyContainer,
    Output: FeatureOutput
  >(
    _ keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, ChildDependencies>,
    outputs: @escaping FeatureOutputHandler<Output, S, D>
  ) -> ScopedStore<Elements.Element, ChildDependencies>
  where
    Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable, Output.StateType == Elements.Element
  {
    scope(keyPath, id: id, dependencies: dependencies).handlingOutputs(FeatureOutputRoute(outputs, parent: context))
  }

  /// Mounts a feature on one element of an identified collection of this feature's state; see
  /// ``Store/scope(_:id:dependencies:)``.
  public func scope<
    Elements: MutableCollection & RandomAccessCollection & Sendable, ChildDependencies: SideEffectDependencyContainer
  >(
    _ keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, ChildDependencies>
  ) -> ScopedStore<Elements.Element, ChildDependencies>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable {
    let scopeID = core.elementID(keyPath, id: id)
    return ScopedStore<Elements.Element, ChildDependencies>(
      core: core.element(
        keyPath, id: id, scopeID: scopeID, routes: core.elementRoutes(keyPath, id: id, scope: scopeID)),
      dependencies: self.dependencies[keyPath: dependencies])
  }
}

extension ScopedStore where S: State {
  /// The feature's slice of the latest committed state; `S()` if the scope's element or optional child is
  /// missing (see ``stateIfPresent``). A feature state without `init()` (a ``FeatureState`` that is not a
  /// ``State``) reads its slice with ``stateIfPresent``.
  public var state: S {
    core.stateIfPresent ?? S()
  }
}

extension Store {
  /// The store's whole state as a scope, from which features are mounted.
  @inlinable
  nonisolated var rootScope: ScopedStore<S, D> {
    ScopedStore(core: RootedScope<S, D, S>(root: core), dependencies: dependencies)
  }

  /// Mounts a feature at a field of the state: returns a handle typed to the feature's state and
  /// dependencies (see ``ScopedStore``).
  ///
  /// ```swift
  /// let cart = store.scope(\.cart, dependencies: \.cart)
  /// try await cart.dispatch(AddItem(sku: "A1"))   // applies to store.state.cart, in place
  /// ```
  ///
  /// - Parameters:
  ///   - keyPath: Where the feature's state lives in the store's state.
  ///   - dependencies: Where the feature's dependency container lives in the store's.
  @inlinable
  public nonisolated func scope<Child: FeatureState, ChildDependencies: SideEffectDependencyContainer>(
    _ keyPath: WritableKeyPath<S, Child>, dependencies: KeyPath<D, ChildDependencies>
  ) -> ScopedStore<Child, ChildDependencies> {
    rootScope.scope(keyPath, dependencies: dependencies)
  }

  /// Mounts a feature at an optional field of the state (a presented screen).
  ///
  /// While the field is nil, items dispatched through the scope fail with ``ScopeError/missingChild(_:)``
  /// and are not applied; ``ScopedStore/state`` is `Child()`.
  @inlinable
  public nonisolated func scope<Child: FeatureState, ChildDependencies: SideEffectDependencyContainer>(
    _ keyPath: WritableKeyPath<S, Child?>, dependencies: KeyPath<D, ChildDependencies>
  ) -> ScopedStore<Child, ChildDependencies> {
    rootScope.scope(keyPath, dependencies: dependencies)
  }

  /// Mounts a feature on the element with identifier `id` of an identified collection of the state (a row,
  /// a room).
  ///
  /// The element is looked up by `id` when each item's turn comes, wherever it has moved. Once it is gone,
  /// items dispatched through the scope fail with ``ScopeError/missingElement(_:)`` and are not applied to
  /// any other element or anywhere else; ``ScopedStore/state`` is `Element()`.
  @inlinable
  public nonisolated func scope<
    Elements: MutableCollection & RandomAccessCollection & Sendable, ChildDependencies: SideEffectDependencyContainer
  >(
    _ keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, ChildDependencies>
  ) -> ScopedStore<Elements.Element, ChildDependencies>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable {
    rootScope.scope(keyPath, id: id, dependencies: dependencies)
  }
}

extension Store {
  /// Mounts a feature at a field of the state, and handles the outputs it emits (see ``FeatureOutput``) with
  /// the store's own context.
  ///
  /// ```swift
  /// let catalog = store.scope(\.catalog, dependencies: \.catalog) { (output: CatalogOutput, app) in
  ///   switch output {
  ///   case .addToCart(let product):
  ///     try await app.scope(\.cart, dependencies: \.cart).dispatch(AddItem(CartItem(product)))
  ///   }
  /// }
  /// ```
  ///
  /// The handler runs in the task of the side effect that emitted the output, which waits for it and gets
  /// its error (see ``SideEffectContext/emit(_:)``). Its `app` context is the store's: it reads the whole
  /// state, dispatches the app's items, and mounts the app's other features.
  ///
  /// - Important: Only side effects dispatched or sent through the returned handle (and what they dispatch)
  ///   reach this handler. Another handle of the same place, mounted without `outputs`, ignores the feature's
  ///   outputs: mount a feature once, where its outputs are handled, and hand that handle around.
  ///
  /// - Parameters:
  ///   - keyPath: Where the feature's state lives in the store's state.
  ///   - dependencies: Where the feature's dependency container lives in the store's.
  ///   - outputs: What the feature's outputs of type `Output` do in the app.
  public nonisolated func scope<
    Child: FeatureState, ChildDependencies: SideEffectDependencyContainer, Output: FeatureOutput
  >(
    _ keyPath: WritableKeyPath<S, Child>, dependencies: KeyPath<D, ChildDependencies>,
    outputs: @escaping FeatureOutputHandler<Output, S, D>
  ) -> ScopedStore<Child, ChildDependencies> where Output.StateType == Child {
    rootScope.scope(keyPath, dependencies: dependencies).handlingOutputs(
      FeatureOutputRoute(outputs, parent: SideEffectContext(core: core, dependencies: self.dependencies)))
  }

  /// Mounts a feature at an optional field of the state, and handles its outputs with the store's context;
  /// see ``scope(_:dependencies:outputs:)-(WritableKeyPath<S,Child>,_,_)``.
  public nonisolated func scope<
    Child: FeatureState, ChildDependencies: SideEffectDependencyContainer, Output: FeatureOutput
  >(
    _ keyPath: WritableKeyPath<S, Child?>, dependencies: KeyPath<D, ChildDependencies>,
    outputs: @escaping FeatureOutputHandler<Output, S, D>
  ) -> ScopedStore<Child, ChildDependencies> where Output.StateType == Child {
    rootScope.scope(keyPath, dependencies: dependencies).handlingOutputs(
      FeatureOutputRoute(outputs, parent: SideEffectContext(core: core, dependencies: self.dependencies)))
  }

  /// Mounts a feature on an element of an identified collection of the state, and handles its outputs with
  /// the store's context; see ``scope(_:dependencies:outputs:)-(WritableKeyPath<S,Child>,_,_)``.
  public nonisolated func scope<
    Elements: MutableCollection & RandomAccessCollection & Sendable, ChildDependencies: SideEffectDependencyContainer,
    Output: FeatureOutput
  >(
    _ keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, ChildDependencies>,
    outputs: @escaping FeatureOutputHandler<Output, S, D>
  ) -> ScopedStore<Elements.Element, ChildDependencies>
  where
    Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable, Output.StateType == Elements.Element
  {
    rootScope.scope(keyPath, id: id, dependencies: dependencies).handlingOutputs(
      FeatureOutputRoute(outputs, parent: SideEffectContext(core: core, dependencies: self.dependencies)))
  }
}
