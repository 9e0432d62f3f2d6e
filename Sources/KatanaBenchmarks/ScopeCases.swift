import Foundation
import Katana

/// A feature's state for the scope cases: a counter and an array whose size the append cases control.
struct FeatureBenchState: State, Equatable {
  var counter = 0
  var items: [Int] = []
}

/// Three levels of nesting around a feature, for the nested-scope case.
struct OuterBenchState: State, Equatable {
  var middle = MiddleBenchState()
}

struct MiddleBenchState: State, Equatable {
  var feature = FeatureBenchState()
}

/// An app state with one feature under test, ten other features that observers watch, and a feature three
/// levels down.
struct AppBenchState: State {
  var counter = 0
  var feature = FeatureBenchState()
  var outer = OuterBenchState()
  var other0 = FeatureBenchState()
  var other1 = FeatureBenchState()
  var other2 = FeatureBenchState()
  var other3 = FeatureBenchState()
  var other4 = FeatureBenchState()
  var other5 = FeatureBenchState()
  var other6 = FeatureBenchState()
  var other7 = FeatureBenchState()
  var other8 = FeatureBenchState()
  var other9 = FeatureBenchState()
}

typealias AppBenchStore = Store<AppBenchState, EmptySideEffectDependencyContainer>
typealias FeatureBenchScope = ScopedStore<FeatureBenchState, EmptySideEffectDependencyContainer>

/// The root store's own increment, for the reference case.
struct AppIncrement: StateUpdater {
  func updateState(_ state: inout AppBenchState) {
    state.counter &+= 1
  }
}

/// The feature's increment: the same mutation, typed to the feature.
struct FeatureIncrement: StateUpdater {
  func updateState(_ state: inout FeatureBenchState) {
    state.counter &+= 1
  }
}

/// Appends one element to the feature's array and removes it again.
struct FeatureAppendAndDrop: StateUpdater {
  func updateState(_ state: inout FeatureBenchState) {
    state.items.append(state.counter)
    state.items.removeLast()
    state.counter &+= 1
  }
}

func makeAppStore(_ state: AppBenchState = AppBenchState(), interceptors: [StoreInterceptor] = []) async throws
  -> AppBenchStore
{
  let store = AppBenchStore(initialState: state, interceptors: interceptors)
  try await store.waitUntilReady()
  return store
}

