/// A side effect whose context type is only known at run time.
///
/// Prefer ``SideEffect`` or ``ReturningSideEffect``, which implement this requirement for you.
public protocol AnySideEffect: Dispatchable {
  /// Runs the side effect and returns its value (`()` for side effects that return nothing).
  ///
  /// - Throws: The side effect's error; ``StoreError/wrongContextType(expected:actual:)`` when the context
  ///   does not match what the side effect needs.
  nonisolated(nonsending) func anySideEffect(_ context: any AnySideEffectContext) async throws -> any Sendable
}

/// Asynchronous logic tied to a store's state and dependencies: network calls, disk access, timers, and
/// dispatching further items.
///
/// ```swift
/// struct SyncTodos: SideEffect {
///   func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
///     try await context.dispatch(SetSyncing(true))
///     let todos = try await context.dependencies.api.fetchTodos()
///     try await context.dispatch(ReplaceTodos(todos))
///   }
/// }
///
/// try await store.dispatch(SyncTodos())  // returns when the body returns, rethrows its error
/// ```
///
/// Side effects run concurrently with each other and with state updaters. `store.dispatch` runs the body
/// in the calling task: cancelling the caller cancels the body (cooperatively), and the body's error reaches
/// the caller unchanged.
///
/// A synchronous `sideEffect` also satisfies this requirement, which is how Katana 6 side effects keep
/// compiling.
///
/// The requirement is `nonisolated(nonsending)`: the store calls it on the caller's executor, and an
/// implementation's own isolation decides where its body runs. A plain `async` implementation runs on the
/// global concurrent executor, as usual; a synchronous one runs where it is called.
public protocol SideEffect: AnySideEffect {
  /// The state of the store this side effect runs in.
  associatedtype StateType: FeatureState
  /// The dependency container of the store this side effect runs in.
  associatedtype Dependencies: SideEffectDependencyContainer

  /// The side effect's logic.
  nonisolated(nonsending) func sideEffect(_ context: SideEffectContext<StateType, Dependencies>) async throws
}

/// A side effect that returns a value to whoever dispatched it.
///
/// ```swift
/// struct CountRemote: ReturningSideEffect {
///   func sideEffect(_ context: any AnySideEffectContext) async throws -> Int {
///     let context = try context.typed(AppState.self, AppDependencies.self)
///     return try await context.dependencies.api.count()
///   }
/// }
///
/// let count = try await store.dispatch(CountRemote())
/// ```
///
/// The context is type-erased so that libraries can ship returning side effects that work with any store;
/// use ``AnySideEffectContext/typed(_:_:)`` to get the typed context back.
public protocol ReturningSideEffect: AnySideEffect {
  /// The type of the value this side effect returns.
  associatedtype ReturnValue: Sendable

  /// The side effect's logic. Called like ``SideEffect/sideEffect(_:)``.
  nonisolated(nonsending) func sideEffect(_ context: any AnySideEffectContext) async throws -> ReturnValue
}

extension SideEffect {
  /// Casts the context to ``SideEffectContext``<`StateType`, `Dependencies`> and runs
  /// ``sideEffect(_:)``.
  ///
  /// - Throws: ``StoreError/wrongContextType(expected:actual:)`` if the store's state or dependency types
  ///   differ from this side effect's, then whatever the side effect throws.
  public nonisolated(nonsending) func anySideEffect(_ context: any AnySideEffectContext) async throws
    -> any Sendable
  {
    guard let typed = context as? SideEffectContext<StateType, Dependencies> else {
      throw StoreError.wrongContextType(
        expected: String(reflecting: SideEffectContext<StateType, Dependencies>.self),
        actual: String(reflecting: type(of: context)))
    }
    try await sideEffect(typed)
    return ()
  }
}

extension ReturningSideEffect {
  /// Runs ``sideEffect(_:)`` and returns its value.
  public nonisolated(nonsending) func anySideEffect(_ context: any AnySideEffectContext) async throws
    -> any Sendable
  {
    try await sideEffect(context)
  }
}
