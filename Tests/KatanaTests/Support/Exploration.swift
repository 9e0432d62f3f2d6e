// Exhaustive exploration of the store's pure state machines: every order of a small set of events.
//
// A model is a value holding a state machine and the bookkeeping of the actors around it (which task waits,
// which continuation was resumed with what). `exploreEveryOrder` runs a depth-first search over every order
// in which the model's enabled events can happen, copying the model at each branch (machines are values, so
// this is cheap), and calls `check` after every event and at every end. This is the "small scope" half of
// SPEC 8: most concurrency bugs show with a few actors and a few steps, and here every order of them is tried.
import Foundation
import Testing

@testable import Katana

/// One thing that can happen next in a model.
struct ModelEvent<Model> {
  let name: String
  let apply: (inout Model) -> Void
}

/// A model whose events can be explored exhaustively.
protocol ExplorableModel {
  /// What can happen next; an empty array ends the order.
  func enabledEvents() -> [ModelEvent<Self>]
  /// Invariants that hold after every event; returns a description of each violation.
  func violations() -> [String]
  /// Invariants that hold once nothing more can happen.
  func finalViolations() -> [String]
}

/// The outcome of an exploration.
struct ExplorationSummary {
  /// Complete orders explored.
  var orders = 0
  /// Events applied, over all orders.
  var events = 0
  /// The first few violations, each with the order of events that led to it.
  var failures: [String] = []
}

/// Explores every order of `initial`'s events, up to `maxDepth` events per order, and records an issue for the
/// first violations found (with the order that led to each).
///
/// The search runs on a thread of its own: it takes seconds of CPU, which on the cooperative pool (two threads
/// on these machines) would starve the tests running beside it. One search runs at a time, at a lower
/// scheduling priority, so that the explorations never take the machine from the tests that wait for events.
@discardableResult
func exploreEveryOrder<Model: ExplorableModel>(
  _ initial: Model, maxDepth: Int = 40, sourceLocation: SourceLocation = #_sourceLocation
) async -> ExplorationSummary {
  let search = UncheckedBox({ explore(initial, maxDepth: maxDepth) })
  let summary = await withCheckedContinuation { continuation in
    Thread {
      lowerThisThreadsPriority()
      explorationTurn.wait()
      let summary = search.value()
      explorationTurn.signal()
      continuation.resume(returning: summary)
    }.start()
  }
  for failure in summary.failures {
    Issue.record("\(failure)", sourceLocation: sourceLocation)
  }
  if ProcessInfo.processInfo.environment["KATANA_EXPLORATION_REPORT"] != nil {
    print("[exploration] \(Model.self) at \(sourceLocation.line): \(summary.orders) orders, \(summary.events) events")
  }
  return summary
}

/// Lets one exploration search run at a time.
private let explorationTurn = DispatchSemaphore(value: 1)

/// Makes the calling thread yield the CPU to the other threads of the test run (Linux's nice value is per
/// thread, and `who` 0 names the calling thread). Best effort: elsewhere, or if refused, the thread keeps its priority.
private func lowerThisThreadsPriority() {
  #if os(Linux)
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
  #endif
}

/// A value handed to one other thread, which alone uses it afterwards.
private struct UncheckedBox<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}

/// The depth-first search behind ``exploreEveryOrder(_:maxDepth:sourceLocation:)``.
func explore<Model: ExplorableModel>(_ initial: Model, maxDepth: Int) -> ExplorationSummary {
  var summary = ExplorationSummary()
  var trace: [String] = []

  func visit(_ model: Model, depth: Int) {
    guard summary.failures.count < 5 else { return }
    let events = model.enabledEvents()
    if events.isEmpty || depth == maxDepth {
      summary.orders += 1
      for violation in model.finalViolations() {
        summary.failures.append("\(violation)\n  after: \(trace.joined(separator: ", "))")
      }
      if !events.isEmpty {
        summary.failures.append("order longer than \(maxDepth) events\n  after: \(trace.joined(separator: ", "))")
      }
      return
    }
    for event in events {
      var next = model
      event.apply(&next)
      summary.events += 1
      trace.append(event.name)
      let violations = next.violations()
      if violations.isEmpty {
        visit(next, depth: depth + 1)
      } else {
        for violation in violations {
          summary.failures.append("\(violation)\n  after: \(trace.joined(separator: ", "))")
        }
      }
      trace.removeLast()
    }
  }

  visit(initial, depth: 0)
  return summary
}

/// A continuation double: it only names the waiting actor; the models record resumptions themselves.
struct FakeContinuation<Value>: Resumable {
  let owner: Int
  func resumeWaiter(with result: Result<Value, any Error>) {}
}

/// How a waiter was resumed, as the models record it.
enum Outcome: Equatable, CustomStringConvertible {
  case success
  case cancelled
  case failed(String)

  init<Value>(_ result: Result<Value, any Error>) {
    switch result {
    case .success: self = .success
    case .failure(let error as StoreError): self = .failed("\(error)")
    case .failure(is CancellationError): self = .cancelled
    case .failure(let error): self = .failed("\(error)")
    }
  }

  var description: String {
    switch self {
    case .success: "success"
    case .cancelled: "cancelled"
    case .failed(let error): "failed(\(error.prefix(30)))"
    }
  }
}
