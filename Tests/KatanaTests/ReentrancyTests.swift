import Katana
import KatanaTestSupport
import Testing

/// A store reference an updater can reach, to exercise (deliberate) misuse.
final class StoreBox: @unchecked Sendable {  // Sendable: written once before the updater runs.
  var store: TestStore?
}

struct ReadStoreStateInUpdater: StateUpdater {
  let box: StoreBox
  let seen: Recorder<Int>
  func updateState(_ state: inout CounterState) {
    state.counter += 1
    seen.append(box.store?.state.counter ?? -1)
  }
}

struct SendFromUpdater: StateUpdater {
  let box: StoreBox
  let outcome: Recorder<String>
  func updateState(_ state: inout CounterState) {
    state.counter += 1
    let handle = box.store?.send(Increment())
    Task {
      do {
        try await handle?.value
        outcome.append("sent")
      } catch let error as StoreError {
        outcome.append("\(error == .dispatchFromStateUpdater(String(reflecting: Increment.self)))")
      }
    }
  }
}

@Suite("Re-entrancy", .timeLimit(.failsafeMinutes(3)))
struct ReentrancyTests {
  @Test func updaterReadingStoreState_getsTheEmptyState_insteadOfDeadlocking() async throws {
    let store = try await makeReadyStore(CounterState(counter: 5))
    let box = StoreBox()
    box.store = store
    let seen = Recorder<Int>()
    // The store warns on standard error, on purpose: capture the warning, so that a passing run prints none.
    let warnings = try await capturingWarnings(startingWith: "[Katana] warning: store.state was read") {
      try await store.dispatch(ReadStoreStateInUpdater(box: box, seen: seen))
    }
    #expect(warnings.count == 1)
    #expect(seen.values == [0])
    #expect(store.state.counter == 6)
    box.store = nil
  }

  @Test func updaterSending_getsAFailedHandle_insteadOfDeadlocking() async throws {
    let store = try await makeReadyStore()
    let box = StoreBox()
    box.store = store
    let outcome = Recorder<String>()
    try await store.dispatch(SendFromUpdater(box: box, outcome: outcome))
    await outcome.wait(forCount: 1)
    #expect(outcome.values == ["true"])
    #expect(store.state.counter == 1)
    box.store = nil
  }

  /// An undo history's `isUndoable` runs in the commit's critical section, like an updater: reading the store there
  /// gets an updater's answer (the empty state, with a warning), not a deadlock, and the step is still taken.
  @Test func isUndoableReadingStoreState_getsTheEmptyState_insteadOfDeadlocking() async throws {
    let store = try await makeReadyStore(CounterState(counter: 5))
    let box = StoreBox()
    box.store = store
    let seen = Recorder<Int>()
    let history = UndoHistory<CounterState>(isUndoable: { _ in
      seen.append(box.store?.state.counter ?? -1)
      return true
    })
    try history.attach(to: store)
    let warnings = try await capturingWarnings(startingWith: "[Katana] warning: store.state was read") {
      try await store.dispatch(Increment())
    }
    #expect(warnings.count == 1)
    #expect(seen.values == [0])
    #expect(store.state.counter == 6 && history.canUndo)
    try await history.undo(on: store)
    #expect(store.state.counter == 5)
    box.store = nil
  }
}
