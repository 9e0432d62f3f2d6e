import Katana
import Testing

/// A test store's surface for one feature: a ``TestStore`` (the feature tested alone) or a ``ScopedTestStore``
/// (the feature scoped inside an app's test store).
///
/// Write a feature's test once, against the feature's own types, and run it both ways:
///
/// ```swift
/// func addingToTheCart(_ cart: some TestStoreProtocol<CartState, CartDependencies>) async throws {
///   try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
///   try await cart.dispatch(Checkout())
///   await cart.receive(ClearCart.self) { $0.items = [] }
/// }
///
/// @Test func cart_alone() async throws {
///   let store = TestStore(initialState: CartState(), dependencies: CartDependencies(api: FakeCartAPI()))
///   try await addingToTheCart(store)
///   await store.finish()
/// }
///
/// @Test func cart_inTheApp() async throws {
///   let app = TestStore(initialState: AppState(), dependencies: AppDependencies(cartAPI: FakeCartAPI()))
///   try await addingToTheCart(app.scope(\.cart, dependencies: \.cart))
///   await app.finish()
/// }
/// ```
///
/// Through either, the methods do what the ``TestStore``'s do, typed to the feature: mutations are written
/// against the feature's state, `receive` matches the feature's items. Scoped, the whole test store is still
/// checked exhaustively (see ``ScopedTestStore``).
///
/// Only ``TestStore`` and ``ScopedTestStore`` conform.
public protocol TestStoreProtocol<StateType, Dependencies>: AnyObject, Sendable {
  /// The feature's state.
  associatedtype StateType: FeatureState
  /// The feature's dependency container.
  associatedtype Dependencies: SideEffectDependencyContainer

  /// The engine behind the protocol's methods; an implementation detail.
  var _testScope: _TestScope<StateType, Dependencies> { get }
}

/// The engine behind ``TestStoreProtocol``'s methods; an implementation detail, which only the test stores of
/// this module make.
public struct _TestScope<S: FeatureState, D: SideEffectDependencyContainer>: Sendable {
  let core: TestScopeCore<S, D>
}

extension TestStore: TestStoreProtocol {
  /// The engine behind ``TestStoreProtocol``'s methods; an implementation detail.
  public var _testScope: _TestScope<S, D> {
    _TestScope(core: RootTestScope(self))
  }
}

// MARK: - State

extension TestStoreProtocol where StateType: State {
  /// The feature's slice of the store's latest committed state (the initial state before the store has
  /// started); see ``TestStore/state``.
  ///
  /// For a scope whose element or optional child is missing, the feature state's `init()` value. A feature
  /// state without `init()` (a `FeatureState` that is not a `State`) is read with ``stateIfPresent``, which
  /// is nil then.
  public var state: StateType {
    _testScope.core.stateIfPresent ?? StateType()
  }
}

extension TestStoreProtocol {
  /// The feature's slice of the store's latest committed state, or nil for a scope whose element or optional
  /// child is missing.
  public var stateIfPresent: StateType? {
    _testScope.core.stateIfPresent
  }

  /// The feature's dependency container.
  public var dependencies: Dependencies {
    _testScope.core.dependencies
  }

  /// How strictly the test store checks; see ``Exhaustivity``. A scope reads and sets its test store's: one
  /// setting for the whole store.
  public var exhaustivity: Exhaustivity {
    get { _testScope.core.exhaustivity }
    set { _testScope.core.exhaustivity = newValue }
  }
}

// MARK: - Dispatching

