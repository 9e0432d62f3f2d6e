import KatanaTestSupport
import KatanaTesting
import Testing

/// Work a side effect starts in a task of its own (`Task {}`), and work another store's side effect
/// dispatches here, count as the test store's work in flight: `receive` waits for what it dispatches and
/// `finish()` waits for it to end. Before, a marker that unstructured tasks inherited hid their dispatches,
/// and a dispatch from another store was counted by neither.
@Suite("TestStore: work in tasks of its own and from other stores", .timeLimit(.failsafeMinutes(3)))
struct TestStoreUnstructuredWorkTests {
  /// Work that has not reached the store yet (a `Task {}` of a side effect that returned, a dispatch from
  /// another store) is invisible to the test store, which looks idle meanwhile: from the test's own task,
  /// `waitForSleepers` would conclude at once that no sleep can start. From another task it waits for the
  /// sleep, as a helper of the test that the test itself may still feed.
  static func waitForSleeperTheStoreCannotSeeYet(on clock: TestClock) async throws {
    try await Task { try await clock.waitForSleepers(count: 1) }.value
  }

  /// Seeded rounds: the item a `Task {}` dispatches after a sleep on the test clock is always received once
  /// the clock moves (before: "nothing was received" in 23 of 600 rounds), and finish waits for it. The
  /// advance waits for that task to reach its sleep: it holds the starter's watch, and it counts as running
  /// until it sleeps on the clock (before the watch, the test needed a wait from another task).
  @Test func dispatchFromATaskTheSideEffectStarted_isReceived_andFinishWaitsForIt() async throws {
    for _ in 0..<200 {
      let clock = TestClock()
      let store = makeStore(clock: clock)
      store.send(
        Script(name: "starter") { context in
          Task { try await context.dispatch(Nap(duration: .milliseconds(300), tag: "late")) }
        })
      await clock.advance(by: .milliseconds(300))
      await store.receive(Nap(duration: .milliseconds(300), tag: "late"))
      await store.receive(Log(tag: "late")) { $0.log = ["late"] }
      await store.finish()
    }
  }

  /// The item another store's side effect dispatches into this one is received here, and `finish()` waits
  /// for it.
  @Test func dispatchFromAnotherStoresSideEffect_isReceived_andFinishWaitsForIt() async throws {
    let clock = TestClock()
    let target = makeStore(clock: clock)
    let source = makeStore()
    let into = target.store
    source.send(
      Script(name: "forwarder") { _ in
        try await into.dispatch(Nap(duration: .milliseconds(100), tag: "forwarded"))
      })
    try await Self.waitForSleeperTheStoreCannotSeeYet(on: clock)
    await clock.advance(by: .milliseconds(100))
    await target.receive(Nap(duration: .milliseconds(100), tag: "forwarded"))
    await target.receive(Log(tag: "forwarded")) { $0.log = ["forwarded"] }
    await target.finish()
    await source.finish()
  }
}
