import Foundation

/// `swift run -c release katana-benchmarks [--json] [--filter TEXT] [--iterations N] [--batches K] [--no-baselines]`
///
/// Measures the store against baselines taken in the same run (a bare actor call, a lock-protected
/// mutation, a chain of plain async closures) and checks the targets of SPEC section 7. Benchmarks are
/// never part of `swift test`; CI runs this with a tiny iteration count as a smoke test. The README's chart and
/// table are drawn from its `--json` output by `Benchmarks/Report/readme-performance`.
// A child process measuring one round of the legacy scenario (see `LegacyScenario`).
if await LegacyScenario.runIfRequested(CommandLine.arguments) { exit(0) }

let options: Options
do {
  options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch let error as UsageError {
  if let message = error.message { FileHandle.standardError.write(Data("error: \(message)\n".utf8)) }
  print(Options.usage)
  exit(error.message == nil ? 0 : 2)
}

if options.counts {
  let passed = await Task.detached {
    do {
      return try await ContentionCounting.run(checking: options.countThresholds)
    } catch {
      FileHandle.standardError.write(Data("counting failed: \(error)\n".utf8))
      return false
    }
  }.value
  exit(passed ? 0 : 1)
}

// Run on the cooperative pool, not on the main actor: hops to the main queue would dominate.
let outcome = await Task.detached { () async -> Result<Report, any Error> in
  let runner = Runner(options: options)
  do {
    try await runner.run()
  } catch {
    return .failure(error)
  }
  let machine = Report.Machine(
    processors: ProcessInfo.processInfo.activeProcessorCount,
    operatingSystem: ProcessInfo.processInfo.operatingSystemVersionString,
    iterations: options.iterations, batches: options.batches)
  return .success(Report(machine: machine, measurements: runner.measurements, targets: runner.targets))
}.value

switch outcome {
case .failure(let error):
  FileHandle.standardError.write(Data("benchmark failed: \(error)\n".utf8))
  exit(1)
case .success(let report):
  if options.json {
    print(try report.json())
  } else {
    print(report.table())
  }
}
