import Katana

// Katana 6 reference page of `SideEffect`, after stage 2: the helper protocol is unchanged; the synchronous
// pattern becomes an `async` body that awaits; the asynchronous ("fire and forget") pattern hands the work
// to the store with `context.send`, which owns it (shutdown cancels it) instead of leaving a promise chain
// running on its own.

extension Stage2 {
  /// assuming `AppState` is the type of your application's state and `DependenciesContainer` is the
  /// container of your dependencies
  protocol AppSideEffect: SideEffect where StateType == CounterState, Dependencies == AppDependencies {}

  // MIGRATION-SNIPPET-BEGIN: stage2-sync-and-async-side-effects
  /// Returns once the counter is updated.
  struct AddRandomNumber: AppSideEffect {
    func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) async throws {
      let number = try await context.dependencies.APIManager.getRandomNumber()
      let counter = context.getState().counter
      try await context.dispatch(SetCounter(newValue: counter + number))
    }
  }

  /// Returns at once; the counter changes later, in work the store owns.
  struct AddRandomNumberLater: AppSideEffect {
    func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) async throws {
      context.send(AddRandomNumber())
    }
  }
  // MIGRATION-SNIPPET-END: stage2-sync-and-async-side-effects
}
