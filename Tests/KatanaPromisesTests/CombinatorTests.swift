import Dispatch
import KatanaPromises
import KatanaTestSupport
import Testing

@Suite("all", .timeLimit(.failsafeMinutes(3)))
struct AllTests {
  @Test func values_comeBackInInputOrder_whateverOrderTheyResolveIn() async throws {
    let promises = (0..<5).map { _ in Promise<Int>() }
    let combined = all(promises)
    for (index, promise) in promises.enumerated().reversed() {
      promise.resolve(index * 10)
    }
    #expect(try await combined.value == [0, 10, 20, 30, 40])
  }

  @Test func variadicForm() async throws {
    #expect(try await all(Promise(resolved: 1), Promise(resolved: 2)).value == [1, 2])
  }

  @Test func firstRejection_rejects() async throws {
    let pending = Promise<Int>()
    let combined = all([Promise(resolved: 1), pending, Promise(rejected: TestError(code: 2))])
    await #expect(throws: TestError(code: 2)) { try await combined.value }
    #expect(pending.isPending)
  }

  @Test func cancellation_cancels() async throws {
    let first = Promise<Int>()
    let combined = all([first, Promise<Int>()])
    first.cancel()
    await #expect(throws: CancellationError.self) { try await combined.value }
  }

  @Test func noPromises_orZeroConcurrency_resolvesEmpty() async throws {
    #expect(try await all([Promise<Int>]()).value == [])
    #expect(try await all([Promise(resolved: 1)], concurrency: 0).value == [])
  }

  @Test func isLazy_bodiesStartWhenItIsObserved() async throws {
    let queue = TestQueue()
    let runs = LockedValue(0)
    let promises = (0..<3).map { index in
      Promise<Int>(in: queue.context) { resolve, _, _ in
        runs.withLock { $0 += 1 }
        resolve(index)
      }
    }
    let combined = all(promises)
    queue.drain()
    #expect(runs.current == 0)
    #expect(try await combined.value == [0, 1, 2])
    #expect(runs.current == 3)
  }

  @Test func concurrency_limitsHowManyBodiesRunAtOnce() async throws {
    let running = LockedValue((now: 0, peak: 0))
    let started = EventCounter()
    let release = (0..<6).map { _ in Gate() }
    let promises = (0..<6).map { index in
      Promise<Int> { resolve, _, _ in
        running.withLock {
          $0.now += 1
          $0.peak = max($0.peak, $0.now)
        }
        started.increment()
        release[index].waitBlocking()
        running.withLock { $0.now -= 1 }
        resolve(index)
      }
    }
    let combined = all(promises, concurrency: 2)
    let result = Task { try await combined.value }
    for index in 0..<6 {
      // Body `index` can only start once `index - 2` has finished.
      await started.wait(for: min(index + 2, 6))
      #expect(started.count == min(index + 2, 6))
      release[index].open()
    }
    #expect(try await result.value == [0, 1, 2, 3, 4, 5])
    #expect(running.current.peak == 2)
  }
}

@Suite("any", .timeLimit(.failsafeMinutes(3)))
struct AnyTests {
  @Test func aCancellationFirst_cancelsTheResult() async throws {
    let first = Promise<Int>()
    let second = Promise<Int>()
    let winner = failsafe(any(first, second))
    second.cancel()
    first.resolve(1)
    await #expect(throws: CancellationError.self) { try await winner.value }
  }

  @Test func firstResolution_wins() async throws {
    let first = Promise<Int>()
    let second = Promise<Int>()
    let winner = any(first, second)
    second.resolve(2)
    first.resolve(1)
    #expect(try await winner.value == 2)
  }

  @Test func firstRejection_wins_asInHydra() async throws {
    let first = Promise<Int>()
    let second = Promise<Int>()
    let winner = any([first, second])
    second.reject(TestError(code: 2))
    first.resolve(1)
    await #expect(throws: TestError(code: 2)) { try await winner.value }
  }

  @Test func startsTheLazyBodies() async throws {
    let winner = any(Promise<Int> { _, _, _ in }, Promise<Int> { resolve, _, _ in resolve(3) })
    #expect(try await winner.value == 3)
  }

