import Katana
import KatanaTestSupport
import KatanaTesting
import Testing

// A feature's outputs, asserted on the feature alone: the test store records every output nothing handled,
// `receiveOutput` asserts them in order, the end of the test reports those not asserted, and `handleOutputs`
// answers them as the app would.

struct PickerState: State, Equatable {
  var picked: [String] = []
}

enum PickerOutput: FeatureOutput, Equatable {
  typealias StateType = PickerState
  case picked(String)
  case cleared
}

struct PickerRefusal: Error, Equatable {}

struct MarkPicked: StateUpdater, Equatable {
  let name: String
  func updateState(_ state: inout PickerState) { state.picked.append(name) }
}

/// Marks the name picked, then tells the parent; with `clearAfter`, tells it again.
struct Pick: SideEffect {
  let name: String
  var clearAfter = false
  func sideEffect(_ context: SideEffectContext<PickerState, EmptySideEffectDependencyContainer>) async throws {
    try await context.dispatch(MarkPicked(name: name))
    try await context.emit(PickerOutput.picked(name))
    if clearAfter { try await context.emit(PickerOutput.cleared) }
  }
}

@Suite("Test store: feature outputs", .timeLimit(.failsafeMinutes(3)))
struct TestStoreOutputTests {
  @Test func receiveOutput_assertsWhatTheFeatureEmitted_inOrder() async throws {
    let store = TestStore<PickerState, EmptySideEffectDependencyContainer>(initialState: PickerState())
    try await store.dispatch(Pick(name: "tea", clearAfter: true))
    await store.receive(MarkPicked(name: "tea")) { $0.picked = ["tea"] }
    await store.receiveOutput(PickerOutput.picked("tea"))
    let cleared = await store.receiveOutput(PickerOutput.self)
    #expect(cleared == .cleared)
    await store.finish()
  }

  @Test func receiveOutput_waitsForASentSideEffect() async throws {
    let store = TestStore<PickerState, EmptySideEffectDependencyContainer>(initialState: PickerState())
    let task = store.send(Pick(name: "tea"))
    await store.receive(MarkPicked(name: "tea")) { $0.picked = ["tea"] }
    await store.receiveOutput(PickerOutput.picked("tea"))
    try await task.value
    await store.finish()
  }

  @Test func anOutputNotAsserted_failsTheEndOfTheTest() async throws {
    await expectOneIssue(containing: ["1 output was emitted and not asserted", "picked(\"tea\")", "receiveOutput"]) {
      let store = TestStore<PickerState, EmptySideEffectDependencyContainer>(initialState: PickerState())
      try await store.dispatch(Pick(name: "tea"))
      await store.receive(MarkPicked(name: "tea")) { $0.picked = ["tea"] }
      await store.finish()
    }
  }

  @Test func anotherOutput_isOneIssue_atTheLineThatExpectedIt() async throws {
    let line = #line + 7
    await expectOneIssue(
      containing: ["Expected the output cleared", "emitted picked(\"tea\")"], atLine: line
    ) {
      let store = TestStore<PickerState, EmptySideEffectDependencyContainer>(initialState: PickerState())
      try await store.dispatch(Pick(name: "tea"))
      await store.receive(MarkPicked(name: "tea")) { $0.picked = ["tea"] }
      await store.receiveOutput(PickerOutput.cleared)
      await store.finish()
    }
  }

  @Test func noOutput_failsAtOnce_whenNothingCanEmitOne() async throws {
    await expectOneIssue(containing: ["Expected the output picked(\"tea\")", "the feature emitted none"]) {
      let store = TestStore<PickerState, EmptySideEffectDependencyContainer>(initialState: PickerState())
      await store.receiveOutput(PickerOutput.picked("tea"))
      await store.finish()
    }
  }

  @Test func handleOutputs_answersAsTheAppWould_andTheOutputIsStillAsserted() async throws {
    let store = TestStore<PickerState, EmptySideEffectDependencyContainer>(initialState: PickerState())
    store.handleOutputs(PickerOutput.self) { _ in throw PickerRefusal() }
    await #expect(throws: PickerRefusal.self) { try await store.dispatch(Pick(name: "tea", clearAfter: true)) }
    await store.receive(MarkPicked(name: "tea")) { $0.picked = ["tea"] }
    await store.receiveOutput(PickerOutput.picked("tea"))
    await store.finish()
  }

  @Test func nonExhaustive_skipsOutputsUntilOneMatches() async throws {
    let store = TestStore<PickerState, EmptySideEffectDependencyContainer>(initialState: PickerState())
    store.exhaustivity = .off
    try await store.dispatch(Pick(name: "tea", clearAfter: true))
    await store.receiveOutput(PickerOutput.cleared)
    await store.finish()
  }
}
