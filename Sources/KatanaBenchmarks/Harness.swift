import Foundation

/// Command-line options.
struct Options {
  var json = false
  var filter: String?
  /// Operations per batch for the fast cases; slower cases scale it down.
  var iterations = 100_000
  var batches = 15
  var baselines = true
  /// `--counts`: print the contention counts instead of timing (a build with `KATANA_CONTENTION_COUNTERS`).
  var counts = false
  /// `--check FILE`: with `--counts`, fail if a count exceeds its bound in FILE.
  var countThresholds: String?

  static let usage = """
    Usage: katana-benchmarks [--json] [--filter TEXT] [--iterations N] [--batches K] [--no-baselines]
           katana-benchmarks --counts [--check FILE]

      --json           print machine-readable results instead of a table
      --filter TEXT    run only the cases whose name contains TEXT (case-insensitive); baselines always run
      --iterations N   operations per batch for the fast cases (default 100000); slower cases scale it down
      --batches K      batches per case (default 15); each case reports the median batch and the spread
      --no-baselines   skip the baselines (for profiling one case); ratios and targets are then not reported
      --counts         count the store lock's acquisitions and hand-overs between threads per item as dispatchers
                       are added (a build with -Xswiftc -DKATANA_CONTENTION_COUNTERS; see .ci/contention-gate)
      --check FILE     with --counts: exit 1 if a count is above its bound in FILE (JSON)
    """

  static func parse(_ arguments: [String]) throws -> Options {
    var options = Options()
    var remaining = arguments[...]
    func value(for flag: String) throws -> String {
      guard let value = remaining.popFirst() else { throw UsageError(message: "\(flag) needs a value") }
      return value
    }
    while let argument = remaining.popFirst() {
      switch argument {
      case "--json": options.json = true
      case "--filter": options.filter = try value(for: argument)
      case "--iterations":
        guard let count = Int(try value(for: argument)), count > 0 else {
          throw UsageError(message: "--iterations needs a positive integer")
        }
        options.iterations = count
      case "--batches":
        guard let count = Int(try value(for: argument)), count > 0 else {
          throw UsageError(message: "--batches needs a positive integer")
        }
        options.batches = count
      case "--no-baselines": options.baselines = false
      case "--counts": options.counts = true
      case "--check": options.countThresholds = try value(for: argument)
      case "--help", "-h": throw UsageError(message: nil)
      default: throw UsageError(message: "unknown argument \(argument)")
      }
    }
    return options
  }

  func includes(_ name: String) -> Bool {
    guard let filter else { return true }
    return name.range(of: filter, options: .caseInsensitive) != nil
  }
}

struct UsageError: Error {
  let message: String?
}

/// The batches of one measurement, in nanoseconds per operation.
struct Stats: Codable {
  let samples: [Double]

  var median: Double {
    let sorted = samples.sorted()
    let middle = sorted.count / 2
    return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
  }

  var minimum: Double { samples.min() ?? 0 }
  var maximum: Double { samples.max() ?? 0 }

  /// (max - min) / median, as a fraction.
  var spread: Double { median > 0 ? (maximum - minimum) / median : 0 }
}

/// Times `operations` operations; returns nanoseconds per operation.
func nanosecondsPerOperation(operations: Int, _ body: () async throws -> Void) async rethrows -> Double {
  let clock = ContinuousClock()
  let start = clock.now
  try await body()
  let elapsed = clock.now - start
  let nanoseconds =
    Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
  return nanoseconds / Double(operations)
}
