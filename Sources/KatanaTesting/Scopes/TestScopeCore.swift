import Katana
import Testing

/// The engine behind ``TestStoreProtocol``'s methods, typed to one feature's state `S` and dependencies `D`,
/// with the test store's own types erased.
///
/// Two subclasses: ``RootTestScope`` is a ``TestStore`` itself (a feature tested alone: its items go to the
/// store as they are), ``NestedTestScope`` a scope of a test store (its items go through the store's scope and
/// reach the test store's recorder wrapped in `ScopedDispatchable`). Both share the one test store's recorder:
/// one queue of received items, one exhaustivity, one end of the test. (A class with overridable generic
/// methods, as Katana's own scopes: the items keep their static types down to the store.)
class TestScopeCore<S: FeatureState, D: SideEffectDependencyContainer>: @unchecked Sendable {
  // Sendable: subclasses add only immutable stored properties of Sendable types.

  init() {}

  // MARK: - Overridden by the subclasses

  /// The feature's slice of the state the test store shows (the initial state before the store started);
  /// nil if the scope's element or optional child is missing.
  var stateIfPresent: S? { abstract() }
  var dependencies: D { abstract() }
  /// The test store's exhaustivity: one setting for the whole store.
  var exhaustivity: Exhaustivity {
    get { abstract() }
    set { abstract() }
  }

  nonisolated(nonsending) func dispatch<U: StateUpdater>(
    _ updater: U, _ mutation: ((inout S) throws -> Void)?, at location: SourceLocation
  )
    async throws
  where U.StateType == S { abstract() }
  nonisolated(nonsending) func dispatch<E: SideEffect>(_ effect: E, at location: SourceLocation) async throws
  where E.StateType == S, E.Dependencies == D { abstract() }
  nonisolated(nonsending) func dispatch<R: ReturningSideEffect>(_ effect: R, at location: SourceLocation) async throws
    -> R.ReturnValue
  {
    abstract()
  }
  func send<U: StateUpdater>(
    _ updater: U, _ mutation: (@Sendable (inout S) throws -> Void)?, at location: SourceLocation
  ) -> TestStoreTask<Void> where U.StateType == S { abstract() }
  func send<E: SideEffect>(_ effect: E, at location: SourceLocation) -> TestStoreTask<Void>
  where E.StateType == S, E.Dependencies == D { abstract() }
  func send<R: ReturningSideEffect>(_ effect: R, at location: SourceLocation) -> TestStoreTask<R.ReturnValue> {
    abstract()
  }

  /// Asserts the next received item of this scope that `matches` (which sees the feature's item, as the
  /// feature dispatched it) and its state change; returns the feature's item, or nil after recording an issue.
  @discardableResult
  nonisolated(nonsending) func receive(
    expecting expectation: String, matching matches: (any Dispatchable) -> Bool,
    mutation: ((inout S) throws -> Void)?, at location: SourceLocation
  ) async -> (any Dispatchable)? { abstract() }
  /// Takes the error of a sent side effect of this scope that `item` (which sees the feature's item) accepts.
  nonisolated(nonsending) func receiveError(
    expecting expectation: String, from item: (any Dispatchable) -> Bool, matching matches: (any Error) -> Bool,
    at location: SourceLocation
  ) async -> (any Error)? { abstract() }
  /// Takes the next feature output that nothing handled, from the test store's one queue of outputs.
  @discardableResult
  nonisolated(nonsending) func receiveOutput(
    expecting expectation: String, matching matches: (any FeatureOutput) -> Bool, at location: SourceLocation
  ) async -> (any FeatureOutput)? { abstract() }
  func cancel(id: some Hashable & Sendable) { abstract() }

  func addListener(_ listener: @escaping StoreListener<S>) -> StoreUnsubscribe { abstract() }
  func states(buffering: StreamBuffering) -> StoreStream<S> { abstract() }
  func values<Value: Equatable & Sendable>(of projection: @escaping @Sendable (S) -> Value, buffering: StreamBuffering)
    -> StoreStream<Value>
  { abstract() }

  func skipReceivedItems(at location: SourceLocation) { abstract() }
  nonisolated(nonsending) func skipInFlightEffects(strict: Bool, at location: SourceLocation) async { abstract() }
  nonisolated(nonsending) func waitUntilIdle(at location: SourceLocation) async { abstract() }
  nonisolated(nonsending) func finish(at location: SourceLocation) async { abstract() }

  func child<C: FeatureState, CD: SideEffectDependencyContainer>(
    _ keyPath: WritableKeyPath<S, C>, dependencies: KeyPath<D, CD>
  ) -> ScopedTestStore<C, CD> { abstract() }
  func child<C: FeatureState, CD: SideEffectDependencyContainer>(
    optional keyPath: WritableKeyPath<S, C?>, dependencies: KeyPath<D, CD>
  ) -> ScopedTestStore<C, CD> { abstract() }
  func element<Elements: MutableCollection & RandomAccessCollection & Sendable, CD: SideEffectDependencyContainer>(
    _ keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, CD>
  ) -> ScopedTestStore<Elements.Element, CD>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable { abstract() }

