import KatanaBenchmarkFixtures

extension Runner {
  /// What the dispatch instrumentation hook costs: nothing when it is not installed (the store runs its
  /// plain path), and, when installed, one interceptor plus two clock reads and the report.
  func runInstrumentationGroup() async throws {
    try await measure([
      BenchmarkFixture.updaterDispatch.named(
        "dispatch: state updater (instrumentation group)",
        explanation: "The plain updater dispatch, measured next to the instrumentation cases: a store without "
          + "the hook runs exactly this path."),
      BenchmarkFixture.updaterDispatchOneInterceptor.named(
        "dispatch: state updater, 1 pass-through interceptor (instrumentation group)",
        explanation: "The same dispatch through one interceptor that hands the item on: the share of the "
          + "hook's cost that any interceptor has."),
      .updaterDispatchInstrumentation,
    ])
  }
}
