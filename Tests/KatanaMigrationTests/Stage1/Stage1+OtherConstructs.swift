import Dispatch
import KatanaPromises

// Katana 6 constructs that MIGRATION.md covers and the two seed pages do not show: a synchronous interceptor,
// `PartialStore`, a listener that updates UI, a custom `Store.Configuration`, and dispatching from a
// dependency. Written as Katana 6 code would have been, then migrated with the stage-1 steps:
// - `-> StoreInterceptor` -> `-> SynchronousStoreInterceptor`, and the store gets
//   `synchronousInterceptor(...)`;
// - `PartialStore<S>` from an upcast of the store -> `PartialStore(store)`;
// - listeners are `@Sendable`: UI code runs inside `MainActor.assumeIsolated` (the `.katana6` listeners run on
//   the main queue);
// - `Store.Configuration(...)` compiles unchanged; a custom `Executor` takes `@Sendable` closures and drops
//   `executeSync`;
// - a dependency's `AnyDispatch` property -> `PromiseDispatch` (see `Stage1+ReadmeDependencies.swift`).

extension Stage1 {
  /// Where the analytics interceptor sends events.
  protocol Tracker: Sendable {
    func track(_ event: String)
  }

  struct CounterLimitReached: Error, Equatable {}

  // MIGRATION-SNIPPET-BEGIN: stage1-interceptor
  enum AnalyticsInterceptor {
    static func interceptor(tracker: any Tracker) -> SynchronousStoreInterceptor {
      return { context in
        return { next in
          return { dispatchable in
            try next(dispatchable)
            tracker.track(dispatchable.debugDescription)
          }
        }
      }
    }
  }

  enum CounterLimitInterceptor {
    static func interceptor(limit: Int) -> SynchronousStoreInterceptor {
      return { context in
        return { next in
          return { dispatchable in
            let state = context.getAnyState() as? CounterState
            if dispatchable is IncrementCounter, let state, state.counter >= limit {
              throw CounterLimitReached()
            }
            try next(dispatchable)
          }
        }
      }
    }
  }
  // MIGRATION-SNIPPET-END: stage1-interceptor

  static func storeWithInterceptors(tracker: any Tracker) -> Store<CounterState, AppDependencies> {
    // MIGRATION-SNIPPET-BEGIN: stage1-interceptor-store
    let store = Store<CounterState, AppDependencies>(
      interceptors: [
        synchronousInterceptor(AnalyticsInterceptor.interceptor(tracker: tracker)),
        synchronousInterceptor(CounterLimitInterceptor.interceptor(limit: 2)),
      ],
      stateInitializer: { CounterState() },
      configuration: .katana6)
    // MIGRATION-SNIPPET-END: stage1-interceptor-store
    return store
  }

  // MIGRATION-SNIPPET-BEGIN: stage1-partial-store
  final class CounterViewModel {
    let store: PartialStore<CounterState>

    init(store: PartialStore<CounterState>) {
      self.store = store
    }

    var counterText: String {
      "\(store.state.counter)"
    }

    func increment() {
      store.dispatch(IncrementCounter())
    }
  }
  // MIGRATION-SNIPPET-END: stage1-partial-store

  static func makeViewModel(store: Store<CounterState, AppDependencies>) -> CounterViewModel {
    // MIGRATION-SNIPPET-BEGIN: stage1-partial-store-use
    let viewModel = CounterViewModel(store: PartialStore(store))
    // MIGRATION-SNIPPET-END: stage1-partial-store-use
    return viewModel
  }

  /// Stands in for a label of a UI framework: main-actor isolated.
  @MainActor final class CounterLabel {
    var text = ""
  }

  @MainActor static func bind(_ label: CounterLabel, to store: Store<CounterState, AppDependencies>)
    -> StoreUnsubscribe
  {
    // MIGRATION-SNIPPET-BEGIN: stage1-listener-ui
    let unsubscribe = store.addListener { oldState, newState in
      MainActor.assumeIsolated {
        label.text = "\(newState.counter)"
      }
    }
    // MIGRATION-SNIPPET-END: stage1-listener-ui
    return unsubscribe
  }

  static func storeWithListenerQueue(_ listenerQueue: DispatchQueue) -> Store<CounterState, AppDependencies> {
    // MIGRATION-SNIPPET-BEGIN: stage1-configuration
    let configuration = Store<CounterState, AppDependencies>.Configuration(
      stateInitializerAsyncProvider: DispatchQueue.main,
      listenersAsyncProvider: listenerQueue)
    let store = Store<CounterState, AppDependencies>(
      interceptors: [], stateInitializer: { CounterState() }, configuration: configuration)
    // MIGRATION-SNIPPET-END: stage1-configuration
    return store
  }

  // MIGRATION-SNIPPET-BEGIN: stage1-executor
  struct QueueExecutor: Executor {
    let queue: DispatchQueue

    func execute(_ closure: @escaping @Sendable () -> Void) {
      queue.async(execute: closure)
    }
  }
  // MIGRATION-SNIPPET-END: stage1-executor

  static func storeWithListenerExecutor(_ executor: QueueExecutor) -> Store<CounterState, AppDependencies> {
    Store<CounterState, AppDependencies>(
      interceptors: [], stateInitializer: { CounterState() },
      configuration: Store<CounterState, AppDependencies>.Configuration(listenersAsyncProvider: executor))
  }
}
