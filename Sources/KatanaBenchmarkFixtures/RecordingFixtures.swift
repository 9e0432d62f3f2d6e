import Katana
import KatanaBenchmarkBaselines

extension BenchmarkFixture {
  /// The updater dispatch with a `StoreRecorder`: what recording costs per commit.
  public static let updaterDispatchRecorded = BenchmarkFixture(
    name: "recording: state updater, with a recorder",
    explanation: "try await store.dispatch(Increment()) with a StoreRecorder (capacity 10,000, a checkpoint every "
      + "1,000 commits): the interceptor path plus the recorder's entry per commit."
  ) { operations in
    let recorder = StoreRecorder<BenchState>()
    let store = try await makeStore(interceptors: [recorder.interceptor])
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(Increment()) }
    } verify: {
      try expectCounter(of: store, operations)
      guard recorder.recording().commits.last?.sequence == operations else {
        throw CorrectnessError(description: "the recorder missed commits")
      }
    }
  }

  /// An undoable append to an array of 1,000,000 elements: the history must not make the store copy the array.
  public static let undoableAppend = BenchmarkFixture(
    name: "recording: undoable append, 1,000,000 elements",
    explanation: "A state updater appends to (and drops from) an array of 1,000,000 elements with an UndoHistory "
      + "(100 steps kept): each commit is a step; the store still changes the array in place."
  ) { operations in
    let history = UndoHistory<BenchState>(stepLimit: 100)
    let store = try await makeStore(
      BenchState(items: Array(repeating: 0, count: 1_000_000)), interceptors: [history.interceptor])
    // The history keeps the state it started from: the first change copies the array once.
    try await store.dispatch(AppendAndDrop())
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(AppendAndDrop()) }
    } verify: {
      try expectCounter(of: store, operations + 1)
    }
  }

  /// An undo and a redo on the 1,000,000-element array with 100 steps kept.
  public static let undoRedoLarge = BenchmarkFixture(
    name: "recording: undo and redo, 1,000,000 elements, 100 steps",
    relativeCost: 200_000,
    explanation: "One undo and one redo of the last of 100 steps on an array of 1,000,000 elements: each replays "
      + "the 100 steps on a copy of the state the history keeps."
  ) { operations in
    let history = UndoHistory<BenchState>(stepLimit: 100)
    let store = try await makeStore(
      BenchState(items: Array(repeating: 0, count: 1_000_000)), interceptors: [history.interceptor])
    for _ in 0..<101 { try await store.dispatch(AppendAndDrop()) }
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations {
        try await history.undo(on: store)
        try await history.redo(on: store)
      }
    } verify: {
      try expectCounter(of: store, 101)
    }
  }
}
