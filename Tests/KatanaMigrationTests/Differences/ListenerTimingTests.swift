import Dispatch
import KatanaPromises
import KatanaTestSupport
import Testing

/// MIGRATION.md, "Listeners": where and when listeners run, with `.katana6` and with the default configuration.
@Suite("Differences: where and when listeners run", .timeLimit(.failsafeMinutes(3)), .taskExecutorPathOfThisRun)
struct ListenerTimingTests {
  @Test func katana6Configuration_listenersRunOnTheMainQueue_afterTheDispatchCompleted() async throws {
    let store = counterStore()
    try await store.waitUntilReady()
    let calls = Recorder<Bool>()
    store.addListener { _, _ in calls.append(isOnMainQueue) }
    // Keep the main queue busy, so that the listener call waits there.
    let mainIsBusy = DispatchSemaphore(value: 0)
    DispatchQueue.main.async { mainIsBusy.wait() }

    try await store.dispatch(Stage1.IncrementCounter())

    #expect(store.state.counter == 1)
    #expect(calls.values.isEmpty)  // as in Katana 6, `newState` may reach a listener after `store.state`
    mainIsBusy.signal()
    await calls.wait(forCount: 1)
    #expect(calls.values == [true])
  }

  @Test func defaultConfiguration_listenersHaveRunWhenTheDispatchReturns() async throws {
    let store = counterStore(configuration: StoreConfiguration())
    let calls = Recorder<Int>()
    store.addListener { _, newState in calls.append(newState.counter) }

    try await store.dispatch(Stage1.IncrementCounter())

    #expect(calls.values == [1])
  }
}