  @Test func noPromises_rejectsWithInvalidInput() async throws {
    await #expect(throws: PromiseError.invalidInput) { try await any([Promise<Int>]()).value }
  }
}

@Suite("zip", .timeLimit(.failsafeMinutes(3)))
struct ZipTests {
  @Test func aCancelledInput_cancelsTheZip() async throws {
    let a = Promise<Int>()
    let zipped = failsafe(zip(a, Promise<String>()))
    a.cancel()
    await #expect(throws: CancellationError.self) { try await zipped.value }
  }

  @Test func two() async throws {
    let a = Promise<Int>()
    let zipped = zip(a, Promise(resolved: "b"))
    a.resolve(1)
    let (first, second) = try await zipped.value
    #expect(first == 1 && second == "b")
  }

  @Test func three() async throws {
    let values = try await zip(a: Promise(resolved: 1), b: Promise(resolved: "b"), c: Promise(resolved: true)).value
    #expect(values.0 == 1 && values.1 == "b" && values.2 == true)
  }

  @Test func four() async throws {
    let values = try await zip(
      a: Promise(resolved: 1), b: Promise(resolved: "b"), c: Promise(resolved: true), d: Promise(resolved: 4.5)
    ).value
    #expect(values.0 == 1 && values.1 == "b" && values.2 == true && values.3 == 4.5)
  }

  @Test func aRejection_rejects() async throws {
    let zipped = zip(Promise<Int>(), Promise<String>(rejected: TestError(code: 1)))
    await #expect(throws: TestError(code: 1)) { try await zipped.value }
    let four = zip(
      a: Promise(resolved: 1), b: Promise(resolved: 2), c: Promise(resolved: 3),
      d: Promise<Int>(rejected: TestError(code: 4)))
    await #expect(throws: TestError(code: 4)) { try await four.value }
  }

  @Test func startsLazyBodies_andNeedsNoMainQueue() async throws {
    let zipped = zip(Promise<Int>(in: .utility) { resolve, _, _ in resolve(1) }, Promise(resolved: 2))
    let (a, b) = try await zipped.value
    #expect(a == 1 && b == 2)
  }
}

@Suite("map and reduce", .timeLimit(.failsafeMinutes(3)))
struct MapReduceTests {
  /// A transform that logs when it runs and when its promise's body runs.
  static func loggingTransform(_ log: Recorder<String>) -> @Sendable (Int) throws -> Promise<Int> {
    { item in
      log.append("transform \(item)")
      return Promise(in: .background) { resolve, _, _ in
        log.append("body \(item)")
        resolve(item * 10)
      }
    }
  }

  @Test func parallel_transformsEveryItemFirst_thenRunsThePromisesTogether() async throws {
    let log = Recorder<String>()
    let values = try await map(as: .parallel, [1, 2, 3], Self.loggingTransform(log)).value
    #expect(values == [10, 20, 30])
    #expect(Array(log.values.prefix(3)) == ["transform 1", "transform 2", "transform 3"])
    #expect(Set(log.values.suffix(3)) == ["body 1", "body 2", "body 3"])
  }

  @Test func series_runsOneItemAfterTheOther() async throws {
    let log = Recorder<String>()
    let values = try await map(as: .series, [1, 2, 3], Self.loggingTransform(log)).value
    #expect(values == [10, 20, 30])
    #expect(log.values == ["transform 1", "body 1", "transform 2", "body 2", "transform 3", "body 3"])
  }

  @Test func mapSeries_isTheSeriesForm() async throws {
    let log = Recorder<String>()
    let values = try await map_series(context: .utility, items: [1, 2], transform: Self.loggingTransform(log)).value
    #expect(values == [10, 20])
    #expect(log.values == ["transform 1", "body 1", "transform 2", "body 2"])
  }

  @Test func map_runsTheTransformOnBackground_byDefault() async throws {
    let labels = Recorder<String>()
    _ = try await map(as: .parallel, [1]) { item in
      labels.append(currentQueueLabel)
      return Promise(resolved: item)
    }.value
    #expect(labels.values == [Context.background.label])
  }

