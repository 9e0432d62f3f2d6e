import Dispatch
import Katana

extension StoreConfiguration {
  /// Katana 6's defaults, for a store whose code still uses promises and blocking waits.
  ///
  /// The same as ``init(stateInitializerAsyncProvider:listenersAsyncProvider:)`` with the main queue for
  /// both: the state initializer runs on the main queue, listeners run asynchronously on the main queue
  /// (a `then` on the main context after a dispatch sees them done), and every side effect runs on a
  /// thread of its own, where a synchronous body may block in ``Hydra/await(in:_:)-(Context?,Promise<T>)``.
  ///
  /// ```swift
  /// let store = Store<AppState, AppDependencies>(
  ///   interceptors: [], stateInitializer: AppState.init, configuration: .katana6)
  /// ```
  ///
  /// Once every side effect of the store is `async` and no listener relies on the main queue, drop it: the
  /// default configuration runs side effects on the cooperative pool and listeners synchronously on the
  /// committing thread, which is faster.
  public static var katana6: StoreConfiguration {
    StoreConfiguration(stateInitializerAsyncProvider: DispatchQueue.main, listenersAsyncProvider: DispatchQueue.main)
  }

  /// Katana 6's `Store.Configuration`: where the state initializer and the listeners run.
  ///
  /// - The state initializer runs on `stateInitializerAsyncProvider` (Katana 6's default was the main
  ///   queue), still asynchronously: the store is usable at once and becomes ready later.
  /// - Each listener call is handed to `listenersAsyncProvider` (Katana 6's default was the main queue), in
  ///   commit order. A dispatch completes once its listener calls are handed over, not once they have run,
  ///   so a listener's new state may be older than `store.state`. As in Katana 6, once a listener is
  ///   removed on its executor, it is not called again; unlike Katana 6, each call goes to the listeners
  ///   registered at commit time (a listener added later does not get earlier changes). Streams
  ///   (`states()`, `values(of:)`) are not affected.
  /// - Side effects run on threads of their own, one per running side effect, outside Swift's cooperative
  ///   pool and outside Dispatch: Katana 6's synchronous side effects block their thread in `Hydra.await`,
  ///   and 32 of them blocking at once would otherwise starve the pool (and, above 255, Dispatch's thread
  ///   limit on Linux). `async` side effects work there too, a little slower.
  /// - The store's own work (applying sent updaters, starting sent side effects) runs on a few threads of its
  ///   own too, so that Katana 6 code blocking Dispatch's worker threads (an `OperationQueue` waiting in
  ///   `Hydra.await`) never delays it; on Linux those threads are otherwise shared with Swift's tasks.
  ///
  /// - Parameters:
  ///   - stateInitializerAsyncProvider: Where the state initializer runs.
  ///   - listenersAsyncProvider: Where listeners run. It must run closures one at a time, in order.
  public init(stateInitializerAsyncProvider: any Executor, listenersAsyncProvider: any Executor) {
    self.init()
    // Read once: the store then takes the same path for its whole life, wherever its tasks are started from.
    let forcesFallbacks = TaskExecutorFallbacks.areForced
    sideEffectRunner = LegacySideEffectRunner(forcesFallbacks: forcesFallbacks)
    ownedTaskStarter = Self.legacyOwnedTaskStarter(forcingFallbacks: forcesFallbacks)
    sideEffectTaskStarter = Self.legacySideEffectTaskStarter(forcingFallbacks: forcesFallbacks)
    stateInitializerRunner = ExecutorRunner(executor: stateInitializerAsyncProvider)
    listenerExecutor = { call in listenersAsyncProvider.execute(call) }
  }

  /// Katana 6's `Store.Configuration` with listeners on the main queue; see
  /// ``init(stateInitializerAsyncProvider:listenersAsyncProvider:)``.
  public init(stateInitializerAsyncProvider: any Executor) {
    self.init(stateInitializerAsyncProvider: stateInitializerAsyncProvider, listenersAsyncProvider: DispatchQueue.main)
  }

  /// Katana 6's `Store.Configuration` with the state initializer on the main queue; see
  /// ``init(stateInitializerAsyncProvider:listenersAsyncProvider:)``.
  public init(listenersAsyncProvider: any Executor) {
    self.init(stateInitializerAsyncProvider: DispatchQueue.main, listenersAsyncProvider: listenersAsyncProvider)
  }
}

extension StoreConfiguration {
  /// Starts a `.katana6` store's own tasks on ``LegacyTaskExecutor`` (see ``LegacyTasks``).
  fileprivate static func legacyOwnedTaskStarter(
    forcingFallbacks: Bool
  ) -> @Sendable (_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
    { operation in LegacyTasks.startDetached(forcingFallbacks: forcingFallbacks, operation) }
  }

  /// Starts the tasks of a `.katana6` store's sent side effects on ``BlockingTaskExecutor``, where their
  /// bodies run in place (see ``LegacySideEffectRunner``); like the other tasks where the platform has no task
  /// executors, or while ``TaskExecutorFallbacks/areForced`` is true.
  fileprivate static func legacySideEffectTaskStarter(
    forcingFallbacks: Bool
  ) -> @Sendable (_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
    { operation in
      if !forcingFallbacks, #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
        return BlockingTaskExecutor.startDetached(operation)
      }
      return LegacyTasks.startDetached(forcingFallbacks: forcingFallbacks, operation)
    }
  }
}
