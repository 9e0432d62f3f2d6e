import Foundation

/// One step of the tour: a title, and a body that shows something, checks that it behaved as stated, and
/// ends by saying what it proved.
struct Step: Sendable {
  let title: String
  let run: @Sendable (Trace) async throws -> Void
}

/// Thrown by a step whose behaviour differs from what the tour states; the tour then exits non-zero.
struct TourFailure: Error, CustomStringConvertible {
  let description: String
}

/// Where a step writes its part of the trace. Steps write only from their own flow, never from tasks they
/// start, so that the output is the same on every run.
struct Trace: Sendable {
  /// A line of the trace, indented under the step's title.
  func say(_ line: String) {
    print("   \(line)")
  }

  /// The step's last line: what it proved, once its checks have passed. Wrapped to stay readable in a
  /// terminal.
  func proves(_ claim: String) {
    var lines: [String] = []
    var line = "   proves:"
    for word in claim.split(separator: " ") {
      if line.count + 1 + word.count > Self.width, line.count > Self.provesIndent.count {
        lines.append(line)
        line = Self.provesIndent
      }
      line += " " + word
    }
    lines.append(line)
    print(lines.joined(separator: "\n"))
  }

  private static let width = 110
  private static let provesIndent = "          "

  /// Fails the step with `message` unless `condition` holds.
  func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition {
      throw TourFailure(description: message())
    }
  }

  /// Fails the step unless `actual` equals `expected`.
  func expect<T: Equatable>(_ actual: T, _ expected: T, _ what: String) throws {
    try check(actual == expected, "\(what): expected \(expected), got \(actual)")
  }

  /// Fails the step unless `outcome` is a failure with `CancellationError`.
  func expectCancelled<T>(_ outcome: Result<T, any Error>, _ what: String) throws {
    switch outcome {
    case .success(let value):
      throw TourFailure(description: "\(what): expected CancellationError, got the value \(value)")
    case .failure(let error):
      try check(error is CancellationError, "\(what): expected CancellationError, got \(error)")
    }
  }
}

/// Runs the steps in order, numbering them, and exits non-zero with a clear message on the first step that
/// fails or hangs.
enum Tour {
  /// How long a step may take before the tour calls it hung. A failsafe only: every step synchronises on
  /// events and finishes in milliseconds.
  static let hangLimitSeconds = 60

  static func run(_ steps: [Step]) async -> Never {
    let current = Protected(0)
    for (index, step) in steps.enumerated() {
      let number = index + 1
      current.withLock { $0 = number }
      armWatchdog(step: number, title: step.title, current: current)
      print("\n\(number). \(step.title)")
      do {
        try await step.run(Trace())
      } catch {
        fail("step \(number) (\(step.title)) did not behave as stated: \(error)")
      }
    }
    current.withLock { $0 = 0 }
    print("\nAll \(steps.count) steps behaved as stated.")
    exit(0)
  }

  private static func armWatchdog(step: Int, title: String, current: Protected<Int>) {
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(hangLimitSeconds)) {
      if current.current == step {
        fail("step \(step) (\(title)) has not finished after \(hangLimitSeconds) s; it hangs")
      }
    }
  }

  private static func fail(_ message: String) -> Never {
    fflush(nil)  // every stream: the trace so far, before the failure
    FileHandle.standardError.write(Data("\nkatana-demo FAILED: \(message)\n".utf8))
    exit(1)
  }
}