extension Runner {
  /// Feature scopes (SPEC 4.9): what dispatching through a scope adds to a root dispatch, nesting, the size
  /// of the feature's state, and observers of other features.
  func runScopeGroup() async throws {
    try await measure([
      BenchmarkCase(
        name: "scope: root dispatch (reference)",
        explanation: "try await store.dispatch(AppIncrement()) on the app store the scope cases use."
      ) { operations in
        let store = try await makeAppStore()
        let result = try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await store.dispatch(AppIncrement()) }
        }
        guard store.state.counter == operations else {
          throw CorrectnessError(description: "lost updates: \(store.state.counter) of \(operations)")
        }
        return result
      },
      BenchmarkCase(
        name: "scope: dispatch through a scope",
        explanation: "try await feature.dispatch(FeatureIncrement()), feature = store.scope(\\.feature, "
          + "dependencies: \\.self)."
      ) { operations in
        let store = try await makeAppStore()
        let feature = store.scope(\.feature, dependencies: \.self)
        let result = try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await feature.dispatch(FeatureIncrement()) }
        }
        guard store.state.feature.counter == operations else {
          throw CorrectnessError(description: "lost updates: \(store.state.feature.counter) of \(operations)")
        }
        return result
      },
      BenchmarkCase(
        name: "scope: dispatch through three nested scopes",
        explanation: "The same dispatch through store.scope(\\.outer).scope(\\.middle).scope(\\.feature)."
      ) { operations in
        let store = try await makeAppStore()
        let feature = store.scope(\.outer, dependencies: \.self).scope(\.middle, dependencies: \.self)
          .scope(\.feature, dependencies: \.self)
        let result = try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await feature.dispatch(FeatureIncrement()) }
        }
        guard store.state.outer.middle.feature.counter == operations else {
          throw CorrectnessError(
            description: "lost updates: \(store.state.outer.middle.feature.counter) of \(operations)")
        }
        return result
      },
    ])
    if let ratio = perRound("scope: dispatch through a scope", "scope: root dispatch (reference)", /) {
      check(
        "dispatch through a scope <= 1.5x a root dispatch",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.1f ns vs %.1f ns", ratio.median,
          value("scope: dispatch through a scope") ?? 0, value("scope: root dispatch (reference)") ?? 0),
        met: ratio.median <= 1.5)
    }
    if let ratio = perRound("scope: dispatch through three nested scopes", "scope: root dispatch (reference)", /) {
      check(
        "dispatch through three nested scopes <= 2x a root dispatch",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.1f ns", ratio.median,
          value("scope: dispatch through three nested scopes") ?? 0),
        met: ratio.median <= 2)
    }

    try await measure([
      BenchmarkCase(
        name: "scope: root dispatch, 5 interceptors (reference)",
        explanation: "try await store.dispatch(AppIncrement()) through five pass-through interceptors."
      ) { operations in
        let store = try await makeAppStore(interceptors: Array(repeating: passThrough, count: 5))
        return try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await store.dispatch(AppIncrement()) }
        }
      },
      BenchmarkCase(
        name: "scope: dispatch through a scope, 5 interceptors",
        explanation: "The feature's dispatch through the same interceptors, which see a ScopedDispatchable."
      ) { operations in
        let store = try await makeAppStore(interceptors: Array(repeating: passThrough, count: 5))
        let feature = store.scope(\.feature, dependencies: \.self)
        let result = try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await feature.dispatch(FeatureIncrement()) }
        }
        guard store.state.feature.counter == operations else {
          throw CorrectnessError(description: "lost updates: \(store.state.feature.counter) of \(operations)")
        }
        return result
      },
    ])

    let small = scopedAppendCase(size: 10)
    let large = scopedAppendCase(size: 1_000_000)
    try await measure([small, large])
    if let ratio = perRound(large.name, small.name, /) {
      check(
        "append inside a scoped feature: 1,000,000 elements <= 1.5x 10 elements",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.1f ns vs %.1f ns", ratio.median, value(large.name) ?? 0,
          value(small.name) ?? 0),
        met: ratio.median <= 1.5)
    }

    let alone = otherFeaturesCase(observers: 0)
    let observed = otherFeaturesCase(observers: 10)
    try await measure([alone, observed])
    if let ratio = perRound(observed.name, alone.name, /) {
      check(
        "commit to one feature with 10 observers of other features <= 1.2x no observers",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.1f ns vs %.1f ns", ratio.median,
          value(observed.name) ?? 0, value(alone.name) ?? 0),
        met: ratio.median <= 1.2)
    }
  }

  private func scopedAppendCase(size: Int) -> BenchmarkCase {
    BenchmarkCase(
      name: "scope: append, \(size == 10 ? "10" : "1,000,000") elements in the feature",
      explanation: "feature.dispatch(FeatureAppendAndDrop()) on a scoped feature whose array has \(size) "
        + "elements: the mutation happens in place, so the size must not matter."
    ) { operations in
      var state = AppBenchState()
      state.feature.items = Array(repeating: 0, count: size)
      let store = try await makeAppStore(state)
      let feature = store.scope(\.feature, dependencies: \.self)
      // Drop the initializer's reference to the array: the first mutation copies it once.
      try await feature.dispatch(FeatureAppendAndDrop())
      return try await nanosecondsPerOperation(operations: operations) {
        for _ in 0..<operations { try await feature.dispatch(FeatureAppendAndDrop()) }
      }
    }
  }

  private func otherFeaturesCase(observers: Int) -> BenchmarkCase {
    BenchmarkCase(
      name: "scope: feature commit, \(observers == 0 ? "no observers" : "10 listeners on other features")",
      explanation: observers == 0
        ? "feature.dispatch(FeatureIncrement()) with nobody observing."
        : "The same dispatch while a listener watches each of ten other features' scopes."
    ) { operations in
      let store = try await makeAppStore()
      let feature = store.scope(\.feature, dependencies: \.self)
      let calls = Counter()
      var unsubscribes: [StoreUnsubscribe] = []
      if observers > 0 {
        for scope in Self.otherFeatureScopes(of: store) {
          unsubscribes.append(scope.addListener { _, _ in calls.add(1) })
        }
      }
      let result = try await nanosecondsPerOperation(operations: operations) {
        for _ in 0..<operations { try await feature.dispatch(FeatureIncrement()) }
      }
      guard calls.value == 0 else {
        throw CorrectnessError(description: "listeners of other features were called \(calls.value) times")
      }
      for unsubscribe in unsubscribes { unsubscribe() }
      return result
    }
  }

  /// Scopes of the ten features the feature cases never change, with key-path literals as users write them.
  private static func otherFeatureScopes(of store: AppBenchStore) -> [FeatureBenchScope] {
    [
      store.scope(\.other0, dependencies: \.self), store.scope(\.other1, dependencies: \.self),
      store.scope(\.other2, dependencies: \.self), store.scope(\.other3, dependencies: \.self),
      store.scope(\.other4, dependencies: \.self), store.scope(\.other5, dependencies: \.self),
      store.scope(\.other6, dependencies: \.self), store.scope(\.other7, dependencies: \.self),
      store.scope(\.other8, dependencies: \.self), store.scope(\.other9, dependencies: \.self),
    ]
  }
}
