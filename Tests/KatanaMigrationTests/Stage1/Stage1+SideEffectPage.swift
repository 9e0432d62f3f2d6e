import KatanaPromises

// Katana 6 reference page of `SideEffect`: the `AppSideEffect` helper protocol ("App Tips & Tricks"), and
// the two patterns the page describes, a synchronous side effect (blocks in `Hydra.await` until its work is
// done: "the default approach") and an asynchronous one (starts work and returns: "not suggested").
//
// Stage-1 steps applied: `import Katana`/`import Hydra` -> `import KatanaPromises`; the page's `AppState`
// and `DependenciesContainer` are this target's `CounterState` and `AppDependencies`. The protocol compiles
// unchanged. The page describes the two patterns in prose only; `AddRandomNumber` and
// `AddRandomNumberLater` are written for it.

extension Stage1 {
  // MIGRATION-SNIPPET-BEGIN: stage1-app-side-effect
  /// assuming `AppState` is the type of your application's state and `DependenciesContainer` is the
  /// container of your dependencies
  protocol AppSideEffect: SideEffect where StateType == CounterState, Dependencies == AppDependencies {}
  // MIGRATION-SNIPPET-END: stage1-app-side-effect

  // MIGRATION-SNIPPET-BEGIN: stage1-sync-and-async-side-effects
  /// Synchronous: the dispatch promise resolves once the counter is updated.
  struct AddRandomNumber: AppSideEffect {
    func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) throws {
      let number = try Hydra.await(context.dependencies.APIManager.getRandomNumber())
      let counter = context.getState().counter
      try Hydra.await(context.dispatch(SetCounter(newValue: counter + number)))
    }
  }

  /// Asynchronous: the dispatch promise resolves at once; the counter changes later.
  struct AddRandomNumberLater: AppSideEffect {
    func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) throws {
      context.dependencies.APIManager.getRandomNumber()
        .then(in: .background) { number in
          context.dispatch(SetCounter(newValue: context.getState().counter + number))
        }
    }
  }
  // MIGRATION-SNIPPET-END: stage1-sync-and-async-side-effects
}
