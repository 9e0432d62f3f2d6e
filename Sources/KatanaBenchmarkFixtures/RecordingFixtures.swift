import Katana
import KatanaBenchmarkBaselines

extension BenchmarkFixture {
  /// The updater dispatch with a `StoreRecorder` attached: what recording costs per commit.
  public static let updaterDispatchRecorded = BenchmarkFixture(
    name: "recording: state updater, with a recorder",
    explanation: "try await store.dispatch(Increment()) on a store with a StoreRecorder attached (capacity 10,000, a "
      + "checkpoint every 1,000 commits): the store appends each commit to the recorder's ring in the commit's "
      + "critical section, on the same fast path."
  ) { operations in
    let recorder = StoreRecorder<BenchState>()
    let store = try await makeStore()
    try recorder.attach(to: store)
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(Increment()) }
    } verify: {
      try expectCounter(of: store, operations)
      guard recorder.commits(after: operations - 1).last?.sequence == operations else {
        throw CorrectnessError(description: "the recorder missed commits")
      }
    }
  }

  /// `send` from one task with a `StoreRecorder` attached.
  public static let sendRecorded = BenchmarkFixture(
    name: "recording: send, with a recorder",
    explanation: "store.send(Increment()) from one task with a StoreRecorder attached, then await the last handle: "
      + "ns per item (an idle store applies each at once, on the sending thread)."
  ) { operations in
    let recorder = StoreRecorder<BenchState>()
    let store = try await makeStore()
    try recorder.attach(to: store)
    return PreparedFixture(operations: operations) {
      var last: DispatchHandle<Void>?
      for _ in 0..<operations { last = store.send(Increment()) }
      try await last?.value
    } verify: {
      try expectCounter(of: store, operations, "send lost updates")
      guard recorder.commits(after: operations - 1).last?.sequence == operations else {
        throw CorrectnessError(description: "the recorder missed commits")
      }
    }
  }

  /// The updater dispatch with the older form: the recorder as the store's interceptor.
  public static let updaterDispatchRecordedByInterceptor = BenchmarkFixture(
    name: "recording: state updater, recorder as an interceptor",
    explanation: "The same dispatch with the recorder given as recorder.interceptor (the older form): the "
      + "interceptor path, plus the same entry per commit."
  ) { operations in
    let recorder = StoreRecorder<BenchState>()
    let store = try await makeStore(interceptors: [recorder.interceptor])
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(Increment()) }
    } verify: {
      try expectCounter(of: store, operations)
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