extension TestStoreProtocol {
  /// Dispatches a state updater of the feature and asserts its state change; see
  /// ``TestStore/dispatch(_:_:fileID:filePath:line:column:)-(U,_,_,_,_,_)``.
  ///
  /// Describe the change as a mutation of the feature's state before the updater. Through a scope, the
  /// mutation is applied at the scope's place in the whole state before the updater, and the result is
  /// compared with the whole state the store committed: a change anywhere else in the app state records an
  /// issue too, with a diff whose paths start at the app state (`cart.items[0]: expected "A1", actual "B2"`).
  ///
  /// - Throws: What ``TestStore/dispatch(_:_:fileID:filePath:line:column:)-(U,_,_,_,_,_)`` throws; through a
  ///   scope of an element or optional child that is missing, `ScopeError` (the updater is not applied).
  public nonisolated(nonsending) func dispatch<U: StateUpdater>(
    _ updater: U,
    _ mutation: ((inout StateType) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async throws where U.StateType == StateType {
    try await _testScope.core.dispatch(
      updater, mutation, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Dispatches a side effect of the feature, with the feature's context, and returns when its body returns;
  /// see ``TestStore/dispatch(_:fileID:filePath:line:column:)-(E,_,_,_,_)``.
  ///
  /// - Throws: What ``TestStore/dispatch(_:fileID:filePath:line:column:)-(E,_,_,_,_)`` throws.
  public nonisolated(nonsending) func dispatch<E: SideEffect>(
    _ effect: E,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async throws where E.StateType == StateType, E.Dependencies == Dependencies {
    try await _testScope.core.dispatch(
      effect, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Dispatches a returning side effect, with the feature's context, and returns its value; see
  /// ``TestStore/dispatch(_:fileID:filePath:line:column:)-(R,_,_,_,_)``.
  ///
  /// - Throws: What ``TestStore/dispatch(_:fileID:filePath:line:column:)-(R,_,_,_,_)`` throws.
  public nonisolated(nonsending) func dispatch<R: ReturningSideEffect>(
    _ effect: R,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async throws -> R.ReturnValue {
    try await _testScope.core.dispatch(
      effect, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Hands a state updater of the feature to the store without waiting for it, and asserts its state change
  /// once it is applied; see ``TestStore/send(_:_:fileID:filePath:line:column:)``.
  ///
  /// - Returns: A task that finishes once the updater is applied; its `value` throws what the dispatch threw
  ///   (through a scope of a missing element or optional child, `ScopeError`).
  @discardableResult
  public func send<U: StateUpdater>(
    _ updater: U,
    _ mutation: (@Sendable (inout StateType) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) -> TestStoreTask<Void> where U.StateType == StateType {
    _testScope.core.send(
      updater, mutation, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Starts a side effect of the feature without waiting for it; see
  /// ``TestStore/send(_:fileID:filePath:line:column:)-(E,_,_,_,_)``.
  @discardableResult
  public func send<E: SideEffect>(
    _ effect: E,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) -> TestStoreTask<Void> where E.StateType == StateType, E.Dependencies == Dependencies {
    _testScope.core.send(effect, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Starts a returning side effect of the feature without waiting for it; its handle yields the value. See
  /// ``TestStore/send(_:fileID:filePath:line:column:)-(R,_,_,_,_)``.
  @discardableResult
  public func send<R: ReturningSideEffect>(
    _ effect: R,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) -> TestStoreTask<R.ReturnValue> {
    _testScope.core.send(effect, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }
}

// MARK: - Received items

extension TestStoreProtocol {
  /// Asserts that the next received item is the feature's and has type `I`, and asserts its state change;
  /// see ``TestStore/receive(_:_:fileID:filePath:line:column:)-(I.Type,_,_,_,_,_)``.
  ///
  /// Through a scope, it matches the items that came through a scope of the same place in the state (the
  /// feature's side effects dispatch through it), by the feature's item (`ScopedDispatchable.base`), and
  /// returns the feature's item. Received items are asserted in the order the store saw them, whichever
  /// handle of the test store asserts them.
  ///
  /// - Returns: The received item, or nil if none matched.
  @discardableResult
  public nonisolated(nonsending) func receive<I: Dispatchable>(
    _ type: I.Type,
    _ mutation: ((inout StateType) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> I? {
    await _testScope.core.receive(
      expecting: String(describing: I.self), matching: { $0 is I }, mutation: mutation,
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)) as? I
  }

  /// Asserts that the next received item is the feature's, has type `I` and satisfies `predicate`, and
  /// asserts its state change; see ``TestStore/receive(_:where:_:fileID:filePath:line:column:)``.
  ///
  /// - Returns: The received item, or nil if none matched.
  @discardableResult
  public nonisolated(nonsending) func receive<I: Dispatchable>(
    _ type: I.Type,
    where predicate: (I) -> Bool,
    _ mutation: ((inout StateType) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> I? {
    await _testScope.core.receive(
      expecting: "\(I.self) matching the predicate", matching: { ($0 as? I).map(predicate) ?? false },
      mutation: mutation, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)) as? I
  }

  /// Asserts that the next received item is the feature's and equals `item`, and asserts its state change;
  /// see ``TestStore/receive(_:_:fileID:filePath:line:column:)-(I,_,_,_,_,_)``.
  public nonisolated(nonsending) func receive<I: Dispatchable & Equatable>(
    _ item: I,
    _ mutation: ((inout StateType) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    await _testScope.core.receive(
      expecting: describe(item), matching: { ($0 as? I) == item }, mutation: mutation,
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Asserts that the next received item is the feature's and satisfies `predicate` (which gets the
  /// feature's item), and asserts its state change; see
  /// ``TestStore/receive(where:_:fileID:filePath:line:column:)``.
  ///
  /// - Returns: The received item, or nil if none matched.
  @discardableResult
  public nonisolated(nonsending) func receive(
    where predicate: (any Dispatchable) -> Bool,
    _ mutation: ((inout StateType) throws -> Void)? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> (any Dispatchable)? {
    await _testScope.core.receive(
      expecting: "an item matching the predicate", matching: predicate, mutation: mutation,
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Asserts that a side effect of the feature of type `E`, handed to the store with `send` by another side
  /// effect, threw an error, and returns the error; see
  /// ``TestStore/receiveError(from:matching:fileID:filePath:line:column:)``.
  ///
  /// - Returns: The error, or nil (after recording an issue) if none came.
  @discardableResult
  public nonisolated(nonsending) func receiveError<E: Dispatchable>(
    from type: E.Type,
    matching matches: (any Error) -> Bool = { _ in true },
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> (any Error)? {
    await _testScope.core.receiveError(
      expecting: "an error from \(E.self)", from: { $0 is E }, matching: matches,
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Asserts that the next feature output that nothing handled equals `output`, an output of this feature;
  /// see ``TestStore/receiveOutput(_:fileID:filePath:line:column:)-(Output,_,_,_,_)``.
  ///
  /// Outputs are the test store's, in one queue in the order they were emitted, whichever handle asserts
  /// them: through a scope, the feature's own outputs (a scope of the test store is mounted without a
  /// handler, so its feature's outputs are recorded).
  public nonisolated(nonsending) func receiveOutput<Output: FeatureOutput & Equatable>(
    _ output: Output,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async where Output.StateType == StateType {
    await _testScope.core.receiveOutput(
      expecting: describe(output), matching: { ($0 as? Output) == output },
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Asserts that the next feature output that nothing handled is an output of this feature of type
  /// `Output`, and returns it; see the form above, which compares the output with an expected value.
  ///
  /// - Returns: The output, or nil (after recording an issue) if none came.
  @discardableResult
  public nonisolated(nonsending) func receiveOutput<Output: FeatureOutput>(
    _ type: Output.Type,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> Output? where Output.StateType == StateType {
    await _testScope.core.receiveOutput(
      expecting: "an output of type \(Output.self)", matching: { $0 is Output },
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)) as? Output
  }

  /// Drops the received items that the test has not asserted yet, those of every feature; see
  /// ``TestStore/skipReceivedItems(fileID:filePath:line:column:)``.
  public func skipReceivedItems(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    _testScope.core.skipReceivedItems(
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }
}

// MARK: - Effects, waiting and the end of the test

extension TestStoreProtocol {
  /// Cancels everything the feature runs under `id`; see ``TestStore/cancel(id:)``.
  ///
  /// Through a scope, the id is the feature's own (see `ScopedStore.cancel(id:)`): work that other features
  /// or the app run under an equal id is not affected.
  public func cancel(id: some Hashable & Sendable) {
    _testScope.core.cancel(id: id)
  }

  /// Cancels the side effects the test started that are still running (through any handle of the test
  /// store), and waits until they have returned; see
  /// ``TestStore/skipInFlightEffects(strict:fileID:filePath:line:column:)``.
  public nonisolated(nonsending) func skipInFlightEffects(
    strict: Bool = true,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    await _testScope.core.skipInFlightEffects(
      strict: strict, at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Waits until the whole store has no work in flight; see
  /// ``TestStore/waitUntilIdle(fileID:filePath:line:column:)``.
  public nonisolated(nonsending) func waitUntilIdle(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    await _testScope.core.waitUntilIdle(
      at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Ends the test of the whole store: waits until it has no work in flight, checks that every received item
  /// (of every feature) was asserted and no error went unnoticed, and shuts the store down; see
  /// ``TestStore/finish(fileID:filePath:line:column:)``.
  ///
  /// A reusable feature test usually leaves this to the test that created the test store.
  public nonisolated(nonsending) func finish(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async {
    await _testScope.core.finish(at: sourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }
}

// MARK: - Observation

extension TestStoreProtocol {
  /// Calls `listener` with the feature's state before and after every committed change of it, until the
  /// returned closure is called: the store's (or scope's) `addListener(_:)`.
  @discardableResult
  public func addListener(_ listener: @escaping StoreListener<StateType>) -> StoreUnsubscribe {
    _testScope.core.addListener(listener)
  }

  /// The feature's state: the current one when iteration starts, then each new one; the store's (or
  /// scope's) `states(buffering:)`.
  public func states(buffering: StreamBuffering = .latest) -> StoreStream<StateType> {
    _testScope.core.states(buffering: buffering)
  }

  /// A projection of the feature's state: its current value when iteration starts, then each new value,
  /// skipping commits that leave it equal; the store's (or scope's) `values(of:buffering:)`.
  public func values<Value: Equatable & Sendable>(
    of projection: @escaping @Sendable (StateType) -> Value, buffering: StreamBuffering = .latest
  ) -> StoreStream<Value> {
    _testScope.core.values(of: projection, buffering: buffering)
  }
}

// MARK: - Scopes

extension TestStoreProtocol {
  /// Mounts a feature at a field of this state, as the app does with `store.scope(_:dependencies:)`: returns
  /// a handle typed to the feature, with the same assertions, checked by this test store.
  ///
  /// ```swift
  /// let app = TestStore(initialState: AppState(), dependencies: AppDependencies())
  /// let cart = app.scope(\.cart, dependencies: \.cart)   // ScopedTestStore<CartState, CartDependencies>
  /// try await cart.dispatch(AddItem(sku: "A1")) { $0.items = ["A1"] }
  /// ```
  ///
  /// - Parameters:
  ///   - keyPath: Where the feature's state lives in this state.
  ///   - dependencies: Where the feature's dependency container lives in this container.
  public func scope<Child: FeatureState, ChildDependencies: SideEffectDependencyContainer>(
    _ keyPath: WritableKeyPath<StateType, Child>, dependencies: KeyPath<Dependencies, ChildDependencies>
  ) -> ScopedTestStore<Child, ChildDependencies> {
    _testScope.core.child(keyPath, dependencies: dependencies)
  }

  /// Mounts a feature at an optional field of this state (a presented screen).
  ///
  /// While the field is nil, the handle's `dispatch` and `send` fail with `ScopeError.missingChild` and
  /// apply nothing, as the store's scope does; its `state` is `Child()`.
  public func scope<Child: FeatureState, ChildDependencies: SideEffectDependencyContainer>(
    _ keyPath: WritableKeyPath<StateType, Child?>, dependencies: KeyPath<Dependencies, ChildDependencies>
  ) -> ScopedTestStore<Child, ChildDependencies> {
    _testScope.core.child(optional: keyPath, dependencies: dependencies)
  }

  /// Mounts a feature on the element with identifier `id` of an identified collection of this state (a row, a
  /// room).
  ///
  /// Once the element is gone, the handle's `dispatch` and `send` fail with `ScopeError.missingElement`
  /// and apply nothing, as the store's scope does; its `state` is `Element()`.
  public func scope<
    Elements: MutableCollection & RandomAccessCollection & Sendable, ChildDependencies: SideEffectDependencyContainer
  >(
    _ keyPath: WritableKeyPath<StateType, Elements>, id: Elements.Element.ID,
    dependencies: KeyPath<Dependencies, ChildDependencies>
  ) -> ScopedTestStore<Elements.Element, ChildDependencies>
  where Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable {
    _testScope.core.element(keyPath, id: id, dependencies: dependencies)
  }

  /// Mounts a feature at a field of this state with the handler of its outputs that the app mounts it with
  /// (`store.scope(_:dependencies:outputs:)`): the parent's reaction to the feature's outputs is tested through the
  /// feature's handle, exhaustively.
  ///
  /// ```swift
  /// let app = TestStore(initialState: AppState(), dependencies: AppDependencies())
  /// let cart = app.scope(\.cart, dependencies: \.cart, outputs: AppFeature.handleCart)
  /// try await cart.dispatch(CheckOut())
  /// await app.receive(StartShipping(items: ["A1"])) { $0.shipping = ["A1"] }   // the handler's dispatch
  /// ```
  ///
  /// The handler runs as in the app: in the emitting side effect's task, with this state's context. What it
  /// dispatches is received by the test store, to be asserted with `receive`, and the outputs it handles are not
  /// recorded for `receiveOutput` (what a feature mounted without a handler emits is).
  public func scope<Child: FeatureState, ChildDependencies: SideEffectDependencyContainer, Output: FeatureOutput>(
    _ keyPath: WritableKeyPath<StateType, Child>, dependencies: KeyPath<Dependencies, ChildDependencies>,
    outputs: @escaping FeatureOutputHandler<Output, StateType, Dependencies>
  ) -> ScopedTestStore<Child, ChildDependencies> where Output.StateType == Child {
    _testScope.core.child(keyPath, dependencies: dependencies, outputs: outputs)
  }

  /// Mounts a feature at an optional field of this state with the handler of its outputs; see
  /// ``scope(_:dependencies:outputs:)-(WritableKeyPath<Self.StateType,Child>,_,_)``.
  public func scope<Child: FeatureState, ChildDependencies: SideEffectDependencyContainer, Output: FeatureOutput>(
    _ keyPath: WritableKeyPath<StateType, Child?>, dependencies: KeyPath<Dependencies, ChildDependencies>,
    outputs: @escaping FeatureOutputHandler<Output, StateType, Dependencies>
  ) -> ScopedTestStore<Child, ChildDependencies> where Output.StateType == Child {
    _testScope.core.child(optional: keyPath, dependencies: dependencies, outputs: outputs)
  }

  /// Mounts a feature on the element with identifier `id` of an identified collection of this state with the
  /// handler of its outputs (a row that tells its list what happened); see
  /// ``scope(_:dependencies:outputs:)-(WritableKeyPath<Self.StateType,Child>,_,_)``.
  public func scope<
    Elements: MutableCollection & RandomAccessCollection & Sendable, ChildDependencies: SideEffectDependencyContainer,
    Output: FeatureOutput
  >(
    _ keyPath: WritableKeyPath<StateType, Elements>, id: Elements.Element.ID,
    dependencies: KeyPath<Dependencies, ChildDependencies>,
    outputs: @escaping FeatureOutputHandler<Output, StateType, Dependencies>
  ) -> ScopedTestStore<Elements.Element, ChildDependencies>
  where
    Elements.Element: FeatureState & Identifiable, Elements.Element.ID: Sendable, Output.StateType == Elements.Element
  {
    _testScope.core.element(keyPath, id: id, dependencies: dependencies, outputs: outputs)
  }
}
