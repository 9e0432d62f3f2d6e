import Katana

// Katana 6 README, section "Side Effects", after stage 2. Both README versions of
// `GenerateRandomNumberFromBackend` (promise chain and `Hydra.await`) become the same async side effect:
// `try await` is what `Hydra.await` imitated. The dependency returns its value with `async throws` instead
// of a promise.

extension Stage2 {
  // MIGRATION-SNIPPET-BEGIN: stage2-side-effect
  struct GenerateRandomNumberFromBackend: SideEffect {
    func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) async throws {
      // waits for the number without blocking a thread
      let randomNumber = try await context.dependencies.APIManager.getRandomNumber()

      // returns once the state is updated
      try await context.dispatch(SetCounter(newValue: randomNumber))
    }
  }

  struct SetCounter: StateUpdater {
    let newValue: Int

    func updateState(_ state: inout CounterState) {
      state.counter = self.newValue
    }
  }
  // MIGRATION-SNIPPET-END: stage2-side-effect
}
