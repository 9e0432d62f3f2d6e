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
    let (store, recorder) = try await makeRecordedStore()
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(Increment()) }
    } verify: {
      try expectCounter(of: store, operations)
      try expectRecorded(recorder, operations)
    }
  }

  /// `send` from one task with a `StoreRecorder` attached.
  public static let sendRecorded = BenchmarkFixture(
    name: "recording: send, with a recorder",
    explanation: "store.send(Increment()) from one task with a StoreRecorder attached, then await the last handle: "
      + "ns per item (an idle store applies each at once, on the sending thread)."
  ) { operations in
    let (store, recorder) = try await makeRecordedStore()
    return PreparedFixture(operations: operations) {
      var last: DispatchHandle<Void>?
      for _ in 0..<operations { last = store.send(Increment()) }
      try await last?.value
    } verify: {
      try expectCounter(of: store, operations, "send lost updates")
      try expectRecorded(recorder, operations)
    }
  }

  /// A side effect awaiting a nested updater dispatch, with a `StoreRecorder` attached: what the side-effect timeline
  /// and the cause of its commit cost (against "dispatch: nested updater from a side effect").
  public static let nestedUpdaterRecorded = BenchmarkFixture(
    name: "recording: nested updater from a side effect, with a recorder",
    explanation: "A side effect that awaits context.dispatch(Increment()), on a store with a StoreRecorder attached: "
      + "the store records the side effect's start and end, and binds it as the cause of the commit it makes."
  ) { operations in
    let (store, recorder) = try await makeRecordedStore()
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(NestedIncrement()) }
    } verify: {
      try expectCounter(of: store, operations)
      try expectRecorded(recorder, operations, withCause: true)
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
    return .dispatchingIncrements(to: store, operations: operations)
  }

  /// An undoable append to an array of 1,000,000 elements: the history must not make the store copy the array.
  public static let undoableAppend = BenchmarkFixture(
    name: "recording: undoable append, 1,000,000 elements",
    explanation: "A state updater appends to (and drops from) an array of 1,000,000 elements with an UndoHistory "
      + "attached (100 steps kept): each commit is a step; the store still changes the array in place."
  ) { operations in
    let history = UndoHistory<BenchState>(stepLimit: 100)
    let store = try await makeStore(BenchState(items: Array(repeating: 0, count: 1_000_000)))
    try history.attach(to: store)
    // The history keeps the state it started from: the first change copies the array once.
    try await store.dispatch(AppendAndDrop())
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations { try await store.dispatch(AppendAndDrop()) }
    } verify: {
      try expectCounter(of: store, operations + 1)
    }
  }

  /// An undo and a redo of a step whose inverse is known, on the 1,000,000-element array with 100 steps kept: the
  /// fast paths (the inverse, then the step again, in place).
  public static let undoRedoInvertible = BenchmarkFixture(
    name: "recording: undo and redo of an invertible step, 1,000,000 elements",
    relativeCost: 4,
    explanation: "One undo and one redo of the last of 100 invertible steps (SetLastItem, an "
      + "InvertibleStateUpdater) on an array of 1,000,000 elements: the undo applies the step's inverse and the redo "
      + "the step again, both in place; nothing is replayed or copied."
  ) { operations in
    let history = UndoHistory<BenchState>(stepLimit: 100)
    let store = try await makeStore(BenchState(items: Array(repeating: 0, count: 1_000_000)))
    try history.attach(to: store)
    for value in 1...101 { try await store.dispatch(SetLastItem(value)) }
    return PreparedFixture(operations: operations) {
      for _ in 0..<operations {
        try await history.undo(on: store)
        try await history.redo(on: store)
      }
    } verify: {
      try expectCounter(of: store, 101)
      guard store.state.items.last == 101, history.canUndo, !history.canRedo else {
        throw CorrectnessError(description: "the undo and redo did not leave the last step done")
      }
    }
  }

  /// An undo and a redo on the 1,000,000-element array with 100 steps kept, whose inverse is not known: the replay.
  public static let undoRedoLarge = BenchmarkFixture(
    name: "recording: undo and redo, 1,000,000 elements, 100 steps",
    relativeCost: 200_000,
    explanation: "One undo and one redo of the last of 100 steps (AppendAndDrop, a plain StateUpdater) on an array "
      + "of 1,000,000 elements: the undo replays the 100 steps on a copy of the state the history keeps; the redo "
      + "applies the step again in place (nothing committed since the undo)."
  ) { operations in
    let history = UndoHistory<BenchState>(stepLimit: 100)
    let store = try await makeStore(BenchState(items: Array(repeating: 0, count: 1_000_000)))
    try history.attach(to: store)
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

/// Sets the last element of the array and bumps the counter; its inverse puts both back (an
/// ``InvertibleStateUpdater``, whose undo applies the inverse instead of replaying).
public struct SetLastItem: InvertibleStateUpdater {
  /// The value the last element takes.
  public let value: Int
  /// What the counter changes by.
  public let counterChange: Int

  /// Sets the last element to `value` and adds `counterChange` to the counter.
  public init(_ value: Int, counterChange: Int = 1) {
    self.value = value
    self.counterChange = counterChange
  }

  /// Sets the last element (nothing on an empty array) and bumps the counter; returns what puts both back.
  public func updateState(_ state: inout BenchState) -> SetLastItem {
    var old = value
    if let last = state.items.indices.last {
      old = state.items[last]
      state.items[last] = value
    }
    state.counter &+= counterChange
    return SetLastItem(old, counterChange: 0 &- counterChange)
  }
}

/// A ready store with a `StoreRecorder` attached (capacity 10,000, a checkpoint every 1,000 commits).
func makeRecordedStore() async throws -> (BenchStore, StoreRecorder<BenchState>) {
  let recorder = StoreRecorder<BenchState>()
  let store = try await makeStore()
  try recorder.attach(to: store)
  return (store, recorder)
}

/// Throws unless `recorder`'s latest commit is number `operations` (and, `withCause`, names a side effect).
func expectRecorded(_ recorder: StoreRecorder<BenchState>, _ operations: Int, withCause: Bool = false) throws {
  let last = recorder.commits(after: operations - 1).last
  guard last?.sequence == operations, !withCause || last?.cause != nil else {
    throw CorrectnessError(
      description: withCause ? "the recorder missed commits or their cause" : "the recorder missed commits")
  }
}
