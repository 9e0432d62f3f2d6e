extension SideEffectContext {
  /// The store or feature this context belongs to, as a scope: what its child scopes are mounted on. Inlined,
  /// as `Store.scope` is, so that the fast path of a scope mounted from a store's context runs specialised for
  /// the app's state.
  @inlinable
  var asScope: ScopedStore<S, D> {
    switch backing {
    case .store(let core): ScopedStore(core: RootedScope<S, D, S>(root: core), dependencies: dependencies)
    case .scope(let scope): ScopedStore(core: scope, dependencies: dependencies, outputs: outputs)
    }
  }

  /// Mounts a feature at a field of this context's state, from inside a side effect: the same scope as
  /// `store.scope(_:dependencies:)` (or, in a feature's context, as the feature's own `scope(_:dependencies:)`).
  ///
  /// A side effect of the app can hand work to a feature through the feature's own items, with the feature's
  /// context, without the feature knowing the app, and without the app holding the store in its container:
  ///
  /// ```swift
  /// // In the app: the catalog's `CatalogOutput.addToCart` output is handled with this side effect of the app.
  /// struct AddCatalogProductToCart: SideEffect {
  ///   let product: Product
  ///   func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
  ///     let cart = context.scope(\.cart, dependencies: \.cart)
  ///     try await cart.dispatch(AddItem(sku: product.id))   // a side effect of the Cart feature
  ///   }
  /// }
  /// ```
  ///
  /// Items dispatched through the returned scope take their place in the root store's one mailbox and reach
  /// its interceptors as ``ScopedDispatchable``s, as they do through any other scope of the same place
  /// (the ids are equal).
  ///
  /// - Parameters:
  ///   - keyPath: Where the feature's state lives in this context's state.
  ///   - dependencies: Where the feature's dependency container lives in this context's container.
  @inlinable
  public func scope<Child: FeatureState, ChildDependencies: SideEffectDependencyContainer>(
    _ keyPath: WritableKeyPath<S, Child>, dependencies: KeyPath<D, ChildDependencies>
  ) -> ScopedStore<Child, ChildDependencies> {
    asScope.scope(keyPath, dependencies: dependencies)
  }

  /// Mounts a feature at an optional field of this context's state, from inside a side effect; see
  /// `Store.scope(_:dependencies:)` for optional fields.
  ///
  /// While the field is nil, items dispatched through the scope fail with ``ScopeError/missingChild(_:)``.
  @inlinable
  public func scope<Child: FeatureState, ChildDependencies: SideEffectDependencyContainer>(
    _ keyPath: WritableKeyPath<S, Child?>, dependencies: KeyPath<D, ChildDependencies>
  ) -> ScopedStore<Child, ChildDependencies> {
    asScope.scope(keyPath, dependencies: dependencies)
  }

  /// Mounts a feature on the element with identifier `id` of an identified collection of this context's
  /// state, from inside a side effect; see ``Store/scope(_:id:dependencies:)``.
  ///
  /// Once the element is gone, items dispatched through the scope fail with ``ScopeError/missingElement(_:)``.
  @inlinable
  public func scope<
    Elements: MutableCollection & RandomAccessCollection & Sendable, ChildDependencies: SideEffectDependencyContainer
  >(
    _ keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, ChildDependencies>
  ) -> ScopedStore<Elements.Element, ChildDependencies>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable {
    asScope.scope(keyPath, id: id, dependencies: dependencies)
  }
}

extension SideEffectContext {
  /// Mounts a feature at a field of this context's state, from inside a side effect, and handles the
  /// outputs it emits with this context; see `Store.scope(_:dependencies:outputs:)`.
  public func scope<Child: FeatureState, ChildDependencies: SideEffectDependencyContainer, Output: FeatureOutput>(
    _ keyPath: WritableKeyPath<S, Child>, dependencies: KeyPath<D, ChildDependencies>,
    outputs: @escaping FeatureOutputHandler<Output, S, D>
  ) -> ScopedStore<Child, ChildDependencies> where Output.StateType == Child {
    asScope.scope(keyPath, dependencies: dependencies, outputs: outputs)
  }

  /// Mounts a feature at an optional field of this context's state, from inside a side effect, and handles
  /// its outputs with this context; see `Store.scope(_:dependencies:outputs:)`.
  public func scope<Child: FeatureState, ChildDependencies: SideEffectDependencyContainer, Output: FeatureOutput>(
    _ keyPath: WritableKeyPath<S, Child?>, dependencies: KeyPath<D, ChildDependencies>,
    outputs: @escaping FeatureOutputHandler<Output, S, D>
  ) -> ScopedStore<Child, ChildDependencies> where Output.StateType == Child {
    asScope.scope(keyPath, dependencies: dependencies, outputs: outputs)
  }

  /// Mounts a feature on an element of an identified collection of this context's state, from inside a side
  /// effect, and handles its outputs with this context; see `Store.scope(_:dependencies:outputs:)`.
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
    asScope.scope(keyPath, id: id, dependencies: dependencies, outputs: outputs)
  }
}
