import KatanaPromises

// Katana 6 README, section "Overview": the state, a state updater, creating the store, dispatching, and a
// listener.
//
// Stage-1 steps applied (MIGRATION.md, "Stage 1"):
// - `import Katana` -> `import KatanaPromises`;
// - `Store<CounterState, AppDependencies>()` -> `Store<CounterState, AppDependencies>(configuration:
//   .katana6)`;
// - `store.addListener() { ... }` -> `store.addListener { ... }` (this repository's formatter; both compile).
// `State`, `StateUpdater`, `store.dispatch(_:)` from synchronous code and `addListener` compile unchanged.

extension Stage1 {
  // MIGRATION-SNIPPET-BEGIN: stage1-state
  struct CounterState: State {
    var counter: Int = 0
  }

  struct IncrementCounter: StateUpdater {
    func updateState(_ state: inout CounterState) {
      state.counter += 1
    }
  }
  // MIGRATION-SNIPPET-END: stage1-state

  /// The README's top-level code, as synchronous app code (a view controller's, say) would run it.
  static func overview() -> Store<CounterState, AppDependencies> {
    // MIGRATION-SNIPPET-BEGIN: stage1-store
    // ignore AppDependencies for the time being, it will be explained later on
    let store = Store<CounterState, AppDependencies>(configuration: .katana6)
    store.dispatch(IncrementCounter())

    store.addListener { oldState, newState in
      // the app state has changed
    }
    // MIGRATION-SNIPPET-END: stage1-store
    return store
  }
}
