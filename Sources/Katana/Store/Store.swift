/// Keeps the whole state of an application and changes it, one ``StateUpdater`` at a time.
///
/// ```swift
/// let store = Store<AppState, AppDependencies>()
/// try await store.dispatch(AddTodo(title: "milk"))   // returns once the change is committed
/// let count = try await store.dispatch(CountRemote())  // a ReturningSideEffect's value
/// print(store.state.todos)                            // synchronous, from anywhere
/// ```
///
/// ## Ordering
/// State updaters are applied one at a time, in the order they enter the store's mailbox: at the call for
/// ``send(_:)-(U)``, on arrival for an awaited ``dispatch(_:)-(U)``. Task priority never
/// reorders them. A store's interceptors run for each updater while it holds its turn. Side effects run
/// concurrently with each other and with updaters.
///
/// ## Isolation
/// `Store` is an actor: a `Sendable` reference with serialised lifecycle. Its dispatch APIs are
/// `nonisolated` on purpose. They run on the caller's executor (a `@MainActor` caller stays on the main
/// actor) and order work through the store's mailbox under a short lock, because an actor's job queue may be
/// reordered by priority, and because a hop costs more than applying an updater.
///
/// Helpers you add in an extension of `Store` are isolated to the actor unless you say otherwise: calling
/// one needs `await` and hops to the actor, which buys nothing (the store's state is behind its own lock).
/// Mark them `nonisolated`, as the store's own API is, and an `async` one `nonisolated(nonsending)`, so that
/// it runs on its caller's executor and a synchronous one is callable from synchronous code:
///
/// ```swift
/// extension Store where S == AppState, D == AppDependencies {
///   nonisolated var userName: String? { state.user?.name }
///
///   nonisolated(nonsending) func signIn(_ credentials: Credentials) async throws -> User {
///     try await dispatch(SignIn(credentials))
///   }
/// }
/// ```
///
/// ## Lifetime
/// The store starts asynchronously (see
/// ``init(interceptors:stateInitializer:dependenciesInitializer:configuration:)``); dispatches made earlier
/// wait, in order. ``shutdown()``, or releasing the store, cancels the work it owns, finishes its streams,
/// and makes later dispatches throw ``StoreError/storeShutDown``.
public actor Store<S: State, D: SideEffectDependencyContainer> {
  /// Builds the dependency container when the store is created.
  ///
  /// - Parameters:
  ///   - dispatch: Dispatches to the store. Safe to keep: it does not keep the store alive.
  ///   - getState: Returns the store's latest committed state.
  public typealias DependenciesInitializer = (
    _ dispatch: @escaping AnyDispatch, _ getState: @escaping @Sendable () -> S
  ) -> D

  /// Produces a store's initial state; see ``init(interceptors:stateInitializer:dependenciesInitializer:configuration:)``.
  ///
  /// It runs in the store's start-up task, off any actor; a `@MainActor` closure runs on the main actor.
  public typealias StateInitializer = @Sendable () async throws -> S

  /// Settings of a store; see ``StoreConfiguration``.
  public typealias Configuration = StoreConfiguration

  @usableFromInline nonisolated let core: StoreCore<S, D>

  /// The store's dependency container, the same instance every side effect gets.
  public nonisolated let dependencies: D

  /// Creates a store.
  ///
  /// The store is usable at once: dispatches made before it is ready wait, and keep their order. Start-up
  /// then runs in a task the store owns:
  /// 1. `stateInitializer` produces the initial state (until then ``state`` is `S()`);
  /// 2. the interceptors are initialised, in array order, with the store's context;
  /// 3. the store becomes ready (``isReady``), and runs what waited, in order.
  ///
  /// - Parameters:
  ///   - interceptors: Functions that see every dispatch, first one first; see ``StoreInterceptor``.
  ///   - stateInitializer: Produces the initial state, for example by loading it from disk. If it throws,
  ///     the store never becomes ready and every dispatch fails with ``StoreError/startupFailed(_:)``.
  ///     It must not wait for a dispatch to this store (that throws ``StoreError/deadlock(_:)``). It runs
  ///     in the store's start-up task, off any actor; mark it `@MainActor` if it needs the main actor.
  ///   - dependenciesInitializer: Builds the dependency container, synchronously, here in `init`. It may
  ///     keep the `dispatch` closure and use it, including right away from a task it starts. It is a
  ///     `sending` parameter: the store takes it over, so a closure written in `@MainActor` code (a SwiftUI
  ///     `App`, a `@MainActor` test) compiles as it does in nonisolated code, while the closure, which is
  ///     not `@Sendable`, may still capture and mutate local variables (as Katana 6 code does).
  ///   - configuration: Other settings.
  @inlinable
  public init(
    interceptors: [StoreInterceptor] = [],
    stateInitializer: @escaping StateInitializer,
    dependenciesInitializer: sending DependenciesInitializer,
    configuration: Configuration = .init()
  ) {
    self.init(
      interceptors: interceptors, start: .initializer(stateInitializer),
      dependenciesInitializer: dependenciesInitializer, configuration: configuration)
  }

  /// How a store gets its initial state.
  @usableFromInline
  enum Start {
    /// From a value: the store holds it, and is ready, when its initialiser returns.
    case value(S)
    /// From an initializer, run in the store's start-up task.
    case initializer(StateInitializer)
  }

  @inlinable
  init(
    interceptors: [StoreInterceptor], start: Start, dependenciesInitializer: sending DependenciesInitializer,
    configuration: Configuration
  ) {
    let initialState: S
    if case .value(let value) = start { initialState = value } else { initialState = S() }
    var interceptors = interceptors
    let hasInterceptors = !interceptors.isEmpty || !configuration.dispatchInterceptors.isEmpty
    if configuration.forcesPlainPath && !hasInterceptors {
      interceptors = [{ _ in { next in { item in try await next(item) } } }]
    }
    let core = StoreCore<S, D>(
      initialState: initialState, hasInterceptors: hasInterceptors || !interceptors.isEmpty,
      configuration: configuration)
    let dependencies = dependenciesInitializer(
      { [weak core] item in
        guard let core else { throw StoreError.storeShutDown }
        return try await core.anyDispatch(item)
      },
      { [weak core] in core?.state ?? S() })
    core.setDependencies(dependencies)
    self.core = core
    self.dependencies = dependencies
    // The chain's final `next` is made here, where this initializer is specialised for the client's types,
    // so that what interceptors hand on is handled by specialised code (made inside the module, it ran
    // unspecialised: about 1.6 µs more per intercepted dispatch).
    switch start {
    case .value:
      core.startNow(interceptors: interceptors, chainEnd: core.makeChainEnd())
    case .initializer(let stateInitializer):
      core.start(stateInitializer: stateInitializer, interceptors: interceptors, chainEnd: core.makeChainEnd())
    }
  }

  /// Creates a store that holds `initialState`, and is ready when this returns, with its dependency container
  /// built by `dependenciesInitializer`. The package's test store starts its store this way: no test then
  /// sees it starting (a side effect of another test store dispatching to it would wait for its start-up).
  @inlinable
  package init(
    initialState: S, interceptors: [StoreInterceptor], dependenciesInitializer: sending DependenciesInitializer,
    configuration: Configuration
  ) {
    self.init(
      interceptors: interceptors, start: .value(initialState), dependenciesInitializer: dependenciesInitializer,
      configuration: configuration)
  }

  /// Creates a store whose dependency container is built with its required initializer.
  ///
  /// See ``init(interceptors:stateInitializer:dependenciesInitializer:configuration:)``.
  @inlinable
  public init(
    interceptors: [StoreInterceptor] = [],
    stateInitializer: @escaping StateInitializer,
    configuration: Configuration = .init()
  ) {
    self.init(
      interceptors: interceptors,
      stateInitializer: stateInitializer,
      dependenciesInitializer: { dispatch, getState in D(dispatch: dispatch, getState: { getState() }) },
      configuration: configuration)
  }

  /// Creates a store that starts from `initialState`.
  ///
  /// The store holds `initialState`, and is ready (``isReady``), when this initialiser returns: ``state``,
  /// observers added then, and dispatches see it at once. Its interceptors are initialised here, in array
  /// order. Otherwise as ``init(interceptors:stateInitializer:dependenciesInitializer:configuration:)``.
  @inlinable
  public init(
    initialState: S,
    interceptors: [StoreInterceptor] = [],
    configuration: Configuration = .init()
  ) {
    self.init(
      interceptors: interceptors, start: .value(initialState),
      dependenciesInitializer: { dispatch, getState in D(dispatch: dispatch, getState: { getState() }) },
      configuration: configuration)
  }

  /// Creates a store that starts from `initialState`, with a dependency container built beforehand.
  ///
  /// For tests and previews, which hand the store a container of stubs:
  ///
  /// ```swift
  /// let store = Store(initialState: AppState(), dependencies: AppDependencies(api: StubAPI()))
  /// ```
  ///
  /// The container's required `init(dispatch:getState:)` is not called, so the container has no `dispatch`
  /// closure of this store: its side effects dispatch through their context. The store holds `initialState`,
  /// and is ready, when this initialiser returns; see ``init(initialState:interceptors:configuration:)``.
  @inlinable
  public init(
    initialState: S,
    dependencies: D,
    interceptors: [StoreInterceptor] = [],
    configuration: Configuration = .init()
  ) {
    self.init(
      interceptors: interceptors, start: .value(initialState), dependenciesInitializer: { _, _ in dependencies },
      configuration: configuration)
  }

  /// Creates a store with the given interceptors that starts from the empty state `S()`.
  @inlinable
  public init(interceptors: [StoreInterceptor]) {
    self.init(interceptors: interceptors, stateInitializer: { S() })
  }

  /// Creates a store with the given interceptors and configuration that starts from the empty state `S()`.
  @inlinable
  public init(interceptors: [StoreInterceptor] = [], configuration: Configuration) {
    self.init(interceptors: interceptors, stateInitializer: { S() }, configuration: configuration)
  }

  /// Creates a store with no interceptors that starts from the empty state `S()`.
  @inlinable
  public init() {
    self.init(interceptors: [])
  }

  deinit {
    if core.isInsideUpdater {
      // Released from inside a state updater, whose thread holds the store's lock: shut down once it is
      // released.
      Task.detached { [core] in core.shutdown() }
    } else {
      core.shutdown()
    }
  }

  // MARK: - State and lifecycle

  /// The latest committed state: a synchronous, thread-safe snapshot, readable from any context without
  /// `await`.
  ///
  /// Before the store is ready this is the empty state `S()`.
  ///
  /// - Important: A snapshot you keep shares storage with the store's state, so the next update that
  ///   mutates that storage copies it once. Read what you need rather than keeping the whole state around.
  ///   Reading it from inside a state updater returns `S()` (and prints a warning): updaters must use their
  ///   `inout` parameter.
  @inlinable
  public nonisolated var state: S {
    core.state
  }

  /// Whether the store has finished starting and runs dispatches.
  ///
  /// False while the state initializer runs, and after a failed start-up or shutdown.
  public nonisolated var isReady: Bool {
    core.isReady
  }

  /// Returns once the store is ready.
  ///
  /// - Throws: ``StoreError/startupFailed(_:)`` if the state initializer threw, ``StoreError/storeShutDown``
  ///   if the store shut down first, `CancellationError` if the calling task is cancelled meanwhile.
  public nonisolated(nonsending) func waitUntilReady() async throws {
    try await core.waitUntilReady()
  }

  /// Shuts the store down and waits for the work it owns to stop.
  ///
  /// Afterwards every dispatch throws ``StoreError/storeShutDown`` and ``state`` keeps its last value.
  /// Shutting down:
  /// - fails every dispatch still waiting in the mailbox with ``StoreError/storeShutDown``;
  /// - cancels the tasks the store owns (items handed over with `send`, the start-up task) and waits for
  ///   them to return, except the calling task itself if it is one of them;
  /// - finishes every stream and drops every listener and interceptor.
  ///
  /// Side effects that callers await run in the callers' tasks, so shutdown does not cancel them; their
  /// later dispatches throw. Calling `shutdown()` again does nothing. Releasing the store shuts it down too,
  /// without waiting.
  public nonisolated(nonsending) func shutdown() async {
    guard core.shutdown() else { return }
    await core.waitUntilOwnedTasksEnd()
  }
}

