import Katana
import KatanaTestSupport
import KatanaTesting
import Testing

struct ReplayNotes: State, Equatable {
  var lines: [String] = []
  var count = 0
}

struct ReplayAppend: StateUpdater {
  let line: String
  func updateState(_ state: inout ReplayNotes) {
    state.lines.append(line)
    state.count += 1
  }
}

/// Records a session of `lines` appended, keeping the state after every second commit.
func recordNotes(_ lines: [String]) async throws -> Recording<ReplayNotes> {
  let recorder = StoreRecorder<ReplayNotes>(checkpointInterval: 2)
  let store = Store<ReplayNotes, EmptySideEffectDependencyContainer>(
    initialState: ReplayNotes(), interceptors: [recorder.interceptor])
  for line in lines { try await store.dispatch(ReplayAppend(line: line)) }
  return recorder.recording()
}

@Suite("expectReplay: a recorded session as a regression test", .timeLimit(.failsafeMinutes(3)))
struct ExpectReplayTests {
  @Test func aSessionThatReplays_passes_andReturnsItsFinalState() async throws {
    let recording = try await recordNotes(["a", "b", "c"])
    let final = expectReplay(recording, endsAt: ReplayNotes(lines: ["a", "b", "c"], count: 3))
    #expect(final?.count == 3)
  }

  @Test func aCheckpointThatDiffers_isOneIssue_atTheCallersLine_namingTheField() async throws {
    let recording = try await recordNotes(["a", "b", "c", "d"])
    var tampered = recording.checkpoints
    tampered[0] = .init(sequence: 2, state: ReplayNotes(lines: ["a", "x"], count: 2))
    let broken = Recording(initialState: recording.initialState, commits: recording.commits, checkpoints: tampered)
    let line = #line + 2
    await expectOneIssue(containing: ["After commit 2", #"lines[1]: expected "x", actual "b""#], atLine: line) {
      expectReplay(broken)
    }
  }

  @Test func aFinalStateThatDiffers_isOneIssue() async throws {
    let recording = try await recordNotes(["a"])
    await expectOneIssue(containing: ["ends at another state", "count: expected 5, actual 1"]) {
      expectReplay(recording, endsAt: ReplayNotes(lines: ["a"], count: 5))
    }
  }

  @Test func aCommitThatCannotBeApplied_isOneIssue() async throws {
    struct NotAnUpdater: Dispatchable {}
    let recording = Recording(
      initialState: ReplayNotes(), commits: [RecordedCommit(sequence: 1, time: .zero, updater: NotAnUpdater())])
    await expectOneIssue(containing: ["does not replay", "Commit 1", "NotAnUpdater"]) {
      #expect(expectReplay(recording) == nil)
    }
  }
}
