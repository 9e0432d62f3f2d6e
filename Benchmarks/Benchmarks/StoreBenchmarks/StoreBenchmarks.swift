import Benchmark
import Foundation
import KatanaBenchmarkFixtures

/// Every case of `KatanaBenchmarkFixtures` (the cases `katana-benchmarks` times), measured by package-benchmark:
/// wall clock, allocations and, where the machine has a hardware counter for them, instructions.
///
/// Each run of a case performs 1,000 operations (`scalingFactor: .kilo`) on a store made ready before the
/// measurement starts, and checks their results after it stops. The text output shows counts per operation
/// (the rows marked `*`); the committed thresholds (`Thresholds/<Swift version>/`) are per run of 1,000
/// operations, so 1,000 there is one allocation per operation.
let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = .init(
    metrics: reportedMetrics, timeUnits: .nanoseconds, warmupIterations: 2, scalingFactor: .kilo,
    maxDuration: .seconds(2), maxIterations: 20)

  for fixture in BenchmarkFixture.all {
    var configuration = Benchmark.defaultConfiguration
    configuration.thresholds = [
      .mallocCountTotal: BenchmarkThresholds(
        absolute: [.p90: Int(allocationTolerance(fixture.name) * Double(operationsPerRun))])
    ]
    // A run of the slowest cases takes up to a third of a second (a listener copying a 1,000,000-element array on
    // each append, a .katana6 side effect on a thread of its own); their counts need no more runs than this.
    if fixture.relativeCost >= 100 {
      configuration.warmupIterations = 1
      configuration.maxIterations = 5
    }
    Benchmark(fixture.identifier, configuration: configuration) { benchmark in
      let prepared = try await fixture.prepare(operations: benchmark.scaledIterations.count)
      benchmark.startMeasurement()
      try await prepared.run()
      benchmark.stopMeasurement()
      try await prepared.verify()
    }
  }
}

/// The operations in one run of a case.
let operationsPerRun = BenchmarkScalingFactor.kilo.rawValue

/// Allocations per operation by which a case may exceed (or undercut) its committed count before the check
/// fails: 0.05 (50 per run) for every case whose count is the same in every run, more for the few whose count
/// depends on timing.
///
/// Most counts are the same in every run, on a quiet machine and on one whose two cores are both loaded: the
/// tolerance only absorbs an allocation the runtime may make now and then, while one more allocation per
/// operation (1,000 per run) fails. The cases below hand work to the main queue or to threads of their own, where
/// how often a waiting thread goes to sleep, and whether a new thread reuses the stack of one that has exited,
/// depend on timing. Their ranges are what about twenty runs (alone and in the whole suite, a third of them with
/// both cores busy) measured per run of 1,000 operations, Swift 6.3.1 on a 2-core Linux machine. The .katana6 case
/// starts a thread per side effect, so its gate catches only a gross regression.
func allocationTolerance(_ name: String) -> Double {
  switch name {
  case "baseline: main-queue round trip": 1.5  // 4,001 to 5,001
  case "promise: awaited dispatch", "promise: awaited dispatch, main actor": 0.75  // 17,631 to 18,002
  case "promise: Hydra.await round trip, side effect (.katana6)": 7.5  // 45,268 to 50,012
  default: 0.05
  }
}

/// Wall clock and allocations; instructions too where the kernel has a hardware counter for them. package-benchmark
/// reads instructions with `perf_event_open` on Linux (`rusage` on macOS); asking for them on a machine without a
/// counter, such as a virtual machine that hides the processor's (this project's CI machines), gives no values
/// and adds 16 allocations of its own to every run. The threshold check counts allocations alone.
let reportedMetrics: [BenchmarkMetric] =
  [.wallClock, .mallocCountTotal, .mallocBytesCount] + (hasInstructionCounter ? [.instructions] : [])

/// Whether the kernel has a processor performance-monitoring unit: one registered as `PERF_TYPE_RAW` (4), as
/// `cpu` is on x86 and `armv8_pmuv3` on ARM.
var hasInstructionCounter: Bool {
  #if os(Linux)
    let devices = "/sys/bus/event_source/devices"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: devices)) ?? []
    return names.contains { name in
      let type = try? String(contentsOfFile: "\(devices)/\(name)/type", encoding: .utf8)
      return type?.trimmingCharacters(in: .whitespacesAndNewlines) == "4"
    }
  #else
    return true
  #endif
}
