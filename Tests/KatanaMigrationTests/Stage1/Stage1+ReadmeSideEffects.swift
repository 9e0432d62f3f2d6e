import KatanaPromises

// Katana 6 README, section "Side Effects": a side effect that chains a dependency's promise, the same side
// effect written with `Hydra.await`, and the `SetCounter` state updater.
//
// Stage-1 steps applied: `import Katana`/`import Hydra` -> `import KatanaPromises`. The code compiles
// unchanged; it runs as in Katana 6 in a store created with `configuration: .katana6`, whose side effects
// run on threads where `Hydra.await` may block.
//
// Renamed: the README gives both versions the name `GenerateRandomNumberFromBackend`; the second is
// `GenerateRandomNumberFromBackendAndWait` here, so that both compile side by side.

extension Stage1 {
  // MIGRATION-SNIPPET-BEGIN: stage1-side-effect-promise
  struct GenerateRandomNumberFromBackend: SideEffect {
    func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) throws {
      // invokes the `getRandomNumber` method that returns a promise that is fullfilled
      // when the number is received. At that point we dispatch a State Updater
      // that updates the state
      context.dependencies.APIManager
        .getRandomNumber()
        .then { randomNumber in context.dispatch(SetCounter(newValue: randomNumber)) }
    }
  }

  struct SetCounter: StateUpdater {
    let newValue: Int

    func updateState(_ state: inout CounterState) {
      state.counter = self.newValue
    }
  }
  // MIGRATION-SNIPPET-END: stage1-side-effect-promise

  // MIGRATION-SNIPPET-BEGIN: stage1-side-effect-await
  struct GenerateRandomNumberFromBackendAndWait: SideEffect {
    func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) throws {
      // invokes the `getRandomNumber` method that returns a promise that is fulfilled
      // when the number is received.
      let promise = context.dependencies.APIManager.getRandomNumber()

      // we use Hydra.await to wait for the promise to be fulfilled
      let randomNumber = try Hydra.await(promise)

      // then the state is updated using the proper state updater
      try Hydra.await(context.dispatch(SetCounter(newValue: randomNumber)))
    }
  }
  // MIGRATION-SNIPPET-END: stage1-side-effect-await
}
