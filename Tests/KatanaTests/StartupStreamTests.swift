import KatanaTestSupport
import Testing

@testable import Katana

/// Streams of states that start before the store is ready begin with `S()`; once start-up is done they get
/// the initial state, before any commit, while listeners and `changes()` see nothing (it is not a change).
@Suite("Streams started before the store is ready", .timeLimit(.failsafeMinutes(3)))
struct StartupStreamTests {
  @Test func statesAndValues_getTheInitialState_onceStartUpIsDone_listenersAndChangesDoNot() async throws {
    let loaded = Gate()
    let store = TestStore(stateInitializer: {
      await loaded.wait()
      return CounterState(counter: 7)
    })
    let listened = Recorder<Int>()
    store.addListener { _, new in listened.append(new.counter) }
    var states = store.states(buffering: .bufferingNewest(16)).makeAsyncIterator()
    var values = store.values(of: \.counter, buffering: .bufferingNewest(16)).makeAsyncIterator()
    var changes = store.changes(buffering: .bufferingNewest(16)).makeAsyncIterator()
    #expect(await states.next()?.counter == 0)
    #expect(await values.next() == 0)
    loaded.open()
    try await store.waitUntilReady()
    // (A hang here fails at the suite's time limit.)
    #expect(await states.next()?.counter == 7)
    #expect(await values.next() == 7)
    // The first change anyone sees is the first commit.
    try await store.dispatch(Increment())
    let change = await changes.next()
    #expect(change?.old.counter == 7)
    #expect(change?.new.counter == 8)
    #expect(await states.next()?.counter == 8)
    #expect(listened.values == [8])
  }
}
