import Katana
import KatanaBenchmarkBaselines

/// A feature's state for the scope cases: a counter and an array whose size the append cases control.
public struct FeatureBenchState: State, Equatable {
  public var counter = 0
  public var items: [Int] = []

  /// An empty feature.
  public init() {}
}

/// Three levels of nesting around a feature, for the nested-scope case.
public struct OuterBenchState: State, Equatable {
  public var middle = MiddleBenchState()

  /// An empty level.
  public init() {}
}

/// The middle level of ``OuterBenchState``.
public struct MiddleBenchState: State, Equatable {
  public var feature = FeatureBenchState()

  /// An empty level.
  public init() {}
}

/// An app state with one feature under test, ten other features that observers watch, and a feature three
/// levels down.
public struct AppBenchState: State {
  public var counter = 0
  public var feature = FeatureBenchState()
  public var outer = OuterBenchState()
  public var other0 = FeatureBenchState()
  public var other1 = FeatureBenchState()
  public var other2 = FeatureBenchState()
  public var other3 = FeatureBenchState()
  public var other4 = FeatureBenchState()
  public var other5 = FeatureBenchState()
  public var other6 = FeatureBenchState()
  public var other7 = FeatureBenchState()
  public var other8 = FeatureBenchState()
  public var other9 = FeatureBenchState()

  /// An empty app.
  public init() {}
}

/// The store of the scope cases.
public typealias AppBenchStore = Store<AppBenchState, EmptySideEffectDependencyContainer>
/// A scope of one feature of ``AppBenchStore``.
public typealias FeatureBenchScope = ScopedStore<FeatureBenchState, EmptySideEffectDependencyContainer>

/// The root store's own increment, for the reference case.
public struct AppIncrement: StateUpdater {
  /// An increment.
  public init() {}

  public func updateState(_ state: inout AppBenchState) {
    state.counter &+= 1
  }
}

/// The feature's increment: the same mutation, typed to the feature.
public struct FeatureIncrement: StateUpdater {
  /// An increment.
  public init() {}

  public func updateState(_ state: inout FeatureBenchState) {
    state.counter &+= 1
  }
}

/// Appends one element to the feature's array and removes it again.
public struct FeatureAppendAndDrop: StateUpdater {
  /// An append and a drop.
  public init() {}

  public func updateState(_ state: inout FeatureBenchState) {
    state.items.append(state.counter)
    state.items.removeLast()
    state.counter &+= 1
  }
}

/// A ready app store.
public func makeAppStore(_ state: AppBenchState = AppBenchState(), interceptors: [StoreInterceptor] = [])
  async throws -> AppBenchStore
{
  let store = AppBenchStore(initialState: state, interceptors: interceptors)
  try await store.waitUntilReady()
  return store
}

/// Throws unless `counter` is `expected`.
func expect(_ counter: Int, _ expected: Int) throws {
  guard counter == expected else {
    throw CorrectnessError(description: "lost updates: \(counter) of \(expected)")
  }
}

/// Feature scopes (SPEC 4.9): what dispatching through a scope adds to a root dispatch, nesting, the size of the
/// feature's state, and observers of other features.
extension BenchmarkFixture {
  /// `try await store.dispatch(AppIncrement())` on the app store.
  public static let scopeRootDispatch = BenchmarkFixture(
    name: "scope: root dispatch (reference)",
    explanation: "try await store.dispatch(AppIncrement()) on the app store the scope cases use."
  ) { operations in
    let store = try await makeAppStore()
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(AppIncrement()) }
    } verify: {
      try expect(store.state.counter, operations)
    }
  }

  /// The feature's increment through `store.scope(\.feature, dependencies: \.self)`.
  public static let scopeDispatch = BenchmarkFixture(
    name: "scope: dispatch through a scope",
    explanation: "try await feature.dispatch(FeatureIncrement()), feature = store.scope(\\.feature, "
      + "dependencies: \\.self)."
  ) { operations in
    let store = try await makeAppStore()
    let feature = store.scope(\.feature, dependencies: \.self)
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await feature.dispatch(FeatureIncrement()) }
    } verify: {
      try expect(store.state.feature.counter, operations)
    }
  }

  /// The feature's increment through three nested scopes.
  public static let nestedScopeDispatch = BenchmarkFixture(
    name: "scope: dispatch through three nested scopes",
    explanation: "The same dispatch through store.scope(\\.outer).scope(\\.middle).scope(\\.feature)."
  ) { operations in
    let store = try await makeAppStore()
    let feature = store.scope(\.outer, dependencies: \.self).scope(\.middle, dependencies: \.self)
      .scope(\.feature, dependencies: \.self)
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await feature.dispatch(FeatureIncrement()) }
    } verify: {
      try expect(store.state.outer.middle.feature.counter, operations)
    }
  }

  /// The root dispatch through five pass-through interceptors.
  public static let scopeRootDispatchFiveInterceptors = BenchmarkFixture(
    name: "scope: root dispatch, 5 interceptors (reference)",
    explanation: "try await store.dispatch(AppIncrement()) through five pass-through interceptors."
  ) { operations in
    let store = try await makeAppStore(interceptors: Array(repeating: passThrough, count: 5))
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(AppIncrement()) }
    } verify: {
      try expect(store.state.counter, operations)
    }
  }

  /// The feature's dispatch through the same five interceptors.
  public static let scopeDispatchFiveInterceptors = BenchmarkFixture(
    name: "scope: dispatch through a scope, 5 interceptors",
    explanation: "The feature's dispatch through the same interceptors, which see a ScopedDispatchable."
  ) { operations in
    let store = try await makeAppStore(interceptors: Array(repeating: passThrough, count: 5))
    let feature = store.scope(\.feature, dependencies: \.self)
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await feature.dispatch(FeatureIncrement()) }
    } verify: {
      try expect(store.state.feature.counter, operations)
    }
  }

  /// An append inside a scoped feature whose array has `size` elements.
  public static func scopedAppend(size: Int) -> BenchmarkFixture {
    BenchmarkFixture(
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
      return PreparedFixture(operations: operations) {
        for _ in 0..<operations { try await feature.dispatch(FeatureAppendAndDrop()) }
      } verify: {
        try expect(store.state.feature.counter, operations + 1)
      }
    }
  }

  /// A commit to one feature while `observers` listeners (0 or 10) watch other features.
  public static func otherFeatures(observers: Int) -> BenchmarkFixture {
    BenchmarkFixture(
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
        for scope in otherFeatureScopes(of: store) {
          unsubscribes.append(scope.addListener { _, _ in calls.add(1) })
        }
      }
      return PreparedFixture(operations: operations) {
        for _ in 0..<operations { try await feature.dispatch(FeatureIncrement()) }
      } verify: {
        guard calls.value == 0 else {
          throw CorrectnessError(description: "listeners of other features were called \(calls.value) times")
        }
        for unsubscribe in unsubscribes { unsubscribe() }
        try expect(store.state.feature.counter, operations)
      }
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
