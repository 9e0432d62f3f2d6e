import Foundation
import Katana
import KatanaBenchmarkBaselines

/// One measured line of the report.
struct Measurement: Codable {
  enum Kind: String, Codable {
    case baseline
    case benchmark
  }

  let name: String
  let kind: Kind
  let unit: String
  let stats: Stats
  let explanation: String

  var value: Double { stats.median }
}

/// A SPEC section 7 target and whether this run met it.
struct TargetCheck: Codable {
  let target: String
  let measured: String
  let met: Bool
}

/// A check the benchmarks make on the store's results (for example: no lost update).
struct CorrectnessError: Error, CustomStringConvertible {
  let description: String
}

/// A case to measure: `run(operations)` performs that many operations and returns nanoseconds per
/// operation (setup excluded).
struct BenchmarkCase {
  let name: String
  var kind = Measurement.Kind.benchmark
  /// How much slower than a fast case one operation is, to scale the operation count down.
  var relativeCost = 1
  let explanation: String
  let run: (_ operations: Int) async throws -> Double
}

/// Runs the cases and keeps their measurements.
///
/// Cases that are compared with each other are measured as a group, round-robin: each round runs one
/// batch of every case in the group. The speed of these machines drifts by tens of percent over seconds,
/// so ratios are computed per round (both sides measured moments apart) and the median ratio is reported.
final class Runner {
  let options: Options
  private(set) var measurements: [Measurement] = []
  private(set) var targets: [TargetCheck] = []
  /// Per-round samples of each measured case, for ratios.
  private var rounds: [String: [Double]] = [:]

  init(options: Options) {
    self.options = options
  }

  func operations(_ relativeCost: Int = 1) -> Int {
    Swift.max(1, options.iterations / relativeCost)
  }

  /// Measures the cases that the options select, round-robin.
  func measure(_ cases: [BenchmarkCase]) async throws {
    let selected = cases.filter { $0.kind == .baseline ? options.baselines : options.includes($0.name) }
    guard !selected.isEmpty else { return }
    for benchmark in selected {  // Warm-up.
      _ = try await benchmark.run(operations(benchmark.relativeCost))
    }
    var samples = Array(repeating: [Double](), count: selected.count)
    for _ in 0..<options.batches {
      for (index, benchmark) in selected.enumerated() {
        samples[index].append(try await benchmark.run(operations(benchmark.relativeCost)))
      }
    }
    for (index, benchmark) in selected.enumerated() {
      rounds[benchmark.name] = samples[index]
      measurements.append(
        Measurement(
          name: benchmark.name, kind: benchmark.kind, unit: "ns/op", stats: Stats(samples: samples[index]),
          explanation: benchmark.explanation))
      if !options.json {
        FileHandle.standardError.write(Data("  measured \(benchmark.name)\n".utf8))
      }
    }
  }

  /// The median over rounds of `combine(sample of a, sample of b)`, or nil if either was not measured.
  func perRound(_ a: String, _ b: String, _ combine: (Double, Double) -> Double) -> Stats? {
    guard let first = rounds[a], let second = rounds[b], first.count == second.count else { return nil }
    return Stats(samples: zip(first, second).map(combine))
  }

  func check(_ target: String, measured: String, met: Bool) {
    targets.append(TargetCheck(target: target, measured: measured, met: met))
  }

  func value(_ name: String) -> Double? {
    measurements.first { $0.name == name }?.value
  }

  static let actorCall = "baseline: bare actor call"

  func run() async throws {
    try await runDispatchGroup()
    try await runInterceptorGroup()
    try await runInstrumentationGroup()
    try await runConcurrencyGroup()
    try await runAppendGroup()
    try await runScopeGroup()
    try await measure([streamCase])
    try await runMemoryCase()
    try await runPromiseGroup()
    try await runLegacyBlockingGroup()
  }

  // MARK: - Groups

