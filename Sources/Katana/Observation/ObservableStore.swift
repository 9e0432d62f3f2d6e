#if canImport(Observation)
  import Observation

  /// An `Observable` view of a store for SwiftUI: views re-render when a field they read changes, and not
  /// when another field does. The state needs no macro.
  ///
  /// ```swift
  /// struct CartView: View {
  ///   let model: ObservableStore<AppState, AppDependencies>  // ObservableStore(store: store)
  ///
  ///   var body: some View {
  ///     List(model[\.cart.items]) { item in Text(item.name) }  // tracks cart.items only
  ///     Text("Total: \(model.cart.total)")                     // tracks all of cart
  ///     Button("Clear") { model.send(ClearCart()) }            // no await
  ///   }
  /// }
  /// ```
  ///
  /// ## What a view tracks
  /// A view tracks the key paths it reads through the model, and is notified when the value at one of them
  /// changes:
  /// - `model.cart` (dynamic member lookup) tracks `\.cart`. So does `model.cart.total`: the model only sees
  ///   `\.cart`; `.total` is read on the value it returned.
  /// - `model[\.cart.items]` tracks `\.cart.items` exactly: a change to `cart.total` does not notify it.
  ///   Read nested fields this way where a view should ignore its siblings.
  /// - ``state`` tracks the whole state.
  ///
  /// Values are compared when the model applies a new state. An `Equatable` value (checked at run time, so
  /// `[Item]` and `Item?` count when `Item` is `Equatable`) notifies only when it differs by `==`. A value
  /// that is not `Equatable` notifies on every new state the model applies, unless the whole state is
  /// `Equatable` and unchanged.
  ///
  /// ## Updates
  /// The model keeps the latest state it applied and reads it synchronously. It subscribes as it is made, waits for
  /// the store to be ready, then applies committed states on the main actor, in commit order, from one task it owns.
  /// Its subscription keeps only the latest state not yet applied, so it may skip intermediate states, never goes
  /// back to an older one, and always ends up showing the store's latest state (of a scope: the slice's latest
  /// value, or the last one it had before it went missing). Until the store is ready, a model of the store shows
  /// `S()`.
  ///
  /// ## Features without `init()`
  /// A feature state needs no `init()` (``FeatureState``): a row with `let id` and no default gets a model too.
  /// Its scope's initialiser is failable: it returns nil if the slice is missing when the model is made (the row was
  /// removed, the store is not ready yet), since the model would have nothing to show.
  ///
  /// ```swift
  /// if let row = ObservableStore(scope: store.scope(\.todos, id: todo.id, dependencies: \.self)) {
  ///   TodoRow(model: row)
  /// }
  /// ```
  ///
  /// For a feature state that is a ``State``, the plain initialiser is the one chosen (it shows `S()` while the
  /// slice is missing), except where the result is an optional: `let model: ObservableStore<Row, D>? = ...` calls the
  /// failable one.
  ///
  /// ## Lifetime
  /// The model keeps the store alive. Its task does not keep the model alive: releasing the model cancels
  /// the task, which unsubscribes from the store. When the store shuts down the task ends, and the model
  /// keeps the last state it applied (made as the store shuts down, it shows the state the store shut down with).
  ///
  /// - Important: The model keeps the state it shows, as a listener does, so an update that mutates a large
  ///   collection copies it once. Observe a large state through ``Store/values(of:buffering:)`` instead.
  ///
  /// - Note: Members of the model (``state``, `send`, `fieldBinding`, `binding`) take precedence
  ///   over state fields of the same name; read such a field with `model[\.state]`.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @MainActor @dynamicMemberLookup
  public final class ObservableStore<S: FeatureState, D: SideEffectDependencyContainer>: Observable {
    /// What the registrar knows about one tracked key path of the state.
    private struct Field {
      /// The key path of the model that stands for the state's key path in the registrar.
      let observed: KeyPath<ObservableStore, Void>
      /// Whether two states have equal values at the key path; nil if its value is not `Equatable`.
      let isUnchanged: ((S, S) -> Bool)?
    }

    /// A key path of the state, as the index of the model's key path that stands for it.
    private struct FieldKey: Hashable, @unchecked Sendable {  // Sendable: key paths are immutable.
      let path: AnyKeyPath
    }

    private let source: any ObservableStoreSource<S, D>
    private let registrar = ObservationRegistrar()
    /// The state the model shows: the last one it applied.
    private var current: S
    /// Every key path read through the model so far. Bounded by the code: one entry per distinct key path.
    private var fields: [AnyKeyPath: Field] = [:]
    /// Whether two whole states are equal; nil if the state is not `Equatable`.
    private let stateIsUnchanged: ((S, S) -> Bool)?
    /// The task that applies committed states. Internal: tests await it.
    private(set) var updates: Task<Void, Never>?
    /// Called with each state the model receives, after applying it (or finding it unchanged). Internal:
    /// tests record and wait on it.
    var didApply: ((S) -> Void)?
    /// Test hook: called on the main actor once the model's task has found the store ready (or shut down), before it
    /// applies the first state, with the number of states its subscription (made as the model was) holds then.
    var didSubscribe: ((_ buffered: Int) -> Void)?
    /// Waits of the package's test helpers (`waitUntilShows` in KatanaTesting): resumed after each state the
    /// model applies, when its task ends, and by ``wakeApplyWaiters()``.
    private var applyWaiters: [CheckedContinuation<Void, Never>] = []

    /// Creates a model that shows `store`'s state and sends to it.
    ///
    /// The model starts with the store's current state and follows every commit from here on; it applies them on
    /// the main actor, from its next turn there.
    public convenience init(store: Store<S, D>) where S: State {
      self.init(source: store, initial: store.state)
    }

    /// Creates a model that shows a feature's slice and sends through its scope (see
    /// <doc:BuildingFeatures>).
    ///
    /// ```swift
    /// let cart = ObservableStore(scope: store.scope(\.cart, dependencies: \.cart))
    /// ```
    ///
    /// The model follows the commits that change the slice. While the scope's element or optional child is
    /// missing, it keeps showing the slice as it was last seen; missing when the model is made, it shows `S()`.
    public convenience init(scope: ScopedStore<S, D>) where S: State {
      self.init(source: scope, initial: scope.state)
    }

    /// Creates a model that shows a feature's slice and sends through its scope, for a feature state without
    /// `init()`; nil if the slice is missing now (the scope's element was removed or its optional child is nil, or
    /// the store is not ready yet).
    ///
    /// ```swift
    /// guard let row = ObservableStore(scope: store.scope(\.todos, id: id, dependencies: \.self)) else { return }
    /// ```
    ///
    /// The model follows the commits that change the slice. While the slice is missing later, it keeps showing the
    /// slice as it was last seen.
    public convenience init?(scope: ScopedStore<S, D>) {
      guard let initial = scope.stateIfPresent else { return nil }
      self.init(source: scope, initial: initial)
    }

    /// - Parameter initial: The state the source has now, read by the caller: the model shows it until it applies a
    ///   committed one.
    init(source: some ObservableStoreSource<S, D>, initial: S) {
      self.source = source
      self.stateIsUnchanged = Self.equality(\S.self)
      // Read first (the caller read `initial`), subscribe second, both here: the subscription starts at this state or
      // a newer one (see ObservableStoreSource), so the model never shows an older state after a newer one, and it
      // holds the commits made before the model's task first runs (the latest of them), so the model misses none of
      // them. (Subscribed from its task instead, a model made while its slice changed and then went missing kept the
      // slice it was made with: the observation fuzzer's open report of issues 26 to 32.)
      self.current = initial
      let subscription = source.states(buffering: .latest).subscribe()
      // Subscribed after the store shut down (since the read above, or before it): nothing will come, and the store
      // may have committed after that read, so the model shows the state it shut down with (or, for a slice missing
      // then, the one it read).
      if subscription.isExhausted, let final = source.stateIfPresent { self.current = final }
      // The task holds the model weakly, and the source only until the task ends: releasing the model cancels it,
      // which ends the wait for readiness or the subscription, which is then removed.
      updates = Task { [weak self, source] in
        defer {
          subscription.cancel()
          self?.updatesEnded = true
          self?.wakeApplyWaiters()
        }
        do {
          try await source.waitUntilReady()
        } catch StoreError.storeShutDown {
          // Shut down before the model's first turn: it applies what its subscription held, which then ends.
        } catch {
          return  // start-up failed, or the model was released
        }
        self?.didSubscribe?(subscription.bufferedCount)
        while let state = await subscription.next() {
          guard let self else { return }
          self.apply(state)
        }
      }
    }

    // MARK: - Waiting (for the package's test helpers)

    /// The store's or scope's latest committed state, which the model shows once it has caught up; nil while the
    /// scope's slice is missing.
    package var latestCommittedState: S? {
      source.stateIfPresent
    }

    /// The state the model shows, read without registering an access with Observation.
    package var untrackedState: S {
      current
    }

    /// Whether the model still follows its source: false once the store has shut down (or failed to start),
    /// after which the model keeps the last state it applied.
    package var isFollowing: Bool {
      !updatesEnded
    }

    /// Set when the model's task has ended.
    private var updatesEnded = false

    /// Returns after the model applies its next state, its task ends, or ``wakeApplyWaiters()`` is called.
    package func waitForNextApply() async {
      guard !updatesEnded else { return }
      await withCheckedContinuation { applyWaiters.append($0) }
    }

    /// Resumes every ``waitForNextApply()`` (a failsafe that expired).
    package func wakeApplyWaiters() {
      let waiters = applyWaiters
      applyWaiters = []
      for waiter in waiters {
        waiter.resume()
      }
    }

    deinit {
      updates?.cancel()
    }

    // MARK: - Reading

    /// The value at `keyPath` in the state the model shows; a view that reads it tracks `keyPath`.
    ///
    /// `model.cart` and `model.cart.total` track `\.cart`; see ``subscript(_:)`` for finer tracking.
    public subscript<T>(dynamicMember keyPath: KeyPath<S, T>) -> T {
      registrar.access(self, keyPath: field(keyPath).observed)
      return current[keyPath: keyPath]
    }

    /// The value at `keyPath` in the state the model shows; a view that reads it tracks exactly `keyPath`.
    ///
    /// `model[\.cart.items]` re-renders a view when `cart.items` changes, and not when `cart.total` does.
    public subscript<T>(_ keyPath: KeyPath<S, T>) -> T {
      registrar.access(self, keyPath: field(keyPath).observed)
      return current[keyPath: keyPath]
    }

    /// The whole state the model shows; a view that reads it tracks every change.
    public var state: S {
      self[\S.self]
    }

    // MARK: - Sending

    /// Hands a state updater to the store now, without waiting; see ``Store/send(_:)-(U)``.
    ///
    /// The model shows the new state once the commit reaches it on the main actor, in a later turn.
    @discardableResult
    public func send<U: StateUpdater>(_ updater: U) -> DispatchHandle<Void> where U.StateType == S {
      source.send(updater)
    }

    /// Hands a side effect to the store now, without waiting; see ``Store/send(_:)-(E)``.
    ///
    /// To wait for it (in `.refreshable`, for example), await the handle: `try await model.send(Load()).value`.
    @discardableResult
    public func send<E: SideEffect>(_ sideEffect: E) -> DispatchHandle<Void>
    where E.StateType == S, E.Dependencies == D {
      source.send(sideEffect)
    }

    /// Hands a returning side effect to the store now, without waiting; see ``Store/send(_:)-(R)``.
    @discardableResult
    public func send<R: ReturningSideEffect>(_ sideEffect: R) -> DispatchHandle<R.ReturnValue> {
      source.send(sideEffect)
    }

    // MARK: - Bindings

    /// A getter and setter for one field: the getter reads `keyPath` through the model (tracked), the setter
    /// sends the updater that `makeUpdater` builds from the new value.
    ///
    /// Where SwiftUI exists, `binding(_:send:)` wraps it in a SwiftUI `Binding`. Elsewhere, or to build
    /// another kind of binding:
    ///
    /// ```swift
    /// let query = model.fieldBinding(\.query) { SetQuery(text: $0) }
    /// query.set("milk")   // sends SetQuery(text: "milk")
    /// query.get()         // the model's value, "milk" once the commit has reached the model
    /// ```
    public func fieldBinding<T, U: StateUpdater>(
      _ keyPath: KeyPath<S, T>, send makeUpdater: @escaping @Sendable (T) -> U
    ) -> StoreFieldBinding<T> where U.StateType == S {
      StoreFieldBinding(
        // Through the subscript, so that the read is tracked.
        get: { self[keyPath] },
        set: { value in self.send(makeUpdater(value)) })
    }

    /// A getter and setter for one field whose setter only sets it: the getter reads `keyPath` through the model
    /// (tracked), the setter sends ``SetField`` with the new value. One updater for every field a view edits as it
    /// is, where TCA's `BindableAction` sets any field through one action.
    ///
    /// ```swift
    /// let steps = model.fieldBinding(\.stepCount)
    /// steps.set(5)   // sends SetField(\.stepCount, 5)
    /// ```
    ///
    /// Where SwiftUI exists, `binding(_:)` wraps it in a SwiftUI `Binding`.
    public func fieldBinding<T: Sendable>(_ keyPath: any WritableKeyPath<S, T> & Sendable) -> StoreFieldBinding<T> {
      fieldBinding(keyPath) { SetField(keyPath, $0) }
    }

    /// A getter and setter for one field whose setter starts work: the getter reads `keyPath` through the
    /// model (tracked), the setter sends the side effect that `makeSideEffect` builds from the new value.
    ///
    /// For a control whose change must do more than set a field, such as a checkbox that saves:
    ///
    /// ```swift
    /// let done = model.fieldBinding(\.isDone) { ToggleAndSave(isDone: $0) }
    /// done.set(true)   // sends ToggleAndSave(isDone: true), which dispatches its updater, then saves
    /// ```
    ///
    /// The field shows the new value once the side effect has dispatched the state updater that sets it and
    /// that commit has reached the model. Where SwiftUI exists, `binding(_:send:)` wraps it in a SwiftUI
    /// `Binding`.
    public func fieldBinding<T, E: SideEffect>(
      _ keyPath: KeyPath<S, T>, send makeSideEffect: @escaping @Sendable (T) -> E
    ) -> StoreFieldBinding<T> where E.StateType == S, E.Dependencies == D {
      StoreFieldBinding(
        // Through the subscript, so that the read is tracked.
        get: { self[keyPath] },
        set: { value in self.send(makeSideEffect(value)) })
    }

    // MARK: - Applying states

    /// Notifies the observers of every key path whose value differs in `new`, and shows `new`.
    private func apply(_ new: S) {
      defer {
        didApply?(new)
        wakeApplyWaiters()
      }
      let old = current
      if let stateIsUnchanged, stateIsUnchanged(old, new) { return }
      // Decided before anyone is notified: an observer's `onChange` may read through the model, which adds
      // fields.
      let changed = fields.values.compactMap { field in
        field.isUnchanged?(old, new) == true ? nil : field.observed
      }
      for observed in changed {
        registrar.willSet(self, keyPath: observed)
      }
      current = new
      for observed in changed {
        registrar.didSet(self, keyPath: observed)
      }
    }

    /// The field for `keyPath`, added on first use.
    private func field<T>(_ keyPath: KeyPath<S, T>) -> Field {
      if let field = fields[keyPath] { return field }
      let field = Field(
        observed: \ObservableStore.[field: FieldKey(path: keyPath)], isUnchanged: Self.equality(keyPath))
      fields[keyPath] = field
      return field
    }

    /// The registrar's stand-in for a key path of the state (never read).
    private subscript(field key: FieldKey) -> Void {
      ()
    }

    /// Compares the values at `keyPath` with `==` if they are `Equatable` at run time.
    private static func equality<T>(_ keyPath: KeyPath<S, T>) -> ((S, S) -> Bool)? {
      guard let equatable = T.self as? any Equatable.Type else { return nil }
      return equality(keyPath, as: equatable)
    }

    private static func equality<T, E: Equatable>(_ keyPath: KeyPath<S, T>, as _: E.Type) -> ((S, S) -> Bool)? {
      // T is E here: the cast only gives the key path its Equatable value type.
      guard let typed = keyPath as? KeyPath<S, E> else { return nil }
      return { old, new in old[keyPath: typed] == new[keyPath: typed] }
    }
  }

  /// A getter and setter for one field of an ``ObservableStore``; see
  /// ``ObservableStore/fieldBinding(_:send:)-(_,(T)->U)`` (the setter sends a state updater) and
  /// ``ObservableStore/fieldBinding(_:send:)-(_,(T)->E)`` (it starts a side effect). It keeps the model alive.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @MainActor
  public struct StoreFieldBinding<Value>: Sendable {
    private let getter: @MainActor @Sendable () -> Value
    private let setter: @MainActor @Sendable (Value) -> Void

    init(get: @escaping @MainActor @Sendable () -> Value, set: @escaping @MainActor @Sendable (Value) -> Void) {
      self.getter = get
      self.setter = set
    }

    /// The field's value in the state the model shows (a tracked read).
    public func get() -> Value {
      getter()
    }

    /// Sends the updater built from `value`.
    public func set(_ value: Value) {
      setter(value)
    }
  }
#endif
