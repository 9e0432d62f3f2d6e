import KatanaTestSupport
import Testing

@testable import Katana

// MARK: - Fixtures: invertible steps, and commits that are not steps

/// Appends a number and counts it; undone by dropping the last number.
struct UndoAppendNumber: InvertibleStateUpdater {
  let number: Int
  func updateState(_ state: inout UndoDocState) -> UndoDropLastNumber {
    state.numbers.append(number)
    state.count += 1
    return UndoDropLastNumber()
  }
}

/// The inverse of ``UndoAppendNumber``.
struct UndoDropLastNumber: StateUpdater {
  func updateState(_ state: inout UndoDocState) {
    if !state.numbers.isEmpty { state.numbers.removeLast() }
    state.count -= 1
  }
}

/// Sets the count; undone by setting it back (its own type is its inverse).
struct UndoSetCount: InvertibleStateUpdater {
  let count: Int
  func updateState(_ state: inout UndoDocState) -> UndoSetCount {
    defer { state.count = count }
    return UndoSetCount(count: state.count)
  }
}

/// Bumps the first number in place and records the array's storage address; undone by the inverse bump.
struct UndoBumpFirstInvertibly: InvertibleStateUpdater {
  let amount: Int
  let addresses: Recorder<UInt>
  func updateState(_ state: inout UndoDocState) -> UndoBumpFirstInvertibly {
    state.numbers[0] += amount
    addresses.append(state.numbers.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) })
    return UndoBumpFirstInvertibly(amount: -amount, addresses: addresses)
  }
}

/// A root commit that the histories of these tests never take as a step (their `isUndoable` declines it): a note
/// appended to the numbers, which an undo must keep.
struct UndoNote: StateUpdater {
  let number: Int
  func updateState(_ state: inout UndoDocState) { state.numbers.append(-number) }
}

/// A side effect whose commit is a note.
struct UndoNoteEffect: SideEffect {
  let number: Int
  func sideEffect(_ context: SideEffectContext<UndoDocState, EmptySideEffectDependencyContainer>) async throws {
    try await context.dispatch(UndoNote(number: number))
  }
}

/// A side effect that commits a note once `gate` opens: it finishes after later steps, undos and redos.
struct UndoNoteLater: SideEffect {
  let number: Int
  let gate: Gate
  func sideEffect(_ context: SideEffectContext<UndoDocState, EmptySideEffectDependencyContainer>) async throws {
    await gate.waitIgnoringCancellation()
    try await context.dispatch(UndoNote(number: number))
  }
}

/// A store with a history of the whole store and one of the body, taking the fast paths of undo and redo or not.
private struct UndoRig {
  let root: UndoHistory<UndoDocState>
  let body: UndoHistory<UndoDocState>
  let store: UndoStore
  let bodyScope: ScopedStore<UndoText, EmptySideEffectDependencyContainer>
  /// Records the session, the histories' commands included: its replay must give the store's state.
  let recorder = StoreRecorder<UndoDocState>()
  var late: (gate: Gate, handle: DispatchHandle<Void>)?

  /// - Parameter attaching: Attach the histories and the recorder with `attach(to:)` (a store without interceptors,
  ///   whose every fast path applies) rather than as interceptors.
  init(inPlace: Bool, stepLimit: Int, commitLimit: Int, attaching: Bool) throws {
    root = UndoHistory(
      scope: nil, stepLimit: stepLimit, commitLimit: commitLimit, undoesInPlace: inPlace,
      isUndoable: { !($0 is UndoNote) })
    body = UndoHistory(
      scope: ScopeIDs.body, stepLimit: stepLimit, commitLimit: commitLimit, undoesInPlace: inPlace,
      isUndoable: { _ in true })
    if attaching {
      store = UndoStore(initialState: UndoDocState())
      try root.attach(to: store)
      try body.attach(to: store)
      try recorder.attach(to: store)
    } else {
      store = UndoStore(
        initialState: UndoDocState(), interceptors: [root.interceptor, body.interceptor, recorder.interceptor])
    }
    bodyScope = store.scope(\.body, dependencies: \.self)
  }
}

/// A step that is not invertible, of as many types as there are `Tag`s: each one takes a slot of the store's memo of
/// types that are not invertible (``TypeMemo``).
struct UndoTaggedNote<Tag>: StateUpdater {
  func updateState(_ state: inout UndoDocState) { state.count += 1 }
}