  private var actorCallCase: BenchmarkCase {
    BenchmarkCase(
      name: Self.actorCall, kind: .baseline,
      explanation: "An awaited method of an actor in another module doing the same mutation as the state "
        + "updater: the floor SPEC 7 measures dispatch against."
    ) { operations in
      let actor = BaselineActor()
      return await nanosecondsPerOperation(operations: operations) {
        for _ in 0..<operations { await actor.increment(by: 1) }
        blackHole(await actor.counter)
      }
    }
  }

  private func runDispatchGroup() async throws {
    try await measure([
      actorCallCase,
      BenchmarkCase(
        name: "baseline: lock-protected mutation", kind: .baseline,
        explanation: "The same mutation behind an NSLock, from one task: the floor for a thread-safe mutation."
      ) { operations in
        let locked = LockedBaseline()
        return await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { locked.increment(by: 1) }
          blackHole(locked.counter)
        }
      },
      BenchmarkCase(
        name: "dispatch: state updater",
        explanation: "try await store.dispatch(Increment()): no interceptor, no listener."
      ) { operations in
        let store = try await makeStore()
        let result = try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await store.dispatch(Increment()) }
        }
        guard store.state.counter == operations else {
          throw CorrectnessError(description: "lost updates: \(store.state.counter) of \(operations)")
        }
        return result
      },
      BenchmarkCase(
        name: "dispatch: empty side effect",
        explanation: "try await store.dispatch(EmptySideEffect()): the body runs in the calling task."
      ) { operations in
        let store = try await makeStore()
        return try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await store.dispatch(EmptySideEffect()) }
        }
      },
      BenchmarkCase(
        name: "dispatch: returning side effect",
        explanation: "let value = try await store.dispatch(Answer()): a value back to the caller."
      ) { operations in
        let store = try await makeStore()
        var total = 0
        let result = try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { total &+= try await store.dispatch(Answer()) }
        }
        blackHole(total)
        return result
      },
      BenchmarkCase(
        name: "dispatch: nested updater from a side effect",
        explanation: "A side effect that awaits context.dispatch(Increment())."
      ) { operations in
        let store = try await makeStore()
        return try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await store.dispatch(NestedIncrement()) }
        }
      },
      BenchmarkCase(
        name: "send: state updater throughput",
        explanation: "store.send(Increment()) from one task, then await the last handle: ns per item."
      ) { operations in
        let store = try await makeStore()
        let result = try await nanosecondsPerOperation(operations: operations) {
          var last: DispatchHandle<Void>?
          for _ in 0..<operations { last = store.send(Increment()) }
          try await last?.value
        }
        guard store.state.counter == operations else {
          throw CorrectnessError(description: "send lost updates: \(store.state.counter) of \(operations)")
        }
        return result
      },
    ])
    if let ratio = perRound("dispatch: state updater", Self.actorCall, /) {
      check(
        "awaited updater dispatch <= 10x a bare actor call",
        measured: String(
          format: "%.2fx (median of per-round ratios, %.0f%% spread); %.1f ns vs %.1f ns", ratio.median,
          ratio.spread * 100, value("dispatch: state updater") ?? 0, value(Self.actorCall) ?? 0),
        met: ratio.median <= 10)
    }
    if let ratio = perRound("dispatch: empty side effect", Self.actorCall, /) {
      check(
        "awaited empty side effect <= 20x a bare actor call",
        measured: String(
          format: "%.2fx (median of per-round ratios, %.0f%% spread); %.1f ns", ratio.median, ratio.spread * 100,
          value("dispatch: empty side effect") ?? 0),
        met: ratio.median <= 20)
    }
  }

  private func runInterceptorGroup() async throws {
    try await measure([
      BenchmarkCase(
        name: "baseline: 5 plain async closures", kind: .baseline,
        explanation: "Five nested async closures handing a value on, built without arrays: the cost of the "
          + "async calls themselves."
      ) { operations in
        let locked = LockedBaseline()
        // The depth comes from the options so that the optimizer cannot unroll the chain.
        let chain = makeClosureChain(depth: self.options.batches > 0 ? 5 : 4) { value in
          locked.increment(by: value)
        }
        return try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await chain(1) }
          blackHole(locked.counter)
        }
      },
      BenchmarkCase(
        name: "baseline: 5 pass-through interceptors, no store", kind: .baseline,
        explanation: "Five pass-through interceptors of StoreInterceptor's shape, passed as an array and "
          + "composed with loops, calling a locked mutation: the floor for the store's 5-interceptor case, "
          + "reabstraction thunks included."
      ) { operations in
        let locked = LockedBaseline()
        let passThrough: BaselineInterceptor = { _ in { next in { item in try await next(item) } } }
        let chain = composeInterceptorArray(Array(repeating: passThrough, count: 5)) { item in
          locked.increment(by: item is Int ? 1 : 0)
        }
        return try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await chain(1) }
          blackHole(locked.counter)
        }
      },
      BenchmarkCase(
        name: "dispatch: state updater (interceptor group)",
        explanation: "The plain updater dispatch again, measured next to the interceptor cases."
      ) { operations in
        let store = try await makeStore()
        return try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await store.dispatch(Increment()) }
        }
      },
      BenchmarkCase(
        name: "dispatch: state updater, 5 interceptors",
        explanation: "The same dispatch through five pass-through interceptors."
      ) { operations in
        let store = try await makeStore(interceptors: Array(repeating: passThrough, count: 5))
        return try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await store.dispatch(Increment()) }
        }
      },
    ])
    guard
      let added = perRound(
        "dispatch: state updater, 5 interceptors", "dispatch: state updater (interceptor group)", -)
    else { return }
    var measured = String(format: "%.1f ns added (median of per-round differences)", added.median)
    if let floor = value("baseline: 5 pass-through interceptors, no store"),
      let plain = value("baseline: 5 plain async closures"),
      let storeShare = perRound(
        "dispatch: state updater, 5 interceptors", "baseline: 5 pass-through interceptors, no store", -),
      let plainDispatch = value("dispatch: state updater (interceptor group)")
    {
      measured += String(
        format: "; five such interceptors with no store behind them cost %.1f ns (%.1f ns of it "
          + "reabstraction thunks, against %.1f ns for five plain async closures), so the store's own share "
          + "is about %.1f ns",
        floor, floor - plain, plain, storeShare.median - plainDispatch)
    }
    check("five pass-through interceptors add <= 100 ns per dispatch", measured: measured, met: added.median <= 100)
  }

  private func runConcurrencyGroup() async throws {
    try await measure([
      BenchmarkCase(
        name: "concurrent: 1 task (reference)",
        explanation: "The single-task dispatch loop, measured next to the 8-task case."
      ) { operations in
        let store = try await makeStore()
        return try await nanosecondsPerOperation(operations: operations) {
          for _ in 0..<operations { try await store.dispatch(Increment()) }
        }
      },
      BenchmarkCase(
        name: "concurrent: 8 tasks dispatching",
        explanation: "Eight tasks dispatch at once; ns per dispatch of the aggregate, with the total checked."
      ) { operations in
        let store = try await makeStore()
        let perTask = Swift.max(1, operations / 8)
        let result = try await nanosecondsPerOperation(operations: perTask * 8) {
          try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
              group.addTask { for _ in 0..<perTask { try await store.dispatch(Increment()) } }
            }
            try await group.waitForAll()
          }
        }
        guard store.state.counter == perTask * 8 else {
          throw CorrectnessError(description: "lost updates: \(store.state.counter) of \(perTask * 8)")
        }
        return result
      },
    ])
    if let throughput = perRound("concurrent: 1 task (reference)", "concurrent: 8 tasks dispatching", /) {
      check(
        "8 concurrent dispatching tasks: aggregate throughput >= 0.5x one task's, no lost update",
        measured: String(
          format: "%.2fx one task's throughput (median of per-round ratios); every update counted",
          throughput.median),
        met: throughput.median >= 0.5)
    }
  }

  private enum Observers: String {
    case none = "no observer"
    case listener = "one listener"
    case projections = "10 projections"
  }

  private func appendCase(size: Int, observers: Observers) -> BenchmarkCase {
    BenchmarkCase(
      name: "append: \(size == 10 ? "10" : "1,000,000") elements, \(observers.rawValue)",
      // With a listener holding the old state, each append copies the array: keep those runs short.
      relativeCost: observers == .listener ? (size == 10 ? 10 : 2_000) : 1,
      explanation: "A state updater appends to (and drops from) an array of \(size) elements, with "
        + "\(observers.rawValue)."
    ) { operations in
      let store = try await makeStore(BenchState(items: Array(repeating: 0, count: size)))
      var iterators: [StoreStream<Int>.Iterator] = []
      switch observers {
      case .none: break
      case .listener: store.addListener { old, new in blackHole(old.items.count &+ new.items.count) }
      case .projections:
        for stream in BenchState.observeOtherFields(of: store) {
          var iterator = stream.makeAsyncIterator()
          _ = await iterator.next()
          iterators.append(iterator)
        }
      }
      // Drop the initializer's reference to the array: the first mutation copies it once.
      try await store.dispatch(AppendAndDrop())
      let result = try await nanosecondsPerOperation(operations: operations) {
        for _ in 0..<operations { try await store.dispatch(AppendAndDrop()) }
      }
      blackHole(iterators)
      return result
    }
  }

  private func runAppendGroup() async throws {
    for observers in [Observers.none, .projections, .listener] {
      let small = appendCase(size: 10, observers: observers)
      let large = appendCase(size: 1_000_000, observers: observers)
      try await measure([small, large])
      guard observers != .listener, let ratio = perRound(large.name, small.name, /) else { continue }
      check(
        "append to a state array: 1,000,000 elements <= 1.5x 10 elements, \(observers.rawValue)",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.1f ns vs %.1f ns", ratio.median, value(large.name) ?? 0,
          value(small.name) ?? 0),
        met: ratio.median <= 1.5)
    }
  }

  private var streamCase: BenchmarkCase {
    BenchmarkCase(
      name: "stream: subscriber keeping up", relativeCost: 10,
      explanation: "A consumer iterates store.values(of: \\.counter) while one task dispatches; ns per "
        + "dispatch until the consumer has seen the last value."
    ) { operations in
      let store = try await makeStore()
      var iterator = store.values(of: \.counter, buffering: .bufferingNewest(operations + 1)).makeAsyncIterator()
      _ = await iterator.next()
      let consumer = Task {
        var seen = 0
        while let value = await iterator.next() {
          seen += 1
          if value == operations { break }
        }
        return seen
      }
      let result = try await nanosecondsPerOperation(operations: operations) {
        for _ in 0..<operations { try await store.dispatch(Increment()) }
        _ = await consumer.value
      }
      let seen = await consumer.value
      guard seen == operations else {
        throw CorrectnessError(description: "the stream subscriber saw \(seen) of \(operations) values")
      }
      return result
    }
  }

  private func runMemoryCase() async throws {
    let name = "memory: 1,000,000 dispatches with a listener"
    guard options.includes(name) else { return }
    let dispatches = Swift.max(1, options.iterations * 10)
    let store = try await makeStore()
    let calls = Counter()
    store.addListener { _, new in calls.add(new.counter) }
    for _ in 0..<1_000 { try await store.dispatch(Increment()) }
    guard let before = residentMemory() else { return }
    for _ in 0..<dispatches { try await store.dispatch(Increment()) }
    guard let after = residentMemory() else { return }
    let growth = Double(after - before) / 1_048_576
    measurements.append(
      Measurement(
        name: name, kind: .benchmark, unit: "MB", stats: Stats(samples: [growth]),
        explanation: "Resident memory growth over \(dispatches) dispatches with a listener attached."))
    check(
      "\(dispatches) dispatches with a listener attached: resident memory grows by < 10 MB",
      measured: String(format: "%.2f MB", growth), met: growth < 10)
  }

}

/// A counter that listeners can bump from any thread.
final class Counter: @unchecked Sendable {  // Sendable: `count` is only touched under `lock`.
  private let lock = NSLock()
  private var count = 0

  var value: Int {
    lock.lock()
    defer { lock.unlock() }
    return count
  }

  func add(_ amount: Int) {
    lock.lock()
    count &+= amount
    lock.unlock()
  }
}
