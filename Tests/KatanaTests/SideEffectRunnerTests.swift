import KatanaTestSupport
import Testing

@testable import Katana

/// A runner that marks the bodies it runs, so that a side effect can tell whether it ran through it.
struct MarkingRunner: SideEffectRunner {
  @TaskLocal static var isInside = false
  let runs = EventCounter()

  func run<T: Sendable>(_ body: sending nonisolated(nonsending) () async throws -> T) async throws -> T {
    runs.increment()
    return try await Self.$isInside.withValue(true) { try await body() }
  }
}

/// Records whether its body ran inside the marking runner.
struct ReportRunner: SideEffect {
  let seen: Recorder<Bool>
  func sideEffect(_ context: SideEffectContext<CounterState, TestDependencies>) async throws {
    seen.append(MarkingRunner.isInside)
  }
}

struct ReportRunnerReturning: ReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) async throws -> Bool { MarkingRunner.isInside }
}

@Suite("Side-effect runner", .timeLimit(.failsafeMinutes(3)))
struct SideEffectRunnerTests {
  func makeStore(interceptors: [StoreInterceptor] = [], runner: MarkingRunner) async throws -> TestStore {
    var configuration = StoreConfiguration()
    configuration.sideEffectRunner = runner
    let store = TestStore(
      interceptors: interceptors, stateInitializer: { CounterState() }, configuration: configuration)
    try await store.waitUntilReady()
    return store
  }

  @Test(arguments: [false, true])
  func everySideEffectBody_runsThroughTheRunner(withInterceptors: Bool) async throws {
    let runner = MarkingRunner()
    let passThrough: StoreInterceptor = { _ in { next in { item in try await next(item) } } }
    let store = try await makeStore(interceptors: withInterceptors ? [passThrough] : [], runner: runner)
    let seen = Recorder<Bool>()
    try await store.dispatch(ReportRunner(seen: seen))
    #expect(try await store.dispatch(ReportRunnerReturning()))
    _ = try await store.anyDispatch(ReportRunner(seen: seen))
    #expect(try await store.anyDispatch(ReportRunnerReturning()) as? Bool == true)
    try await store.send(ReportRunner(seen: seen)).value
    #expect(try await store.send(ReportRunnerReturning()).value)
    #expect(seen.values == [true, true, true])
    #expect(runner.runs.count == 6)
  }

  @Test func substitutedSideEffect_runsThroughTheRunner() async throws {
    let runner = MarkingRunner()
    let seen = Recorder<Bool>()
    let substituting: StoreInterceptor = { _ in
      { next in
        { item in
          if item is IncrementTwice {
            try await next(ReportRunner(seen: seen))
          } else {
            try await next(item)
          }
        }
      }
    }
    let store = try await makeStore(interceptors: [substituting], runner: runner)
    try await store.dispatch(IncrementTwice())
    #expect(seen.values == [true])
  }

  @Test func withoutARunner_bodiesRunDirectly() async throws {
    let store = try await makeReadyStore()
    let seen = Recorder<Bool>()
    try await store.dispatch(ReportRunner(seen: seen))
    #expect(seen.values == [false])
  }
}
