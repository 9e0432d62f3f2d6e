import Dispatch
import KatanaPromises
import KatanaTestSupport
import Testing

private struct InitState: State, Equatable {
  var value = 0
  init() {}
  init(value: Int) { self.value = value }
}

private struct InitError: Error {}

/// A mark on the main queue, to tell where a state initializer ran.
private let mainQueueMark: DispatchSpecificKey<Bool> = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return key
}()

private func isOnMainQueue() -> Bool {
  DispatchQueue.getSpecific(key: mainQueueMark) ?? false
}

/// Katana 6's synchronous state initializers: where they run, and which initializer Swift picks.
@Suite("Katana 6 state initializers", .timeLimit(.failsafeMinutes(3)), .taskExecutorPathOfThisRun)
struct Katana6StoreInitTests {
  @Test func synchronousInitializer_withKatana6Configuration_runsOnTheMainQueue() async throws {
    _ = mainQueueMark
    let ranOnMain = LockedValue<Bool?>(nil)
    let store = Store<InitState, EmptySideEffectDependencyContainer>(
      interceptors: [],
      stateInitializer: {
        ranOnMain.withLock { $0 = isOnMainQueue() }
        return InitState(value: 5)
      },
      configuration: .katana6)
    try await store.waitUntilReady()
    #expect(store.state.value == 5)
    #expect(ranOnMain.current == true)
  }

  @Test func synchronousInitializer_onACustomExecutor_runsThere() async throws {
    let queue = DispatchQueue(label: "initializer")
    let key = DispatchSpecificKey<Bool>()
    queue.setSpecific(key: key, value: true)
    let ranThere = LockedValue<Bool?>(nil)
    let store = Store<InitState, EmptySideEffectDependencyContainer>(
      stateInitializer: {
        ranThere.withLock { $0 = DispatchQueue.getSpecific(key: key) ?? false }
        return InitState(value: 1)
      },
      dependenciesInitializer: { dispatch, getState in
        EmptySideEffectDependencyContainer(dispatch: dispatch, getState: getState)
      },
      configuration: StoreConfiguration(stateInitializerAsyncProvider: queue, listenersAsyncProvider: queue))
    try await store.waitUntilReady()
    #expect(ranThere.current == true)
  }

  @Test func functionReferences_andThrowingOrAsyncClosures_compileAndRun() async throws {
    // A function reference (`InitState.init`), as Katana 6 code writes it.
    let byReference = Store<InitState, EmptySideEffectDependencyContainer>(
      interceptors: [], stateInitializer: InitState.init, configuration: .katana6)
    try await byReference.waitUntilReady()
    #expect(byReference.state == InitState())
    // Throwing and async closures take the store's own initializer.
    let throwing = Store<InitState, EmptySideEffectDependencyContainer>(
      interceptors: [], stateInitializer: { () throws -> InitState in throw InitError() }, configuration: .katana6)
    await #expect(throws: StoreError.self) { try await throwing.waitUntilReady() }
    let asynchronous = Store<InitState, EmptySideEffectDependencyContainer>(
      stateInitializer: {
        await Task.yield()
        return InitState(value: 2)
      })
    try await asynchronous.waitUntilReady()
    #expect(asynchronous.state.value == 2)
  }

  @Test func synchronousInitializer_withoutKatana6Configuration_runsInTheStartupTask() async throws {
    _ = mainQueueMark
    let ranOnMain = LockedValue<Bool?>(nil)
    let store = Store<InitState, EmptySideEffectDependencyContainer>(
      stateInitializer: {
        ranOnMain.withLock { $0 = isOnMainQueue() }
        return InitState(value: 3)
      })
    try await store.waitUntilReady()
    #expect(ranOnMain.current == false)
  }
}
