import Katana
import KatanaBenchmarkBaselines

extension BenchmarkFixture {
  /// Five nested plain async closures: the floor of the closure-chain shape.
  public static let plainClosureChain = BenchmarkFixture(
    name: "baseline: 5 plain async closures", isBaseline: true,
    explanation: "Five nested async closures handing a value on, built without arrays: the cost of the "
      + "async calls themselves."
  ) { operations in
    let locked = LockedBaseline()
    // The depth comes from a run-time value so that the optimizer cannot unroll the chain.
    let chain = makeClosureChain(depth: operations > 0 ? 5 : 4) { value in
      locked.increment(by: value)
    }
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await chain(1) }
      blackHole(locked.counter)
    }
  }

  /// One plain async closure: what one pass-through interceptor is measured against.
  public static let plainClosure = BenchmarkFixture(
    name: "baseline: 1 plain async closure", isBaseline: true,
    explanation: "One async closure handing a value on to the final one, built as the five-closure chain is: the "
      + "cost of one async closure call."
  ) { operations in
    let locked = LockedBaseline()
    // The depth comes from a run-time value so that the optimizer cannot fold the closure away.
    let chain = makeClosureChain(depth: operations > 0 ? 1 : 0) { value in
      locked.increment(by: value)
    }
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await chain(1) }
      blackHole(locked.counter)
    }
  }

  /// Five pass-through interceptors of `StoreInterceptor`'s shape, composed from an array, with no store.
  public static let interceptorArrayChain = BenchmarkFixture(
    name: "baseline: 5 pass-through interceptors, no store", isBaseline: true,
    explanation: "Five pass-through interceptors of StoreInterceptor's shape, passed as an array and "
      + "composed with loops, calling a locked mutation: the floor for the store's 5-interceptor case, "
      + "reabstraction thunks included."
  ) { operations in
    let locked = LockedBaseline()
    let passThrough: BaselineInterceptor = { _ in { next in { item in try await next(item) } } }
    let chain = composeInterceptorArray(Array(repeating: passThrough, count: 5)) { item in
      locked.increment(by: item is Int ? 1 : 0)
    }
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await chain(1) }
      blackHole(locked.counter)
    }
  }

  /// The updater dispatch through five pass-through interceptors.
  public static let updaterDispatchFiveInterceptors = BenchmarkFixture(
    name: "dispatch: state updater, 5 interceptors",
    explanation: "The same dispatch through five pass-through interceptors."
  ) { operations in
    let store = try await makeStore(interceptors: Array(repeating: passThrough, count: 5))
    return .dispatchingIncrements(to: store, operations: operations)
  }

  /// The updater dispatch through five pass-through interceptors of the faster form.
  public static let updaterDispatchFiveDispatchInterceptors = BenchmarkFixture(
    name: "dispatch: state updater, 5 dispatch interceptors",
    explanation: "The same dispatch through five pass-through DispatchInterceptors, the faster form: a method "
      + "called through a protocol, with no reabstraction thunk."
  ) { operations in
    let store = try await makeStore(dispatchInterceptors: Array(repeating: PassThrough(), count: 5))
    return .dispatchingIncrements(to: store, operations: operations)
  }

  /// The updater dispatch through one pass-through interceptor of the faster form.
  public static let updaterDispatchOneDispatchInterceptor = BenchmarkFixture(
    name: "dispatch: state updater, 1 dispatch interceptor",
    explanation: "The same dispatch through one pass-through DispatchInterceptor, the faster form."
  ) { operations in
    let store = try await makeStore(dispatchInterceptors: [PassThrough()])
    return .dispatchingIncrements(to: store, operations: operations)
  }

  /// The updater dispatch with five dispatch observers that count what they see.
  public static let updaterDispatchFiveObservers = BenchmarkFixture(
    name: "dispatch: state updater, 5 observers",
    explanation: "The same dispatch with five DispatchObservers, each counting its willHandle and didHandle "
      + "calls: the non-suspending form for interceptors that only observe."
  ) { operations in
    let seen = (0..<5).map { _ in SingleTaskCounter() }
    let store = try await makeStore(
      observers: seen.map { counter in
        DispatchObserver(willHandle: { _ in counter.value &+= 1 }, didHandle: { _, _ in counter.value &+= 1 })
      })
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(Increment()) }
    } verify: {
      try expectCounter(of: store, operations)
      guard seen.allSatisfy({ $0.value == 2 * operations }) else {
        throw CorrectnessError(
          description: "an observer missed a call: \(seen.map(\.value)) for \(operations) dispatches")
      }
    }
  }

  /// The updater dispatch through one pass-through interceptor.
  public static let updaterDispatchOneInterceptor = BenchmarkFixture(
    name: "dispatch: state updater, 1 pass-through interceptor",
    explanation: "The same dispatch through one interceptor that hands the item on: the share of the "
      + "instrumentation hook's cost that any interceptor has."
  ) { operations in
    let store = try await makeStore(interceptors: [passThrough])
    return .dispatchingIncrements(to: store, operations: operations)
  }

  /// The updater dispatch with `DispatchInstrumentation.interceptor` installed.
  public static let updaterDispatchInstrumentation = BenchmarkFixture(
    name: "dispatch: state updater, instrumentation hook",
    explanation: "The same dispatch with DispatchInstrumentation.interceptor installed, its report "
      + "adding each duration to a total."
  ) { operations in
    let total = Counter()
    let store = try await makeStore(interceptors: [
      DispatchInstrumentation.interceptor { event in total.add(Int(event.duration.components.attoseconds)) }
    ])
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(Increment()) }
      blackHole(total)
    } verify: {
      try expectCounter(of: store, operations)
    }
  }
}

/// A counter bumped by observers of a store that one task dispatches to: the calls never overlap, so it needs no
/// lock (a lock would measure itself, not the observer call).
final class SingleTaskCounter: @unchecked Sendable {  // Sendable: only the one dispatching task touches it.
  var value = 0
}
