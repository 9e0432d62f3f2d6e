import KatanaPromises
import KatanaTestSupport
import Testing

/// MIGRATION.md, "ObserverInterceptor": when follow-up items run.
@Suite("Differences: ObserverInterceptor follow-ups", .timeLimit(.failsafeMinutes(3)), .taskExecutorPathOfThisRun)
struct ObserverTimingTests {
  @Test func onDispatchFollowUp_runsBeforeAnUpdaterDispatchedAfterTheObservedOne() async throws {
    // Katana 6 dispatched follow-ups later, from a background queue: `later` could come first.
    let store = Store<LogState, EmptySideEffectDependencyContainer>(interceptors: [
      ObserverInterceptor.observe([.onDispatch(Observed.self, [FollowUp.self])])
    ])
    try await store.dispatch(Observed())
    try await store.dispatch(Append(entry: "later"))
    #expect(store.state.log == ["observed", "follow-up", "later"])
  }

  @Test func logger_hasLoggedTheItemWhenTheDispatchReturns() async throws {
    // Katana 6 logged later, on a utility queue.
    let logged = Recorder<String>()
    let store = Store<LogState, EmptySideEffectDependencyContainer>(interceptors: [
      DispatchableLogger.interceptor { logged.append($0.debugDescription) }
    ])
    try await store.dispatch(Append(entry: "a"))
    #expect(logged.values == [String(reflecting: Append.self)])
  }
}
