import Foundation
import KatanaPromises

// Katana 6 README, sections "Interceptors", "DispatchableLogger", "ObserverInterceptor" and "Signpost
// Logger".
//
// Stage-1 steps applied:
// - `import Katana` -> `import KatanaPromises`;
// - `Store<CounterState>(interceptor: [...])` (a stale README line: Katana 6's initializer takes both
//   generic types and `interceptors:`) -> `Store<CounterState, AppDependencies>(interceptors: [...],
//   stateInitializer: ..., configuration: .katana6)`;
// - `SignpostLogger.isEnabled = true` -> `SignpostLogger.interceptor()` in the store's interceptors.
// `DispatchableLogger.interceptor(blackList:)` and `ObserverInterceptor.observe(_:)` compile unchanged.
//
// Added: the README's `.onStart` list is empty; `StartCounter` fills it, so that the test can see it run.

extension Stage1 {
  struct NotToLog: StateUpdater {
    func updateState(_ state: inout CounterState) {}
  }

  // MIGRATION-SNIPPET-BEGIN: stage1-on-start-item
  struct StartCounter: StateUpdater, OnStartObserverDispatchable {
    func updateState(_ state: inout CounterState) {
      state.counter = 100
    }
  }
  // MIGRATION-SNIPPET-END: stage1-on-start-item

  static func storeWithLogger() -> Store<CounterState, AppDependencies> {
    // MIGRATION-SNIPPET-BEGIN: stage1-logger
    let dispatchableLogger = DispatchableLogger.interceptor(blackList: [NotToLog.self])
    let store = Store<CounterState, AppDependencies>(
      interceptors: [dispatchableLogger], stateInitializer: { CounterState() }, configuration: .katana6)
    // MIGRATION-SNIPPET-END: stage1-logger
    return store
  }

  static func storeWithObserver() -> Store<CounterState, AppDependencies> {
    // MIGRATION-SNIPPET-BEGIN: stage1-observer
    let observerInterceptor = ObserverInterceptor.observe([
      .onStart([
        // list of dispatchable items dispatched when the store is initialized
        StartCounter.self
      ])
    ])

    let store = Store<CounterState, AppDependencies>(
      interceptors: [observerInterceptor], stateInitializer: { CounterState() }, configuration: .katana6)
    // MIGRATION-SNIPPET-END: stage1-observer
    return store
  }

  static func storeWithSignposts() -> Store<CounterState, AppDependencies> {
    // MIGRATION-SNIPPET-BEGIN: stage1-signposts
    // Katana 6: SignpostLogger.isEnabled = true, before creating the store
    let store = Store<CounterState, AppDependencies>(
      interceptors: [SignpostLogger.interceptor()], stateInitializer: { CounterState() }, configuration: .katana6)
    // MIGRATION-SNIPPET-END: stage1-signposts
    return store
  }
}
