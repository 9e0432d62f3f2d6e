import Foundation
import Katana
import KatanaBenchmarkBaselines
import KatanaBenchmarkFixtures

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

extension BenchmarkCase {
  /// Times a shared case (`KatanaBenchmarkFixtures`): its set-up and its check of the results are not timed.
  init(_ fixture: BenchmarkFixture) {
    self.init(
      name: fixture.name, kind: fixture.isBaseline ? .baseline : .benchmark, relativeCost: fixture.relativeCost,
      explanation: fixture.explanation
    ) { operations in
      let prepared = try await fixture.prepare(operations: operations)
      let result = try await nanosecondsPerOperation(operations: prepared.operations) { try await prepared.run() }
      try await prepared.verify()
      return result
    }
  }
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

  /// Measures the shared cases that the options select, round-robin.
  func measure(_ fixtures: [BenchmarkFixture]) async throws {
    try await measure(fixtures.map(BenchmarkCase.init))
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
    try await runRecordingGroup()
    try await runContentionGroup()
    try await measure([BenchmarkFixture.stream])
    try await runMemoryCase()
    try await runPromiseGroup()
    try await runLegacyBlockingGroup()
  }

  // MARK: - Groups

  private func runDispatchGroup() async throws {
    try await measure([
      .actorCall, .lockedMutation, .updaterDispatch, .emptySideEffect, .returningSideEffect, .nestedUpdater,
      .sendThroughput,
    ])
    if let ratio = perRound("dispatch: state updater", Self.actorCall, /) {
      check(
        "awaited updater dispatch <= 3x a bare actor call",
        measured: String(
          format: "%.2fx (median of per-round ratios, %.0f%% spread); %.1f ns vs %.1f ns", ratio.median,
          ratio.spread * 100, value("dispatch: state updater") ?? 0, value(Self.actorCall) ?? 0),
        met: ratio.median <= 3)
    }
    if let ratio = perRound("dispatch: empty side effect", Self.actorCall, /) {
      check(
        "awaited empty side effect <= 10x a bare actor call",
        measured: String(
          format: "%.2fx (median of per-round ratios, %.0f%% spread); %.1f ns", ratio.median, ratio.spread * 100,
          value("dispatch: empty side effect") ?? 0),
        met: ratio.median <= 10)
    }
  }

  private func runInterceptorGroup() async throws {
    try await measure([
      .plainClosure, .plainClosureChain, .interceptorArrayChain,
      BenchmarkFixture.updaterDispatch.named(
        "dispatch: state updater (interceptor group)",
        explanation: "The plain updater dispatch again, measured next to the interceptor cases."),
      .updaterDispatchOneInterceptor, .updaterDispatchFiveInterceptors, .updaterDispatchFiveObservers,
      .updaterDispatchOneDispatchInterceptor, .updaterDispatchFiveDispatchInterceptors,
    ])
    checkOneInterceptor(one: "dispatch: state updater, 1 pass-through interceptor", form: "")
    checkOneInterceptor(one: "dispatch: state updater, 1 dispatch interceptor", form: " (DispatchInterceptor)")
    if let added = perRound(
      "dispatch: state updater, 5 observers", "dispatch: state updater (interceptor group)", -)
    {
      let each = added.median / 5
      check(
        "dispatch observers (the non-suspending form) <= 20 ns each",
        measured: String(
          format: "%.1f ns each (five add %.1f ns, median of per-round differences)", each, added.median),
        met: each <= 20)
    }
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
    // Per round: what the five interceptors add to a dispatch, over what five plain async closures cost.
    guard let plain = rounds["baseline: 5 plain async closures"],
      let addedRounds = rounds["dispatch: state updater, 5 interceptors"],
      let dispatchRounds = rounds["dispatch: state updater (interceptor group)"], plain.count == addedRounds.count,
      plain.count == dispatchRounds.count
    else { return }
    let ratio = Stats(samples: plain.indices.map { (addedRounds[$0] - dispatchRounds[$0]) / plain[$0] })
    measured = String(format: "%.2fx five plain async closures (median of per-round ratios); ", ratio.median) + measured
    check(
      "five pass-through interceptors add <= 2x five plain async closure calls", measured: measured,
      met: ratio.median <= 2)
    // The faster form, on the same target.
    let typed = "dispatch: state updater, 5 dispatch interceptors"
    guard let typedRounds = rounds[typed], typedRounds.count == plain.count,
      let typedAdded = perRound(typed, "dispatch: state updater (interceptor group)", -)
    else { return }
    let typedRatio = Stats(samples: plain.indices.map { (typedRounds[$0] - dispatchRounds[$0]) / plain[$0] })
    check(
      "five pass-through interceptors add <= 2x five plain async closure calls (DispatchInterceptor)",
      measured: String(
        format: "%.2fx five plain async closures (median of per-round ratios); %.1f ns added (median of per-round "
          + "differences), against %.1f ns for five closure interceptors",
        typedRatio.median, typedAdded.median, added.median),
      met: typedRatio.median <= 2)
  }

