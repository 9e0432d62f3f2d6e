import Katana
import Testing

/// A scope of a test store with state `Root`: the feature's items go through the store's scope (a
/// `ScopedStore`), as in the app, and everything is checked by the one test store.
///
/// - The test's items are dispatched through the scope; the recorder sees them wrapped in a
///   `ScopedDispatchable`.
/// - An expected mutation is written against the slice, and applied at the scope's place in the whole state
///   before the item: the result is compared with the whole committed state, so a change anywhere else in the
///   state is reported as well.
/// - `receive` matches the received items that came through this scope (the same place in the state), on the
///   feature's item (`ScopedDispatchable.base`).
/// - Received items, exhaustivity, the items still in flight and the end of the test are the test store's: an
///   item another feature dispatched and nobody asserted is still reported.
final class NestedTestScope<
  Root: State & Equatable, RootDependencies: SideEffectDependencyContainer, S: FeatureState,
  D: SideEffectDependencyContainer
>: TestScopeCore<S, D>, @unchecked Sendable {
  // Sendable: immutable.

  let root: TestStore<Root, RootDependencies>
  let store: ScopedStore<S, D>
  let path: SlicePath<Root, S>

  init(root: TestStore<Root, RootDependencies>, store: ScopedStore<S, D>, path: SlicePath<Root, S>) {
    self.root = root
    self.store = store
    self.path = path
  }

  /// The test store's handle on a scope.
  static func make(root: TestStore<Root, RootDependencies>, store: ScopedStore<S, D>, path: SlicePath<Root, S>)
    -> ScopedTestStore<S, D>
  {
    ScopedTestStore(core: NestedTestScope(root: root, store: store, path: path), store: store)
  }

  /// `mutation`, written against the slice, as a mutation of the whole state.
  func rooted(_ mutation: ((inout S) throws -> Void)?) -> ((inout Root) throws -> Void)? {
    guard let mutation else { return nil }
    let path = self.path
    return { root in try path.modify(&root, mutation) }
  }

  func rooted(_ mutation: (@Sendable (inout S) throws -> Void)?) -> (@Sendable (inout Root) throws -> Void)? {
    guard let mutation else { return nil }
    let path = self.path
    return { root in try path.modify(&root, mutation) }
  }

  /// Whether `item` came through this scope, and is accepted by `matches` (which sees the feature's item).
  static func accepts(
    _ item: any Dispatchable, through scope: ScopeID, _ matches: (any Dispatchable) -> Bool
  ) -> Bool {
    guard let scoped = item as? any ScopedDispatchable, scoped.scope == scope else { return false }
    return matches(scoped.base)
  }

  override var stateIfPresent: S? { path.read(root.state) }
  override var dependencies: D { store.dependencies }
  override var exhaustivity: Exhaustivity {
    get { root.exhaustivity }
    set { root.exhaustivity = newValue }
  }

  // MARK: - The test's items

  override nonisolated(nonsending) func dispatch<U: StateUpdater>(
    _ updater: U, _ mutation: ((inout S) throws -> Void)?, at location: SourceLocation
  ) async throws where U.StateType == S {
    let store = self.store
    try await root.dispatchOwn(updater, mutation: rooted(mutation), at: location) { try await store.dispatch(updater) }
  }

  override nonisolated(nonsending) func dispatch<E: SideEffect>(_ effect: E, at location: SourceLocation) async throws
  where E.StateType == S, E.Dependencies == D {
    let store = self.store
    try await root.dispatchOwn(effect, at: location) { try await store.dispatch(effect) }
  }

  override nonisolated(nonsending) func dispatch<R: ReturningSideEffect>(_ effect: R, at location: SourceLocation)
    async throws
    -> R.ReturnValue
  {
    let store = self.store
    return try await root.dispatchOwn(effect, at: location) { try await store.dispatch(effect) }
  }

  override func send<U: StateUpdater>(
    _ updater: U, _ mutation: (@Sendable (inout S) throws -> Void)?, at location: SourceLocation
  ) -> TestStoreTask<Void> where U.StateType == S {
    let store = self.store
    return root.sendOwn(updater, mutation: rooted(mutation), at: location) { try await store.dispatch(updater) }
  }

  override func send<E: SideEffect>(_ effect: E, at location: SourceLocation) -> TestStoreTask<Void>
  where E.StateType == S, E.Dependencies == D {
    let store = self.store
    return root.sendOwn(effect, at: location) { try await store.dispatch(effect) }
  }

  override func send<R: ReturningSideEffect>(_ effect: R, at location: SourceLocation) -> TestStoreTask<
    R.ReturnValue
  > {
    let store = self.store
    return root.sendOwn(effect, at: location) { try await store.dispatch(effect) }
  }

  // MARK: - Received items

  @discardableResult
  override nonisolated(nonsending) func receive(
    expecting expectation: String, matching matches: (any Dispatchable) -> Bool,
    mutation: ((inout S) throws -> Void)?, at location: SourceLocation
  ) async -> (any Dispatchable)? {
    let scope = store.id
    let step = await root.receiveStep(
      expecting: "\(expectation) through \(scope)", matching: { Self.accepts($0, through: scope, matches) },
      mutation: rooted(mutation), at: location)
    return (step?.item as? any ScopedDispatchable)?.base
  }

  override nonisolated(nonsending) func receiveError(
    expecting expectation: String, from item: (any Dispatchable) -> Bool, matching matches: (any Error) -> Bool,
    at location: SourceLocation
  ) async -> (any Error)? {
    let scope = store.id
    return await root.receiveError(
      expecting: "\(expectation) through \(scope)", from: { Self.accepts($0, through: scope, item) },
      matching: matches, at: location)
  }

  override nonisolated(nonsending) func receiveOutput(
    expecting expectation: String, matching matches: (any FeatureOutput) -> Bool, at location: SourceLocation
  ) async -> (any FeatureOutput)? {
    await root.receiveOutput(expecting: expectation, matching: matches, at: location)
  }

  // MARK: - The rest of the surface

  override func cancel(id: some Hashable & Sendable) {
    store.cancel(id: id)
  }

  override func addListener(_ listener: @escaping StoreListener<S>) -> StoreUnsubscribe {
    store.addListener(listener)
  }

  override func states(buffering: StreamBuffering) -> StoreStream<S> {
    store.states(buffering: buffering)
  }

  override func values<Value: Equatable & Sendable>(
    of projection: @escaping @Sendable (S) -> Value, buffering: StreamBuffering
  ) -> StoreStream<Value> {
    store.values(of: projection, buffering: buffering)
  }

  override func skipReceivedItems(at location: SourceLocation) {
    root.skipReceivedItems(at: location)
  }

  override nonisolated(nonsending) func skipInFlightEffects(strict: Bool, at location: SourceLocation) async {
    await root.skipInFlightEffects(strict: strict, at: location)
  }

  override nonisolated(nonsending) func waitUntilIdle(at location: SourceLocation) async {
    await root.waitUntilIdle(at: location)
  }

  override nonisolated(nonsending) func finish(at location: SourceLocation) async {
    await root.finish(at: location)
  }

  // MARK: - Child scopes

  override func child<C: FeatureState, CD: SideEffectDependencyContainer>(
    _ keyPath: WritableKeyPath<S, C>, dependencies: KeyPath<D, CD>
  ) -> ScopedTestStore<C, CD> {
    mount(store.scope(keyPath, dependencies: dependencies), at: keyPath)
  }

  override func child<C: FeatureState, CD: SideEffectDependencyContainer>(
    optional keyPath: WritableKeyPath<S, C?>, dependencies: KeyPath<D, CD>
  ) -> ScopedTestStore<C, CD> {
    mount(store.scope(keyPath, dependencies: dependencies), atOptional: keyPath)
  }

  override func element<
    Elements: MutableCollection & RandomAccessCollection & Sendable, CD: SideEffectDependencyContainer
  >(
    _ keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, CD>
  ) -> ScopedTestStore<Elements.Element, CD>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable {
    mount(store.scope(keyPath, id: id, dependencies: dependencies), on: keyPath, id: id)
  }

  override func child<C: FeatureState, CD: SideEffectDependencyContainer, O: FeatureOutput>(
    _ keyPath: WritableKeyPath<S, C>, dependencies: KeyPath<D, CD>, outputs: @escaping FeatureOutputHandler<O, S, D>
  ) -> ScopedTestStore<C, CD> where O.StateType == C {
    mount(store.scope(keyPath, dependencies: dependencies, outputs: outputs), at: keyPath)
  }

  override func child<C: FeatureState, CD: SideEffectDependencyContainer, O: FeatureOutput>(
    optional keyPath: WritableKeyPath<S, C?>, dependencies: KeyPath<D, CD>,
    outputs: @escaping FeatureOutputHandler<O, S, D>
  ) -> ScopedTestStore<C, CD> where O.StateType == C {
    mount(store.scope(keyPath, dependencies: dependencies, outputs: outputs), atOptional: keyPath)
  }

  override func element<
    Elements: MutableCollection & RandomAccessCollection & Sendable, CD: SideEffectDependencyContainer,
    O: FeatureOutput
  >(
    _ keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, CD>,
    outputs: @escaping FeatureOutputHandler<O, S, D>
  ) -> ScopedTestStore<Elements.Element, CD>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable, O.StateType == Elements.Element {
    mount(store.scope(keyPath, id: id, dependencies: dependencies, outputs: outputs), on: keyPath, id: id)
  }

  // MARK: - Mounting (one per kind of place, with or without an output handler)

  private func mount<C: FeatureState, CD: SideEffectDependencyContainer>(
    _ child: ScopedStore<C, CD>, at keyPath: WritableKeyPath<S, C>
  ) -> ScopedTestStore<C, CD> {
    NestedTestScope<Root, RootDependencies, C, CD>.make(root: root, store: child, path: path.appending(keyPath))
  }

  private func mount<C: FeatureState, CD: SideEffectDependencyContainer>(
    _ child: ScopedStore<C, CD>, atOptional keyPath: WritableKeyPath<S, C?>
  ) -> ScopedTestStore<C, CD> {
    NestedTestScope<Root, RootDependencies, C, CD>.make(
      root: root, store: child, path: path.appending(optional: keyPath, scope: child.id))
  }

  private func mount<
    Elements: MutableCollection & RandomAccessCollection & Sendable, CD: SideEffectDependencyContainer
  >(
    _ child: ScopedStore<Elements.Element, CD>, on keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID
  ) -> ScopedTestStore<Elements.Element, CD>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable {
    NestedTestScope<Root, RootDependencies, Elements.Element, CD>.make(
      root: root, store: child, path: path.appending(keyPath, id: id, scope: child.id))
  }
}
