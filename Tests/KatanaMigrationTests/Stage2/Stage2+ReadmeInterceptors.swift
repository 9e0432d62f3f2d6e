import Katana

// Katana 6 README, sections "DispatchableLogger", "ObserverInterceptor" and "Signpost Logger", after stage
// 2: the same interceptors, in a store with the default configuration.

extension Stage2 {
  struct NotToLog: StateUpdater {
    func updateState(_ state: inout CounterState) {}
  }

  struct StartCounter: StateUpdater, OnStartObserverDispatchable {
    func updateState(_ state: inout CounterState) {
      state.counter = 100
    }
  }

  static func storeWithLoggerAndObserver() -> Store<CounterState, AppDependencies> {
    // MIGRATION-SNIPPET-BEGIN: stage2-built-in-interceptors
    let store = Store<CounterState, AppDependencies>(interceptors: [
      DispatchableLogger.interceptor(blackList: [NotToLog.self]),
      ObserverInterceptor.observe([.onStart([StartCounter.self])]),
      SignpostLogger.interceptor(),
    ])
    // MIGRATION-SNIPPET-END: stage2-built-in-interceptors
    return store
  }
}
