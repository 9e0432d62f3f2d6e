import Katana

// Katana 6 README, section "Overview", after stage 2: the store uses the default configuration, and the
// dispatch is awaited.
//
// Stage-2 steps applied: `import Katana` (KatanaPromises is no longer needed); `configuration: .katana6`
// dropped; `store.dispatch(x)` -> `try await store.dispatch(x)` in async code, `store.send(x)` in
// synchronous code; `CounterState` is `Equatable`, which KatanaTesting's `TestStore` needs.

extension Stage2 {
  // MIGRATION-SNIPPET-BEGIN: stage2-state
  struct CounterState: State, Equatable {
    var counter: Int = 0
  }

  struct IncrementCounter: StateUpdater {
    func updateState(_ state: inout CounterState) {
      state.counter += 1
    }
  }
  // MIGRATION-SNIPPET-END: stage2-state

  /// The README's top-level code, in async code.
  static func overview() async throws -> Store<CounterState, AppDependencies> {
    // MIGRATION-SNIPPET-BEGIN: stage2-store
    let store = Store<CounterState, AppDependencies>()
    store.addListener { oldState, newState in
      // the app state has changed: called on the committing thread, before that dispatch returns
    }

    try await store.dispatch(IncrementCounter())  // returns once the change is committed and listeners ran
    // MIGRATION-SNIPPET-END: stage2-store
    return store
  }

  /// The same, from synchronous code (a button action, say).
  static func incrementFromSynchronousCode(_ store: Store<CounterState, AppDependencies>) -> DispatchHandle<Void> {
    // MIGRATION-SNIPPET-BEGIN: stage2-send
    let handle = store.send(IncrementCounter())  // queued now, in call order; the store owns the work
    // later, if the outcome matters: try await handle.value
    // MIGRATION-SNIPPET-END: stage2-send
    return handle
  }
}