  /// SPEC 7: one pass-through interceptor (`one`, of the form `form` names) costs at most a plain dispatch plus twice
  /// one plain async closure call, compared per round.
  private func checkOneInterceptor(one: String, form: String) {
    let dispatch = "dispatch: state updater (interceptor group)"
    let closure = "baseline: 1 plain async closure"
    guard let oneRounds = rounds[one], let dispatchRounds = rounds[dispatch], let closureRounds = rounds[closure],
      oneRounds.count == dispatchRounds.count, oneRounds.count == closureRounds.count
    else { return }
    let ratio = Stats(
      samples: oneRounds.indices.map { oneRounds[$0] / (dispatchRounds[$0] + 2 * closureRounds[$0]) })
    check(
      "one pass-through interceptor <= a plain dispatch + 2x one async closure call" + form,
      measured: String(
        format: "%.2fx the limit (median of per-round ratios, %.0f%% spread); %.1f ns vs %.1f ns for a plain "
          + "dispatch and %.1f ns for one plain async closure",
        ratio.median, ratio.spread * 100, value(one) ?? 0, value(dispatch) ?? 0, value(closure) ?? 0),
      met: ratio.median <= 1)
  }

  private func runConcurrencyGroup() async throws {
    try await measure([
      BenchmarkFixture.updaterDispatch.named(
        "concurrent: 1 task (reference)",
        explanation: "The single-task dispatch loop, measured next to the 8-task case."),
      .concurrentDispatch,
    ])
    if let throughput = perRound("concurrent: 1 task (reference)", "concurrent: 8 tasks dispatching", /) {
      check(
        "8 concurrent dispatching tasks: aggregate throughput >= 0.8x one task's, no lost update",
        measured: String(
          format: "%.2fx one task's throughput (median of per-round ratios); every update counted",
          throughput.median),
        met: throughput.median >= 0.8)
    }
  }