  @Test func map_throwingOrRejecting_rejects() async throws {
    let thrown = map(as: .parallel, [1, 2]) { item -> Promise<Int> in
      if item == 2 { throw TestError(code: 2) }
      return Promise(resolved: item)
    }
    await #expect(throws: TestError(code: 2)) { try await thrown.value }
    let rejected = map(as: .series, [1, 2, 3]) { item in
      item == 2 ? Promise<Int>(rejected: TestError(code: item)) : Promise(resolved: item)
    }
    await #expect(throws: TestError(code: 2)) { try await rejected.value }
  }

  @Test func reduce_foldsInOrder_onMain_byDefault() async throws {
    let labels = Recorder<String>()
    let joined = try await reduce(["a", "b", "c"], "") { partial, item in
      labels.append(currentQueueLabel)
      return Promise(resolved: partial + item)
    }.value
    #expect(joined == "abc")
    #expect(labels.values == Array(repeating: Context.main.label, count: 3))
  }

  @Test func reduce_rejectsWithTheFirstError() async throws {
    let reduced = reduce(in: .background, [1, 2, 3], 0) { partial, item -> Promise<Int> in
      if item == 2 { throw TestError(code: 2) }
      return Promise(resolved: partial + item)
    }
    await #expect(throws: TestError(code: 2)) { try await reduced.value }
  }

  @Test func reduce_noItems_resolvesTheInitialValue() async throws {
    #expect(try await reduce([Int](), 7) { partial, _ in Promise(resolved: partial) }.value == 7)
  }
}

@Suite("Combined promises are released once settled", .timeLimit(.failsafeMinutes(3)))
struct CombinedPromiseReleaseTests {
  /// A combinator applied to an input that never settles and an input that settles it.
  enum Combination: String, CaseIterable, Sendable {
    case anyResolvedByTheOtherInput
    case anyCancelled
    case allRejectedByTheOtherInput
    case allCancelled
    case allWithAConcurrencyLimit
  }

  @Test(arguments: Combination.allCases)
  func combinedPromise_settledWhileAnInputNeverSettles_isReleasedWithItsInputs(combination: Combination) async {
    // The combined promise keeps its body (for `retry`), which keeps the inputs; the input that never settles
    // keeps the observer that settles the combined promise. Once settled, that observer must let go.
    weak var weakCombined: AnyObject?
    weak var weakNeverSettles: Promise<Int>?
    do {
      let neverSettles = Promise<Int>()
      let combined: AnyObject
      switch combination {
      case .anyResolvedByTheOtherInput:
        let promise = any(neverSettles, Promise(resolved: 1))
        _ = try? await promise.value
        combined = promise
      case .anyCancelled:
        let promise = any(neverSettles, Promise<Int>())
        promise.cancel()
        _ = try? await promise.value
        combined = promise
      case .allRejectedByTheOtherInput:
        let promise = all(neverSettles, Promise(rejected: TestError(code: 1)))
        _ = try? await promise.value
        combined = promise
      case .allCancelled:
        let promise = all(neverSettles, Promise<Int>())
        _ = promise.void  // observed: `all` runs its body, which observes the inputs
        promise.cancel()
        _ = try? await promise.value
        combined = promise
      case .allWithAConcurrencyLimit:
        let promise = all([neverSettles, Promise<Int>(), Promise(rejected: TestError(code: 1))], concurrency: 1)
        _ = promise.void
        promise.cancel()
        _ = try? await promise.value
        combined = promise
      }
      weakCombined = combined
      weakNeverSettles = neverSettles
    }
    #expect(weakCombined == nil)
    #expect(weakNeverSettles == nil)
  }

  @Test func any_retried_observesItsInputsAgain() async throws {
    // Letting go of the inputs once settled must not break `retry`: the body runs again and observes them.
    let pending = Promise<Int>()
    let retried = any(pending, Promise(rejected: TestError(code: 1))).retryWhen(2) { _, _ in
      pending.resolve(5)
      return Promise(resolved: true)
    }
    #expect(try await retried.value == 5)
  }
}