  func child<C: FeatureState, CD: SideEffectDependencyContainer, O: FeatureOutput>(
    _ keyPath: WritableKeyPath<S, C>, dependencies: KeyPath<D, CD>, outputs: @escaping FeatureOutputHandler<O, S, D>
  ) -> ScopedTestStore<C, CD> where O.StateType == C { abstract() }
  func child<C: FeatureState, CD: SideEffectDependencyContainer, O: FeatureOutput>(
    optional keyPath: WritableKeyPath<S, C?>, dependencies: KeyPath<D, CD>,
    outputs: @escaping FeatureOutputHandler<O, S, D>
  ) -> ScopedTestStore<C, CD> where O.StateType == C { abstract() }
  func element<
    Elements: MutableCollection & RandomAccessCollection & Sendable, CD: SideEffectDependencyContainer,
    O: FeatureOutput
  >(
    _ keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, CD>,
    outputs: @escaping FeatureOutputHandler<O, S, D>
  ) -> ScopedTestStore<Elements.Element, CD>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable, O.StateType == Elements.Element {
    abstract()
  }

  private func abstract(_ function: StaticString = #function) -> Never {
    // Broken internal invariant: every TestScopeCore is a RootTestScope or a NestedTestScope.
    fatalError("TestScopeCore.\(function) is implemented by its subclasses")
  }
}