  private func runAppendGroup() async throws {
    for observers in [AppendObservers.none, .projections, .listener] {
      let small = BenchmarkFixture.append(size: 10, observers: observers)
      let large = BenchmarkFixture.append(size: 1_000_000, observers: observers)
      try await measure([small, large])
      guard observers != .listener, let ratio = perRound(large.name, small.name, /) else { continue }
      check(
        "append to a state array: 1,000,000 elements <= 1.2x 10 elements, \(observers.rawValue)",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.1f ns vs %.1f ns", ratio.median, value(large.name) ?? 0,
          value(small.name) ?? 0),
        met: ratio.median <= 1.2)
    }
  }

  private func runRecordingGroup() async throws {
    let plain = BenchmarkFixture.updaterDispatch.named(
      "dispatch: state updater (recording group)",
      explanation: "The plain updater dispatch again, measured next to the recording cases.")
    let oneInterceptor = BenchmarkFixture.updaterDispatchOneInterceptor.named(
      "dispatch: state updater, 1 pass-through interceptor (recording group)",
      explanation: "The interceptor path a recorder takes, without the recorder.")
    let append = BenchmarkFixture.append(size: 1_000_000, observers: .none).named(
      "append: 1,000,000 elements, no observer (recording group)",
      explanation: "The append without a history, measured next to the undoable one.")
    let send = BenchmarkFixture.sendThroughput.named(
      "send: state updater throughput (recording group)",
      explanation: "The plain send again, measured next to the recorded one.")
    let nested = BenchmarkFixture.nestedUpdater.named(
      "dispatch: nested updater from a side effect (recording group)",
      explanation: "The side effect's nested dispatch again, measured next to the recorded one.")
    try await measure([
      plain, oneInterceptor, .updaterDispatchRecorded, .updaterDispatchRecordedByInterceptor, send, .sendRecorded,
      nested, .nestedUpdaterRecorded, append, .undoableAppend, .undoRedoInvertible, .undoRedoLarge,
    ])
    if let ratio = perRound(BenchmarkFixture.updaterDispatchRecorded.name, plain.name, /) {
      check(
        "awaited updater dispatch with a recorder attached <= 3x the same store without one",
        measured: String(
          format: "%.2fx (median of per-round ratios, %.0f%% spread); %.1f ns vs %.1f ns (as an interceptor, the "
            + "older form: %.1f ns)",
          ratio.median, ratio.spread * 100, value(BenchmarkFixture.updaterDispatchRecorded.name) ?? 0,
          value(plain.name) ?? 0, value(BenchmarkFixture.updaterDispatchRecordedByInterceptor.name) ?? 0),
        met: ratio.median <= 3)
    }
    if let ratio = perRound(BenchmarkFixture.sendRecorded.name, send.name, /) {
      check(
        "send from one thread with a recorder attached <= 3x without one",
        measured: String(
          format: "%.2fx (median of per-round ratios, %.0f%% spread); %.1f ns vs %.1f ns per item", ratio.median,
          ratio.spread * 100, value(BenchmarkFixture.sendRecorded.name) ?? 0, value(send.name) ?? 0),
        met: ratio.median <= 3)
    }
    // A copy of the array would cost about as much as half an undo and redo (each copies it once): compare the
    // undoable append with the interceptor path it takes, and show the append without a history for scale.
    if let ratio = perRound(BenchmarkFixture.undoableAppend.name, oneInterceptor.name, /) {
      check(
        "an undoable append to 1,000,000 elements copies nothing: <= 5x a dispatch through one interceptor",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.1f ns, against %.1f ns without a history (no "
            + "interceptor); an undo and a redo: %.2f ms",
          ratio.median, value(BenchmarkFixture.undoableAppend.name) ?? 0, value(append.name) ?? 0,
          (value(BenchmarkFixture.undoRedoLarge.name) ?? 0) / 1e6),
        met: ratio.median <= 5)
    }
    // An undo and a redo are two dispatches of the history's commands: show what they cost beyond two plain ones.
    if let ratio = perRound(BenchmarkFixture.undoRedoInvertible.name, plain.name, /),
      let beyond = perRound(BenchmarkFixture.undoRedoInvertible.name, plain.name, { $0 - 2 * $1 })
    {
      check(
        "undo then redo of one step on a 1,000,000-element state <= 10x a plain dispatch",
        measured: String(
          format: "%.2fx (median of per-round ratios, %.0f%% spread); %.1f ns vs %.1f ns; %.1f ns beyond two "
            + "plain dispatches; replayed (100 steps, inverse unknown): %.2f ms",
          ratio.median, ratio.spread * 100, value(BenchmarkFixture.undoRedoInvertible.name) ?? 0,
          value(plain.name) ?? 0, beyond.median, (value(BenchmarkFixture.undoRedoLarge.name) ?? 0) / 1e6),
        met: ratio.median <= 10)
    }
  }

  /// SPEC 7 (issue 25's sweep): one store's throughput as callers are added, beside a plain actor and a lock doing
  /// the same mutation with the same callers, each as a ratio to its own one-caller throughput in the same run.
  private func runContentionGroup() async throws {
    // One group per kind of caller, so that every ratio compares batches of the same rounds.
    try await measure(
      [1, 2, 4, 8, 16, 64].flatMap { tasks in
        [
          BenchmarkFixture.contendedActor(tasks: tasks), .contendedLock(.tasks(tasks)),
          .contendedDispatch(tasks: tasks),
        ]
      })
    try await measure(
      [1, 2, 4, 16, 64].flatMap { threads in
        [BenchmarkFixture.contendedLock(.threads(threads)), .contendedSend(threads: threads)]
      })
    func scaling(_ name: (Int) -> String, _ counts: [Int]) -> String {
      counts.dropFirst().compactMap { count in
        perRound(name(1), name(count), /).map { String(format: "%d: %.2fx", count, $0.median) }
      }.joined(separator: ", ")
    }
    let dispatch = { (count: Int) in BenchmarkFixture.contendedDispatch(tasks: count).name }
    let actor = { (count: Int) in BenchmarkFixture.contendedActor(tasks: count).name }
    let lockTasks = { (count: Int) in BenchmarkFixture.contendedLock(.tasks(count)).name }
    let send = { (count: Int) in BenchmarkFixture.contendedSend(threads: count).name }
    let lockThreads = { (count: Int) in BenchmarkFixture.contendedLock(.threads(count)).name }
    let taskCounts = [1, 2, 4, 8, 16, 64]
    let threadCounts = [1, 2, 4, 16, 64]
    let worstDispatch = taskCounts.dropFirst().compactMap { perRound(dispatch(1), dispatch($0), /)?.median }.min()
    let worstSend = threadCounts.dropFirst().compactMap { perRound(send(1), send($0), /)?.median }.min()
    if let worstDispatch {
      check(
        "awaited dispatch from 2-64 tasks keeps >= 0.8x one task's throughput",
        measured: "store \(scaling(dispatch, taskCounts)); actor \(scaling(actor, taskCounts)); lock "
          + scaling(lockTasks, taskCounts),
        met: worstDispatch >= 0.8)
    }
    if let worstSend {
      check(
        "send from 2-64 threads keeps >= 0.8x one thread's throughput",
        measured: "store \(scaling(send, threadCounts)); lock \(scaling(lockThreads, threadCounts))",
        met: worstSend >= 0.8)
    }
    // The store's scaling against the lock's (each as a ratio to its own one-caller throughput, per round): the
    // lock's critical section is one addition, so its absolute speed is not the point, how it holds up is.
    let againstLock = { (store: (Int) -> String, lock: (Int) -> String, counts: [Int]) in
      counts.dropFirst().compactMap { count -> (Int, Double)? in
        guard let own = self.perRound(store(1), store(count), /), let lock = self.perRound(lock(1), lock(count), /)
        else { return nil }
        return (count, own.median / lock.median)
      }
    }
    let sendAgainstLock = againstLock(send, lockThreads, threadCounts)
    let dispatchAgainstLock = againstLock(dispatch, lockTasks, taskCounts)
    if !sendAgainstLock.isEmpty || !dispatchAgainstLock.isEmpty {
      let describe = { (ratios: [(Int, Double)]) in
        ratios.map { String(format: "%d: %.2fx", $0.0, $0.1) }.joined(separator: ", ")
      }
      check(
        "many dispatchers never fall below a lock-protected mutation with the same callers",
        measured: "the store's scaling over the lock's (each against its own one caller): send from threads "
          + "\(describe(sendAgainstLock)); awaited dispatch from tasks \(describe(dispatchAgainstLock))",
        met: (sendAgainstLock + dispatchAgainstLock).allSatisfy { $0.1 >= 1 })
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
