import Katana
import KatanaBenchmarkBaselines

extension Runner {
  /// What the dispatch instrumentation hook costs: nothing when it is not installed (the store runs its
  /// plain path), and, when installed, one interceptor plus two clock reads and the report.
  func runInstrumentationGroup() async throws {
    try await measure([
      BenchmarkCase(
        name: "dispatch: state updater (instrumentation group)",
        explanation: "The plain updater dispatch, measured next to the instrumentation cases: a store without "
          + "the hook runs exactly this path."
      ) { operations in
        let store = try await makeStore()
        return try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await store.dispatch(Increment()) }
        }
      },
      BenchmarkCase(
        name: "dispatch: state updater, 1 pass-through interceptor (instrumentation group)",
        explanation: "The same dispatch through one interceptor that hands the item on: the share of the "
          + "hook's cost that any interceptor has."
      ) { operations in
        let store = try await makeStore(interceptors: [passThrough])
        return try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await store.dispatch(Increment()) }
        }
      },
      BenchmarkCase(
        name: "dispatch: state updater, instrumentation hook",
        explanation: "The same dispatch with DispatchInstrumentation.interceptor installed, its report "
          + "adding each duration to a total."
      ) { operations in
        let total = Counter()
        let store = try await makeStore(interceptors: [
          DispatchInstrumentation.interceptor { event in total.add(Int(event.duration.components.attoseconds)) }
        ])
        let result = try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await store.dispatch(Increment()) }
        }
        blackHole(total)
        return result
      },
    ])
  }
}