/// Dispatches, for each of `remaining` types (`Tag`, `[Tag]`, ...), a step of that type that is not invertible, then an
/// invertible step, and undoes the latter.
func dispatchTaggedStepsThenUndo<Tag>(
  _: Tag.Type, remaining: Int, store: UndoStore, history: UndoHistory<UndoDocState>
) async throws {
  guard remaining > 0 else { return }
  try await store.dispatch(UndoTaggedNote<Tag>())
  try await store.dispatch(UndoAppendNumber(number: remaining))
  #expect(try await history.undo(on: store))
  try await dispatchTaggedStepsThenUndo([Tag].self, remaining: remaining - 1, store: store, history: history)
}

/// A class updater that adds `amount` to the count, not invertible; ``UndoInvertibleAddition`` is its invertible
/// subclass.
class UndoAddition: StateUpdater, @unchecked Sendable {  // Sendable: immutable.
  let amount: Int
  init(amount: Int) { self.amount = amount }
  func updateState(_ state: inout UndoDocState) { state.count += amount }
}

/// An invertible subclass of ``UndoAddition``.
final class UndoInvertibleAddition: UndoAddition, InvertibleStateUpdater, @unchecked Sendable {  // Immutable.
  func updateState(_ state: inout UndoDocState) -> UndoSetCount {
    defer { state.count += amount }
    return UndoSetCount(count: state.count)
  }
}

// MARK: - Tests

@Suite("Undo and redo in place, against the replay", .timeLimit(.failsafeMinutes(3)))
struct UndoInPlaceTests {
  /// The store remembers the item types that are not invertible (so as not to try the cast again): with more such
  /// types than it remembers, an invertible step is still handed its inverse, every time.
  @Test func manyTypesThatAreNotInvertible_neverHideAnInvertibleOne() async throws {
    let history = UndoHistory<UndoDocState>()
    let store = UndoStore(initialState: UndoDocState())
    try history.attach(to: store)
    try await dispatchTaggedStepsThenUndo(Int.self, remaining: 40, store: store, history: history)
    #expect(history.pathCounts == (inPlace: 40, replayed: 0))
    #expect(store.state.numbers.isEmpty && store.state.count == 40)
    // And the steps that are not invertible undo by replaying.
    #expect(try await history.undo(on: store))
    #expect(history.pathCounts == (inPlace: 40, replayed: 1))
    #expect(store.state.count == 39)
  }

  /// Class updaters: the store tells types apart by the type an item was erased as, so an invertible subclass erased
  /// as its base class (which is not invertible) may commit without its inverse; its undo then replays. Undo and redo
  /// give the replay's state whichever way each step goes.
  @Test func classUpdaters_undoAndRedo_likeTheReplay() async throws {
    let history = UndoHistory<UndoDocState>()
    let store = UndoStore(initialState: UndoDocState())
    try history.attach(to: store)
    let erased: UndoAddition = UndoInvertibleAddition(amount: 100)
    try await store.dispatch(UndoAddition(amount: 1))
    try await store.dispatch(erased)
    try await store.dispatch(UndoInvertibleAddition(amount: 10))
    #expect(store.state.count == 111)
    #expect(try await history.undo(on: store))
    #expect(store.state.count == 101)
    #expect(try await history.undo(on: store))
    #expect(store.state.count == 1)
    #expect(try await history.redo(on: store))
    #expect(store.state.count == 101)
    #expect(try await history.undo(on: store))
    #expect(try await history.undo(on: store))
    #expect(store.state.count == 0)
    #expect(try await history.redo(on: store))
    #expect(try await history.redo(on: store))
    #expect(try await history.redo(on: store))
    #expect(store.state.count == 111)
    #expect(history.pathCounts.inPlace >= 1)
  }

  @Test func undoOfAnInvertibleLatestStep_appliesItsInverseInPlace_andRedoAppliesItAgain() async throws {
    let history = UndoHistory<UndoDocState>()
    let store = UndoStore(
      initialState: UndoDocState(numbers: Array(repeating: 0, count: 100_000)), interceptors: [history.interceptor])
    let addresses = Recorder<UInt>()
    for amount in 1...3 { try await store.dispatch(UndoBumpFirstInvertibly(amount: amount, addresses: addresses)) }
    #expect(try await history.undo(on: store))
    #expect(store.state.numbers[0] == 3)
    #expect(try await history.redo(on: store))
    #expect(store.state.numbers[0] == 6)
    #expect(try await history.undo(on: store))
    #expect(try await history.undo(on: store))
    #expect(store.state.numbers[0] == 1)
    #expect(history.pathCounts.inPlace == 4)
    #expect(history.pathCounts.replayed == 0)
    // The first change copies the array once (the history keeps the state it started from); every later one,
    // steps, inverses and redos alike, changes the store's copy in place.
    #expect(addresses.values.count == 7)
    #expect(Set(addresses.values.dropFirst()).count == 1)
  }