/// A ``TestStore`` as a ``TestScopeCore``: a feature tested alone. Everything is the test store's own.
final class RootTestScope<S: State & Equatable, D: SideEffectDependencyContainer>: TestScopeCore<S, D>,
  @unchecked Sendable
{
  // Sendable: immutable.

  let testStore: TestStore<S, D>

  init(_ testStore: TestStore<S, D>) {
    self.testStore = testStore
  }

  override var stateIfPresent: S? { testStore.state }
  override var dependencies: D { testStore.dependencies }
  override var exhaustivity: Exhaustivity {
    get { testStore.exhaustivity }
    set { testStore.exhaustivity = newValue }
  }

  override nonisolated(nonsending) func dispatch<U: StateUpdater>(
    _ updater: U, _ mutation: ((inout S) throws -> Void)?, at location: SourceLocation
  ) async throws where U.StateType == S {
    let store = testStore.store
    try await testStore.dispatchOwn(updater, mutation: mutation, at: location) { try await store.dispatch(updater) }
  }

  override nonisolated(nonsending) func dispatch<E: SideEffect>(_ effect: E, at location: SourceLocation) async throws
  where E.StateType == S, E.Dependencies == D {
    let store = testStore.store
    try await testStore.dispatchOwn(effect, at: location) { try await store.dispatch(effect) }
  }

  override nonisolated(nonsending) func dispatch<R: ReturningSideEffect>(_ effect: R, at location: SourceLocation)
    async throws
    -> R.ReturnValue
  {
    let store = testStore.store
    return try await testStore.dispatchOwn(effect, at: location) { try await store.dispatch(effect) }
  }

  override func send<U: StateUpdater>(
    _ updater: U, _ mutation: (@Sendable (inout S) throws -> Void)?, at location: SourceLocation
  ) -> TestStoreTask<Void> where U.StateType == S {
    let store = testStore.store
    return testStore.sendOwn(updater, mutation: mutation, at: location) { try await store.dispatch(updater) }
  }

  override func send<E: SideEffect>(_ effect: E, at location: SourceLocation) -> TestStoreTask<Void>
  where E.StateType == S, E.Dependencies == D {
    let store = testStore.store
    return testStore.sendOwn(effect, at: location) { try await store.dispatch(effect) }
  }

  override func send<R: ReturningSideEffect>(_ effect: R, at location: SourceLocation) -> TestStoreTask<
    R.ReturnValue
  > {
    let store = testStore.store
    return testStore.sendOwn(effect, at: location) { try await store.dispatch(effect) }
  }

  @discardableResult
  override nonisolated(nonsending) func receive(
    expecting expectation: String, matching matches: (any Dispatchable) -> Bool,
    mutation: ((inout S) throws -> Void)?, at location: SourceLocation
  ) async -> (any Dispatchable)? {
    await testStore.receiveStep(expecting: expectation, matching: matches, mutation: mutation, at: location)?.item
  }

  override nonisolated(nonsending) func receiveError(
    expecting expectation: String, from item: (any Dispatchable) -> Bool, matching matches: (any Error) -> Bool,
    at location: SourceLocation
  ) async -> (any Error)? {
    await testStore.receiveError(expecting: expectation, from: item, matching: matches, at: location)
  }

  override nonisolated(nonsending) func receiveOutput(
    expecting expectation: String, matching matches: (any FeatureOutput) -> Bool, at location: SourceLocation
  ) async -> (any FeatureOutput)? {
    await testStore.receiveOutput(expecting: expectation, matching: matches, at: location)
  }

  override func cancel(id: some Hashable & Sendable) {
    testStore.store.cancel(id: id)
  }

  override func addListener(_ listener: @escaping StoreListener<S>) -> StoreUnsubscribe {
    testStore.store.addListener(listener)
  }

  override func states(buffering: StreamBuffering) -> StoreStream<S> {
    testStore.store.states(buffering: buffering)
  }

  override func values<Value: Equatable & Sendable>(
    of projection: @escaping @Sendable (S) -> Value, buffering: StreamBuffering
  ) -> StoreStream<Value> {
    testStore.store.values(of: projection, buffering: buffering)
  }

  override func skipReceivedItems(at location: SourceLocation) {
    testStore.skipReceivedItems(at: location)
  }

  override nonisolated(nonsending) func skipInFlightEffects(strict: Bool, at location: SourceLocation) async {
    await testStore.skipInFlightEffects(strict: strict, at: location)
  }

  override nonisolated(nonsending) func waitUntilIdle(at location: SourceLocation) async {
    await testStore.waitUntilIdle(at: location)
  }

  override nonisolated(nonsending) func finish(at location: SourceLocation) async {
    await testStore.finish(at: location)
  }

  override func child<C: FeatureState, CD: SideEffectDependencyContainer>(
    _ keyPath: WritableKeyPath<S, C>, dependencies: KeyPath<D, CD>
  ) -> ScopedTestStore<C, CD> {
    mount(testStore.store.scope(keyPath, dependencies: dependencies), at: keyPath)
  }

  override func child<C: FeatureState, CD: SideEffectDependencyContainer>(
    optional keyPath: WritableKeyPath<S, C?>, dependencies: KeyPath<D, CD>
  ) -> ScopedTestStore<C, CD> {
    mount(testStore.store.scope(keyPath, dependencies: dependencies), atOptional: keyPath)
  }

  override func element<
    Elements: MutableCollection & RandomAccessCollection & Sendable, CD: SideEffectDependencyContainer
  >(
    _ keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, CD>
  ) -> ScopedTestStore<Elements.Element, CD>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable {
    mount(testStore.store.scope(keyPath, id: id, dependencies: dependencies), on: keyPath, id: id)
  }

  override func child<C: FeatureState, CD: SideEffectDependencyContainer, O: FeatureOutput>(
    _ keyPath: WritableKeyPath<S, C>, dependencies: KeyPath<D, CD>, outputs: @escaping FeatureOutputHandler<O, S, D>
  ) -> ScopedTestStore<C, CD> where O.StateType == C {
    mount(testStore.store.scope(keyPath, dependencies: dependencies, outputs: outputs), at: keyPath)
  }

  override func child<C: FeatureState, CD: SideEffectDependencyContainer, O: FeatureOutput>(
    optional keyPath: WritableKeyPath<S, C?>, dependencies: KeyPath<D, CD>,
    outputs: @escaping FeatureOutputHandler<O, S, D>
  ) -> ScopedTestStore<C, CD> where O.StateType == C {
    mount(testStore.store.scope(keyPath, dependencies: dependencies, outputs: outputs), atOptional: keyPath)
  }

  override func element<
    Elements: MutableCollection & RandomAccessCollection & Sendable, CD: SideEffectDependencyContainer,
    O: FeatureOutput
  >(
    _ keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, CD>,
    outputs: @escaping FeatureOutputHandler<O, S, D>
  ) -> ScopedTestStore<Elements.Element, CD>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable, O.StateType == Elements.Element {
    mount(testStore.store.scope(keyPath, id: id, dependencies: dependencies, outputs: outputs), on: keyPath, id: id)
  }

  // MARK: - Mounting (one per kind of place, with or without an output handler)

  private func mount<C: FeatureState, CD: SideEffectDependencyContainer>(
    _ store: ScopedStore<C, CD>, at keyPath: WritableKeyPath<S, C>
  ) -> ScopedTestStore<C, CD> {
    NestedTestScope.make(root: testStore, store: store, path: SlicePath<S, S>.identity().appending(keyPath))
  }

  private func mount<C: FeatureState, CD: SideEffectDependencyContainer>(
    _ store: ScopedStore<C, CD>, atOptional keyPath: WritableKeyPath<S, C?>
  ) -> ScopedTestStore<C, CD> {
    NestedTestScope.make(
      root: testStore, store: store, path: SlicePath<S, S>.identity().appending(optional: keyPath, scope: store.id))
  }

  private func mount<
    Elements: MutableCollection & RandomAccessCollection & Sendable, CD: SideEffectDependencyContainer
  >(
    _ store: ScopedStore<Elements.Element, CD>, on keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID
  ) -> ScopedTestStore<Elements.Element, CD>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable {
    NestedTestScope.make(
      root: testStore, store: store, path: SlicePath<S, S>.identity().appending(keyPath, id: id, scope: store.id))
  }
}