// MARK: - Package-level hooks (KatanaTesting, KatanaPromises)

extension Store {
  /// Returns once nothing is in flight; requires `StoreConfiguration.tracksActivity`.
  package nonisolated(nonsending) func waitUntilIdle() async throws {
    try await core.waitUntilIdle()
  }

  /// The amount of in-flight work; requires `StoreConfiguration.tracksActivity`.
  package nonisolated var activeWork: Int {
    core.activeWork
  }

  /// The tasks that carry the in-flight work, followed through the effect tools' hand-offs; nil if some piece
  /// of work has no known carrier yet, or if one of `tasks` carries no piece of work itself (a task that has
  /// left the store, its dispatch returned, is busy, whatever the store's other work does). Requires
  /// `StoreConfiguration.tracksActivity`.
  package nonisolated func activityCarriers(inside tasks: [TaskIdentity]) -> [TaskIdentity]? {
    core.activityCarriers(inside: tasks)
  }

  /// The number of tasks the store owns and has not seen finish.
  package nonisolated var ownedTaskCount: Int {
    core.ownedTaskCount
  }

  /// The per-store object of type `T`, created on first use; nil once the store has shut down.
  package nonisolated func attachment<T: AnyObject & Sendable>(_ type: T.Type, make: () -> T) -> T? {
    core.attachment(type, make: make)
  }
}

#if KATANA_CONTENTION_COUNTERS
  extension Store {
    /// What the store's lock went through so far; only in a build with `KATANA_CONTENTION_COUNTERS` defined (the
    /// contention gate's build of katana-benchmarks).
    package nonisolated var contentionCounts: ContentionCounts { core.contentionCounts }
  }
#endif