  @Test func aCommitAfterTheStep_makesTheUndoReplay_andKeepsThatCommit() async throws {
    let history = UndoHistory<UndoDocState>(isUndoable: { !($0 is UndoNote) })
    let store = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor])
    try await store.dispatch(UndoAppendNumber(number: 1))
    try await store.dispatch(UndoAppendNumber(number: 2))
    try await store.dispatch(UndoNoteEffect(number: 9))
    // The note came after the step: the inverse would drop the note, not the step. The replay keeps the note.
    try await history.undo(on: store)
    #expect(store.state == UndoDocState(count: 1, numbers: [1, -9]))
    #expect(history.pathCounts == (inPlace: 0, replayed: 1))
    // The redo replays too: the note still follows the step.
    try await history.redo(on: store)
    #expect(store.state == UndoDocState(count: 2, numbers: [1, 2, -9]))
    #expect(history.pathCounts == (inPlace: 0, replayed: 2))
  }

  @Test func aStepWithAnUpdaterWithoutInverse_isReplayed_andItsRedoIsInPlace() async throws {
    let history = UndoHistory<UndoDocState>()
    let store = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor])
    try await store.dispatch(UndoAppendNumber(number: 1))
    history.beginGroup()
    try await store.dispatch(UndoAppendNumber(number: 2))
    try await store.dispatch(UndoCount(amount: 10))
    history.endGroup()
    try await history.undo(on: store)
    #expect(store.state == UndoDocState(count: 1, numbers: [1]))
    #expect(history.pathCounts == (inPlace: 0, replayed: 1))
    // Nothing committed since the undo: the redo applies the step's commits again.
    try await history.redo(on: store)
    #expect(store.state == UndoDocState(count: 12, numbers: [1, 2]))
    #expect(history.pathCounts == (inPlace: 1, replayed: 1))
  }

  @Test func aGroupOfInvertibleCommits_isUndoneByItsInversesLatestFirst() async throws {
    let history = UndoHistory<UndoDocState>()
    let store = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor])
    history.beginGroup()
    try await store.dispatch(UndoAppendNumber(number: 1))
    try await store.dispatch(UndoSetCount(count: 40))
    try await store.dispatch(UndoAppendNumber(number: 2))
    history.endGroup()
    #expect(store.state == UndoDocState(count: 41, numbers: [1, 2]))
    try await history.undo(on: store)
    #expect(store.state == UndoDocState())
    try await history.redo(on: store)
    #expect(store.state == UndoDocState(count: 41, numbers: [1, 2]))
    #expect(history.pathCounts == (inPlace: 2, replayed: 0))
  }

  /// Two histories of the whole store: the first one's folding applies an invertible updater to the state it keeps
  /// while the commit is handed on; the second one still keeps the inverse of the commit itself.
  @Test func aHistoryFoldingAnInvertibleStep_leavesTheNextHistoryTheCommitsInverse() async throws {
    let first = UndoHistory<UndoDocState>(stepLimit: 1, commitLimit: 1)
    let second = UndoHistory<UndoDocState>(stepLimit: 5)
    let store = UndoStore(initialState: UndoDocState(), interceptors: [first.interceptor, second.interceptor])
    for count in [10, 20, 30] { try await store.dispatch(UndoSetCount(count: count)) }
    try await second.undo(on: store)
    #expect(store.state.count == 20)
    try await second.undo(on: store)
    #expect(store.state.count == 10)
    #expect(second.pathCounts == (inPlace: 2, replayed: 0))
  }

  /// The inverse of a feature's updater applies to its slice: the store's history replays a step through a scope.
  @Test func aStepThroughAScope_isReplayedByTheStoresHistory() async throws {
    let history = UndoHistory<UndoDocState>()
    let store = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor])
    try await store.scope(\.body, dependencies: \.self).dispatch(UndoAppendText(text: "a"))
    try await history.undo(on: store)
    #expect(store.state == UndoDocState())
    #expect(history.pathCounts == (inPlace: 0, replayed: 1))
  }

  /// A history attached to a store still starting starts from the state the store starts from; one attached to a
  /// ready store, from its state then (commits before are not steps).
  @Test func attach_startsFromTheStateTheStoreHasOrStartsFrom() async throws {
    let starting = UndoStore(
      interceptors: [], stateInitializer: { UndoDocState(count: 1, numbers: [7]) })
    let early = UndoHistory<UndoDocState>()
    try early.attach(to: starting)
    try await starting.dispatch(UndoAppendNumber(number: 8))
    #expect(try await early.undo(on: starting))
    #expect(starting.state == UndoDocState(count: 1, numbers: [7]))
    #expect(early.pathCounts == (inPlace: 1, replayed: 0))

    let ready = UndoStore(initialState: UndoDocState())
    try await ready.dispatch(UndoAppendNumber(number: 1))
    let late = UndoHistory<UndoDocState>()
    try late.attach(to: ready)
    try late.attach(to: ready)  // again: nothing changes
    try await ready.dispatch(UndoAppendNumber(number: 2))
    try await ready.dispatch(UndoNote(number: 3))
    #expect(try await late.undo(on: ready))
    #expect(try await late.undo(on: ready))
    #expect(try await !late.undo(on: ready))
    #expect(ready.state == UndoDocState(count: 1, numbers: [1]))
    // Replayed: the note after the step kept it from the inverses.
    #expect(late.pathCounts.replayed >= 1)
  }

  /// A history attached while the store is away from live (time travel) starts from the live state, which the store's
  /// next commit follows, not from the recorded state on show.
  @Test func attach_whileAwayFromLive_startsFromTheLiveState() async throws {
    let recorder = StoreRecorder<UndoDocState>()
    let store = UndoStore(initialState: UndoDocState())
    try recorder.attach(to: store)
    try await store.dispatch(UndoSetCount(count: 1))
    try await store.dispatch(UndoSetCount(count: 2))
    try await recorder.travel(store, to: 1)
    #expect(store.state.count == 1)
    let history = UndoHistory<UndoDocState>()
    try history.attach(to: store)
    try await recorder.returnToLive(store)
    try await store.dispatch(UndoAppendNumber(number: 9))
    try await store.dispatch(UndoNote(number: 5))
    // The note is not invertible: its undo replays from the state the history started from.
    #expect(try await history.undo(on: store))
    #expect(store.state == UndoDocState(count: 3, numbers: [9]))
    #expect(history.pathCounts == (inPlace: 0, replayed: 1))
  }

  /// A history follows one store: attaching it to another throws, and it keeps following the first.
  @Test func attach_toASecondStore_throws() async throws {
    let history = UndoHistory<UndoDocState>()
    let first = UndoStore(initialState: UndoDocState())
    let second = UndoStore(initialState: UndoDocState())
    try history.attach(to: first)
    #expect(throws: RecorderError.self) { try history.attach(to: second) }
    await #expect(throws: RecorderError.self) { try await history.undo(on: second) }
    try await first.dispatch(UndoSetCount(count: 5))
    #expect(try await history.undo(on: first))
    #expect(first.state.count == 0)
  }

  /// Seeded random sessions through a history that takes the fast paths and through its plain twin, which always
  /// replays: invertible steps, steps without inverse, steps through a scope, groups, notes committed by side effects
  /// (at once, or after later steps and undos), a scope's history's undos and redos, clears, undos and redos. After
  /// every operation both stores hold the same state and both histories the same bookkeeping.
  @Test(arguments: Array(0..<48) as [UInt64])
  func randomSessions_matchTheReplayingTwin(seed: UInt64) async throws {
    _ = try await Self.compareWithTwin(seed: seed)
  }

  /// The random sessions take both paths, often.
  @Test func randomSessions_takeBothPaths() async throws {
    var inPlace = 0
    var replayed = 0
    for seed in 0..<16 as Range<UInt64> {
      let counts = try await Self.compareWithTwin(seed: seed)
      inPlace += counts.inPlace
      replayed += counts.replayed
    }
    #expect(inPlace >= 20)
    #expect(replayed >= 20)
  }

  /// Runs one seeded session through both rigs, comparing them after every operation; returns the fast rig's counts
  /// of undos and redos in place and replayed.
  private static func compareWithTwin(seed: UInt64) async throws -> (inPlace: Int, replayed: Int) {
    var generator = SeededGenerator(seed: seed &* 6_151 &+ 3)
    let stepLimit = Int(generator.next() % 5) + 1
    let commitLimit = stepLimit + Int(generator.next() % 6)
    // Odd seeds attach the histories (no interceptor: every fast path of the store applies), even ones intercept.
    let attaching = seed % 2 == 1
    var fast = try UndoRig(inPlace: true, stepLimit: stepLimit, commitLimit: commitLimit, attaching: attaching)
    var plain = try UndoRig(inPlace: false, stepLimit: stepLimit, commitLimit: commitLimit, attaching: attaching)
    var grouping = false
    var trace = ["seed \(seed), limits \(stepLimit), \(commitLimit), attaching \(attaching)"]
    for step in 1...40 {
      let choice = generator.next() % 14
      trace.append("\(choice)")
      switch choice {
      case 0:
        for rig in [fast, plain] { try await rig.store.dispatch(UndoAppendNumber(number: step)) }
      case 1:
        // Sent, and type-erased: every path hands the inverse on.
        for rig in [fast, plain] { try await rig.store.send(UndoAppendNumber(number: step)).value }
      case 2:
        for rig in [fast, plain] { _ = try await rig.store.anyDispatch(UndoAppendNumber(number: step)) }
      case 3:
        for rig in [fast, plain] { try await rig.store.dispatch(UndoSetCount(count: step * 100)) }
      case 4:
        for rig in [fast, plain] { try await rig.store.dispatch(UndoCount(amount: step)) }
      case 5:
        for rig in [fast, plain] { try await rig.bodyScope.dispatch(UndoType(text: "\(step % 10)")) }
      case 6:
        for rig in [fast, plain] { try await rig.store.dispatch(UndoNoteEffect(number: step)) }
      case 7:
        // A note that lands later: started now, committed at a later 7.
        if fast.late == nil {
          for index in 0..<2 {
            let gate = Gate()
            let rig = index == 0 ? fast : plain
            let late = (gate: gate, handle: rig.store.send(UndoNoteLater(number: step, gate: gate)))
            if index == 0 { fast.late = late } else { plain.late = late }
          }
        } else {
          for late in [fast.late, plain.late].compactMap({ $0 }) {
            late.gate.open()
            _ = await late.handle.result
          }
          fast.late = nil
          plain.late = nil
        }
      case 8, 9, 10:
        let did = try await fast.root.undo(on: fast.store)
        #expect(try await plain.root.undo(on: plain.store) == did, "\(trace)")
      case 11:
        let did = try await fast.root.redo(on: fast.store)
        #expect(try await plain.root.redo(on: plain.store) == did, "\(trace)")
      case 12:
        for rig in [fast, plain] {
          if grouping { rig.root.endGroup() } else { rig.root.beginGroup() }
        }
        grouping.toggle()
      default:
        switch generator.next() % 4 {
        case 0:
          for rig in [fast, plain] { rig.root.clear() }
        case 1:
          let did = try await fast.body.redo(on: fast.bodyScope)
          #expect(try await plain.body.redo(on: plain.bodyScope) == did, "\(trace)")
        default:
          let did = try await fast.body.undo(on: fast.bodyScope)
          #expect(try await plain.body.undo(on: plain.bodyScope) == did, "\(trace)")
        }
      }
      #expect(fast.store.state == plain.store.state, "\(trace)")
      #expect(fast.root.bookkeeping == plain.root.bookkeeping, "\(trace)")
      #expect(fast.body.bookkeeping == plain.body.bookkeeping, "\(trace)")
      #expect(fast.root.canUndo == plain.root.canUndo && fast.root.canRedo == plain.root.canRedo, "\(trace)")
    }
    for late in [fast.late, plain.late].compactMap({ $0 }) {
      late.gate.open()
      _ = await late.handle.result
    }
    #expect(fast.store.state == plain.store.state, "\(trace)")
    // Each command keeps the value it set, in place or replayed: the recording replays to the store's state.
    for rig in [fast, plain] { #expect(try rig.recorder.recording().replayedState(equal: ==) == rig.store.state) }
    #expect(plain.root.pathCounts.inPlace == 0)
    let counts = fast.root.pathCounts
    #expect(counts.inPlace + counts.replayed == plain.root.pathCounts.replayed, "\(trace)")
    return counts
  }
}

/// A feature's invertible updater: appends to the text; undone by dropping what it appended.
struct UndoAppendText: InvertibleStateUpdater {
  let text: String
  func updateState(_ state: inout UndoText) -> UndoDropSuffix {
    state.text += text
    return UndoDropSuffix(count: text.count)
  }
}

/// The inverse of ``UndoAppendText``.
struct UndoDropSuffix: StateUpdater {
  let count: Int
  func updateState(_ state: inout UndoText) { state.text.removeLast(min(count, state.text.count)) }
}
