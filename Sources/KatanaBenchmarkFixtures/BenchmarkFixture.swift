/// One benchmark case, written once and run by both harnesses: `katana-benchmarks` times it against
/// baselines measured in the same run (SPEC 7's ratios), and the `Benchmarks/` package counts its allocations
/// (and instructions, where the machine has counters) against committed thresholds.
///
/// A case has two parts: ``prepare(operations:)`` builds what the operations need (a ready store, scopes,
/// observers), which is not measured, and returns a ``PreparedFixture`` whose ``PreparedFixture/run`` performs
/// the operations (measured) and whose ``PreparedFixture/verify`` checks their result afterwards (no lost
/// update, every value seen).
public struct BenchmarkFixture: Sendable {
  /// The case's name in `katana-benchmarks`'s report (its table, its JSON, the README's table).
  public let name: String
  /// Whether this is a baseline: the same work without the store, a floor that cases are compared with.
  public let isBaseline: Bool
  /// How much slower than a fast case one operation is; `katana-benchmarks` divides its operation count by it.
  public let relativeCost: Int
  /// One sentence on what is measured, for the reports.
  public let explanation: String
  private let prepareOperations: @Sendable (_ operations: Int) async throws -> PreparedFixture

  /// A case; see the properties of the same names.
  public init(
    name: String, isBaseline: Bool = false, relativeCost: Int = 1, explanation: String,
    prepare: @escaping @Sendable (_ operations: Int) async throws -> PreparedFixture
  ) {
    self.name = name
    self.isBaseline = isBaseline
    self.relativeCost = relativeCost
    self.explanation = explanation
    self.prepareOperations = prepare
  }

  /// The case's name in the `Benchmarks/` package: ``name`` in lower case, with words joined by hyphens and no
  /// other punctuation (`dispatch: state updater, 5 interceptors` is `dispatch-state-updater-5-interceptors`),
  /// because it also names the case's threshold file.
  public var identifier: String {
    var identifier = ""
    for character in name.lowercased() where character != "," {
      if character.isASCII && (character.isLetter || character.isNumber) {
        identifier.append(character)
      } else if !identifier.isEmpty && identifier.last != "-" {
        identifier.append("-")
      }
    }
    return identifier.last == "-" ? String(identifier.dropLast()) : identifier
  }

  /// Builds what `operations` operations need; the returned value performs them.
  public func prepare(operations: Int) async throws -> PreparedFixture {
    try await prepareOperations(Swift.max(1, operations))
  }

  /// The same case under another name, for a report that measures it again next to other cases.
  public func named(_ name: String, explanation: String) -> BenchmarkFixture {
    BenchmarkFixture(
      name: name, isBaseline: isBaseline, relativeCost: relativeCost, explanation: explanation,
      prepare: prepareOperations)
  }
}

/// A case made ready for a number of operations.
public struct PreparedFixture {
  /// The number of operations ``run`` performs (a case may round the requested count, for example to a multiple
  /// of its task count).
  public let operations: Int
  /// Performs the operations: the measured part.
  public let run: () async throws -> Void
  /// Checks what the operations did (not measured); throws ``CorrectnessError`` if something was lost.
  public let verify: () async throws -> Void

  /// A prepared case; see the properties of the same names.
  public init(
    operations: Int, run: @escaping () async throws -> Void, verify: @escaping () async throws -> Void = {}
  ) {
    self.operations = operations
    self.run = run
    self.verify = verify
  }
}

/// A check the benchmarks make on the store's results (for example: no lost update).
public struct CorrectnessError: Error, CustomStringConvertible {
  /// What went wrong.
  public let description: String

  /// An error with the given description.
  public init(description: String) {
    self.description = description
  }
}

extension BenchmarkFixture {
  /// Every case, in the order `katana-benchmarks` reports them, without the repeats that it measures again
  /// next to other groups (those are the same operations under another name).
  public static var all: [BenchmarkFixture] {
    [
      actorCall, lockedMutation,
      updaterDispatch, emptySideEffect, returningSideEffect, nestedUpdater, sendThroughput,
      plainClosure, plainClosureChain, interceptorArrayChain, updaterDispatchFiveInterceptors,
      updaterDispatchOneInterceptor, updaterDispatchInstrumentation, updaterDispatchFiveObservers,
      updaterDispatchOneDispatchInterceptor, updaterDispatchFiveDispatchInterceptors,
      concurrentDispatch,
    ]
      + AppendObservers.allCases.flatMap { [append(size: 10, observers: $0), append(size: 1_000_000, observers: $0)] }
      + [
        scopeRootDispatch, scopeDispatch, nestedScopeDispatch, scopeRootDispatchFiveInterceptors,
        scopeDispatchFiveInterceptors, scopedAppend(size: 10), scopedAppend(size: 1_000_000),
        otherFeatures(observers: 0), otherFeatures(observers: 10),
        stream,
        mainQueueRoundTrip, mainQueuePosts, awaitedPromise, awaitedPromiseOnMainActor,
        pipelinedPromiseOnMainActor, hydraAwaitUpdater, hydraAwaitKatana6SideEffect, pipelinedPromise,
        updaterDispatchRecorded, sendRecorded, updaterDispatchRecordedByInterceptor, nestedUpdaterRecorded,
        undoableAppend,
        undoRedoInvertible, undoRedoLarge,
      ]
  }
}
