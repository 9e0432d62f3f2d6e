import Foundation
import KatanaBenchmarkFixtures
import KatanaPromises

extension Runner {
  /// SPEC 7: the promise path within 1.2x a bare main-queue round trip (awaited) and 2x a bare main-queue post
  /// (pipelined), both measured in the same run: `then` runs on the main queue, as in Katana 6.
  func runPromiseGroup() async throws {
    try await measure([
      .mainQueueRoundTrip, .mainQueuePosts, .awaitedPromise, .awaitedPromiseOnMainActor, .pipelinedPromiseOnMainActor,
      .hydraAwaitUpdater, .hydraAwaitKatana6SideEffect, .pipelinedPromise,
    ])
    if let ratio = perRound("promise: awaited dispatch", "baseline: main-queue round trip", /) {
      check(
        "awaited promise dispatch <= 1.2x a bare main-queue round trip",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.2f µs vs %.2f µs", ratio.median,
          (value("promise: awaited dispatch") ?? 0) / 1_000, (value("baseline: main-queue round trip") ?? 0) / 1_000),
        met: ratio.median <= 1.2)
    }
    if let ratio = perRound("promise: pipelined dispatch", "baseline: main-queue posts, pipelined", /) {
      check(
        "pipelined promise dispatch <= 2x a bare main-queue post",
        measured: String(
          format: "%.2fx (median of per-round ratios); %.2f µs vs %.2f µs", ratio.median,
          (value("promise: pipelined dispatch") ?? 0) / 1_000,
          (value("baseline: main-queue posts, pipelined") ?? 0) / 1_000),
        met: ratio.median <= 2)
    }
  }
}

extension Runner {
  static let blockedOperationsBaseline = "baseline: 10 operations blocking on a serial queue"
  static let blockedOperations = "promise: 10 operations blocking in Hydra.await (.katana6)"

  /// SPEC 7: legacy code blocking Dispatch's worker threads never delays a `.katana6` store's own work: the
  /// scenario stays within 2x of the same hand-offs done with plain Dispatch.
  ///
  /// Each sample is one round of ten operations in a new process of its own (``LegacyScenario``): a stall
  /// behind blocked workers happens while libdispatch's pool has its initial size (one worker per core per
  /// quality of service); once it has added workers, it keeps them for a few seconds, and later rounds in the
  /// same process would not show it.
  func runLegacyBlockingGroup() async throws {
    try await measure([
      BenchmarkCase(
        name: Self.blockedOperationsBaseline, kind: .baseline,
        explanation: "Ten OperationQueue operations each hand an increment to a serial queue (Katana 6's "
          + "store was one) and block until it ran; ns per round of ten, in a new process. The floor for the "
          + "case below."
      ) { _ in try await LegacyScenario.serialQueue.measureInNewProcess() },
      BenchmarkCase(
        name: Self.blockedOperations,
        explanation: "Ten OperationQueue operations each block in Hydra.await(in: .background, "
          + "store.dispatch(Increment())) on a .katana6 store with an interceptor, so that each update is "
          + "applied by a task the store starts while the operations block Dispatch's workers; ns per round of "
          + "ten, in a new process."
      ) { _ in try await LegacyScenario.katana6Store.measureInNewProcess() },
    ])
    if let ratio = perRound(Self.blockedOperations, Self.blockedOperationsBaseline, /) {
      check(
        "legacy code blocking Dispatch's workers: a .katana6 store's work within 2x plain Dispatch",
        measured: String(
          format: "%.2fx (median of per-round ratios, %.0f%% spread); %.1f µs vs %.1f µs per round of ten",
          ratio.median, ratio.spread * 100, (value(Self.blockedOperations) ?? 0) / 1_000,
          (value(Self.blockedOperationsBaseline) ?? 0) / 1_000),
        met: ratio.median <= 2)
    }
  }
}

/// One round of ten `OperationQueue` operations that each block until their update is applied, measured in a
/// process of its own: `katana-benchmarks --legacy-scenario NAME` runs it and prints nanoseconds.
enum LegacyScenario: String {
  /// The operations hand their update to a serial queue and wait on a semaphore.
  case serialQueue = "serial-queue"
  /// The operations block in `Hydra.await` on a dispatch to a `.katana6` store with an interceptor.
  case katana6Store = "katana6-store"

  static let flag = "--legacy-scenario"
  static let operations = 10

  /// Runs the scenario named after ``flag`` and prints its time, if the arguments ask for one; returns
  /// whether they did.
  static func runIfRequested(_ arguments: [String]) async -> Bool {
    guard let index = arguments.firstIndex(of: flag) else { return false }
    guard index + 1 < arguments.count, let scenario = LegacyScenario(rawValue: arguments[index + 1]) else {
      FileHandle.standardError.write(Data("error: \(flag) needs serial-queue or katana6-store\n".utf8))
      exit(2)
    }
    do {
      print(try await scenario.run())
    } catch {
      FileHandle.standardError.write(Data("legacy scenario failed: \(error)\n".utf8))
      exit(1)
    }
    return true
  }

  /// Runs the scenario in this process; returns nanoseconds for the round (set-up excluded).
  func run() async throws -> Double {
    let counter = Counter()
    let work: @Sendable () throws -> Void
    switch self {
    case .serialQueue:
      let state = DispatchQueue(label: "baseline.store")
      work = {
        let applied = DispatchSemaphore(value: 0)
        state.async {
          counter.add(1)
          applied.signal()
        }
        applied.wait()
      }
    case .katana6Store:
      let store = BenchStore(initialState: BenchState(), interceptors: [passThrough], configuration: .katana6)
      try await store.waitUntilReady()
      work = {
        try Hydra.await(in: .background, store.dispatch(Increment()))
        counter.add(1)
      }
    }
    let failures = Counter()
    let result = try await nanosecondsPerOperation(operations: 1) {
      try await onLegacyThread {
        let queue = OperationQueue()
        for _ in 0..<Self.operations {
          queue.addOperation {
            do { try work() } catch { failures.add(1) }
          }
        }
        queue.waitUntilAllOperationsAreFinished()
      }
    }
    guard failures.value == 0, counter.value == Self.operations else {
      throw CorrectnessError(description: "\(rawValue): \(counter.value) of \(Self.operations) updates applied")
    }
    return result
  }

  /// Runs the scenario in a new process of this executable and returns the time it reports.
  func measureInNewProcess() async throws -> Double {
    let process = Process()
    process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = [Self.flag, rawValue]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = try await onLegacyThread { output.fileHandleForReading.readDataToEndOfFile() }
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard process.terminationStatus == 0, let nanoseconds = Double(text) else {
      throw CorrectnessError(description: "\(rawValue) scenario exited with \(process.terminationStatus)")
    }
    return nanoseconds
  }
}
