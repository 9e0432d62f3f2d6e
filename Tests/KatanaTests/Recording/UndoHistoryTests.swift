import Foundation
import KatanaRecordingLog
import KatanaTestSupport
import Testing

@testable import Katana

// MARK: - Fixtures: a document with two features and a root counter

struct UndoText: State, Equatable {
  var text = ""
}

struct UndoDocState: State, Equatable {
  var count = 0
  var title = UndoText()
  var body = UndoText()
  var numbers: [Int] = []
}

struct UndoType: StateUpdater {
  let text: String
  func updateState(_ state: inout UndoText) { state.text += text }
}

struct UndoCount: StateUpdater {
  let amount: Int
  func updateState(_ state: inout UndoDocState) { state.count += amount }
}

/// Bumps the first number in place and records the array's storage address, as the updater sees it.
struct UndoBumpFirst: StateUpdater {
  let addresses: Recorder<UInt>
  func updateState(_ state: inout UndoDocState) {
    state.numbers[0] += 1
    addresses.append(state.numbers.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) })
  }
}

/// Types into the body once `gate` opens: a side effect still running while its feature's steps are undone.
struct UndoTypeLater: SideEffect {
  let gate: Gate
  func sideEffect(_ context: SideEffectContext<UndoText, EmptySideEffectDependencyContainer>) async throws {
    await gate.waitIgnoringCancellation()
    try await context.dispatch(UndoType(text: "!"))
  }
}

typealias UndoStore = Store<UndoDocState, EmptySideEffectDependencyContainer>

// MARK: - Tests

@Suite("Undo and redo", .timeLimit(.failsafeMinutes(3)))
struct UndoHistoryTests {
  @Test func undoAndRedo_areCommitsThatObserversAndInterceptorsSee() async throws {
    let history = UndoHistory<UndoDocState>()
    let items = Recorder<String>()
    let seeing: StoreInterceptor = { _ in
      { next in
        { item in
          if let command = item as? UndoCommand<UndoDocState> { items.append("\(command.kind)") }
          try await next(item)
        }
      }
    }
    let store = UndoStore(initialState: UndoDocState(), interceptors: [seeing, history.interceptor])
    let counts = Recorder<Int>()
    let stop = store.addListener { _, new in counts.append(new.count) }
    defer { stop() }
    #expect(!history.canUndo)
    try await store.dispatch(UndoCount(amount: 1))
    try await store.dispatch(UndoCount(amount: 10))
    #expect(try await history.undo(on: store))
    #expect(store.state.count == 1)
    #expect(history.canUndo && history.canRedo)
    #expect(try await history.undo(on: store))
    #expect(store.state.count == 0)
    #expect(try await history.undo(on: store) == false)
    #expect(try await history.redo(on: store))
    #expect(try await history.redo(on: store))
    #expect(try await history.redo(on: store) == false)
    #expect(store.state.count == 11)
    #expect(counts.values == [1, 11, 1, 0, 0, 1, 11, 11])
    #expect(items.values == ["undo", "undo", "undo", "redo", "redo", "redo"])
  }

  @Test func anUndoInOneScope_leavesTheOtherScopesAndTheRootAlone() async throws {
    let store = UndoStore(initialState: UndoDocState(), interceptors: [])
    let titleID = store.scope(\.title, dependencies: \.self).id
    let titleHistory = UndoHistory<UndoDocState>(scope: titleID)
    let recorded = UndoStore(initialState: UndoDocState(), interceptors: [titleHistory.interceptor])
    let title = recorded.scope(\.title, dependencies: \.self)
    let body = recorded.scope(\.body, dependencies: \.self)
    try await title.dispatch(UndoType(text: "A"))
    try await body.dispatch(UndoType(text: "x"))
    try await title.dispatch(UndoType(text: "B"))
    try await recorded.dispatch(UndoCount(amount: 5))
    try await body.dispatch(UndoType(text: "y"))
    try await titleHistory.undo(on: title)
    #expect(recorded.state == UndoDocState(count: 5, title: UndoText(text: "A"), body: UndoText(text: "xy")))
    try await titleHistory.undo(on: title)
    #expect(recorded.state == UndoDocState(count: 5, title: UndoText(text: ""), body: UndoText(text: "xy")))
    try await titleHistory.redo(on: title)
    #expect(recorded.state == UndoDocState(count: 5, title: UndoText(text: "A"), body: UndoText(text: "xy")))
  }

  @Test func aSideEffectFinishingAfterItsStepWasUndone_commitsOnTop_andANewStepClearsRedo() async throws {
    let bodyHistory = UndoHistory<UndoDocState>(scope: ScopeIDs.body)
    let store = UndoStore(initialState: UndoDocState(), interceptors: [bodyHistory.interceptor])
    let body = store.scope(\.body, dependencies: \.self)
    let title = store.scope(\.title, dependencies: \.self)
    let gate = Gate()
    try await body.dispatch(UndoType(text: "a"))
    let later = body.send(UndoTypeLater(gate: gate))
    try await body.dispatch(UndoType(text: "b"))
    try await bodyHistory.undo(on: body)
    #expect(store.state.body.text == "a")
    // Another scope's commit is no step of this history: redo survives it.
    try await title.dispatch(UndoType(text: "T"))
    #expect(bodyHistory.canRedo)
    // The side effect finishes now: its commit lands on the undone state, and is a new step, which clears redo.
    gate.open()
    _ = await later.result
    #expect(store.state.body.text == "a!")
    #expect(!bodyHistory.canRedo)
    try await bodyHistory.undo(on: body)
    #expect(store.state.body.text == "a")
    #expect(store.state.title.text == "T")
  }

  @Test func aGroup_isUndoneAsOneStep() async throws {
    let history = UndoHistory<UndoDocState>()
    let store = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor])
    try await store.dispatch(UndoCount(amount: 1))
    history.beginGroup()
    for _ in 0..<3 { try await store.dispatch(UndoCount(amount: 10)) }
    history.endGroup()
    try await store.dispatch(UndoCount(amount: 100))
    try await history.undo(on: store)
    try await history.undo(on: store)
    #expect(store.state.count == 1)
    try await history.redo(on: store)
    #expect(store.state.count == 31)
  }

  @Test func isUndoable_choosesTheSteps() async throws {
    let history = UndoHistory<UndoDocState>(isUndoable: { ($0 as? UndoCount)?.amount != 0 })
    let store = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor])
    try await store.dispatch(UndoCount(amount: 2))
    try await store.dispatch(UndoCount(amount: 0))
    try await history.undo(on: store)
    #expect(store.state.count == 0)
    #expect(!history.canUndo)
  }

  /// The history against a plain model of its rules (every commit kept, the state replayed from the start), on
  /// seeded random sequences of steps, other commits, undos, redos and groups, with small bounds: a `commitLimit`
  /// that the history's own undos and redos would overflow if they counted.
  @Test(arguments: Array(0..<40) as [UInt64])
  func randomSessions_matchAPlainModel(seed: UInt64) async throws {
    var generator = SeededGenerator(seed: seed &* 7_919 &+ 17)
    let stepLimit = Int(generator.next() % 4) + 1
    let commitLimit = stepLimit + Int(generator.next() % 4)
    let history = UndoHistory<UndoDocState>(scope: ScopeIDs.body, stepLimit: stepLimit, commitLimit: commitLimit)
    let store = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor])
    let body = store.scope(\.body, dependencies: \.self)
    var model = UndoModel(stepLimit: stepLimit, commitLimit: commitLimit, base: UndoDocState())
    var trace: [String] = ["limits \(stepLimit), \(commitLimit)"]
    for step in 0..<30 {
      let choice = generator.next() % 7
      trace.append("\(choice)")
      switch choice {
      case 0, 1:
        let text = String(UnicodeScalar(UInt8(97 + step % 26)))
        try await body.dispatch(UndoType(text: text))
        model.commit(isStep: true) { $0.body.text += text }
      case 2:
        try await store.dispatch(UndoCount(amount: step))
        model.commit(isStep: false) { $0.count += step }
      case 3, 4:
        #expect(try await history.undo(on: body) == model.undo(), "seed \(seed), after operation \(step): \(trace)")
      case 5:
        #expect(try await history.redo(on: body) == model.redo(), "seed \(seed), after operation \(step): \(trace)")
      default:
        if model.grouping {
          history.endGroup()
        } else {
          history.beginGroup()
        }
        model.grouping.toggle()
      }
      #expect(store.state == model.state, "seed \(seed), after operation \(step): \(trace)")
      #expect(history.canUndo == model.canUndo && history.canRedo == model.canRedo, "seed \(seed), step \(step)")
    }
  }

  @Test func theHistoryDoesNotCopyTheStateOnEachStep() async throws {
    let history = UndoHistory<UndoDocState>()
    let store = UndoStore(
      initialState: UndoDocState(numbers: Array(repeating: 0, count: 100_000)), interceptors: [history.interceptor])
    let addresses = Recorder<UInt>()
    for _ in 0..<5 { try await store.dispatch(UndoBumpFirst(addresses: addresses)) }
    // The first change copies the array once (the history keeps the state it started from); the next ones change
    // the store's copy in place.
    #expect(Set(addresses.values.dropFirst()).count == 1)
    try await history.undo(on: store)
    #expect(store.state.numbers[0] == 4)
  }

  /// What a commit makes the history let go (here the oldest step, folded by the next one) is released after the
  /// store's lock is: an object the folded updater held may read the store's state from its deinit, and sees the
  /// commit that folded it. (Released under the lock, it read the empty state the store hands a reentrant read.)
  @Test func foldedStep_isReleasedAfterTheStoresLock() async throws {
    let store = try await makeReadyStore()
    let history = UndoHistory<CounterState>(stepLimit: 1, commitLimit: 1)
    try history.attach(to: store)
    let box = StoreBox()
    box.store = store
    let seen = Recorder<Int>()
    try await store.dispatch(IncrementHolding(object: ReadsStateWhenReleased(box: box, seen: seen)))
    #expect(seen.values.isEmpty, "the history keeps its step, and the updater with it")
    let finished = completesOnThread(within: 30) { _ = store.send(Increment(by: 10)) }
    #expect(finished)
    #expect(seen.values == [11])
    box.store = nil
  }
}

/// An increment that holds an object for as long as it is kept.
private struct IncrementHolding: StateUpdater {
  let object: ReadsStateWhenReleased
  func updateState(_ state: inout CounterState) { state.counter += 1 }
}

/// Scope ids computed by a store, to check the key-path form of the histories' initializers against.
enum ScopeIDs {
  static let body = UndoStore(initialState: UndoDocState()).scope(\.body, dependencies: \.self).id
  static let title = UndoStore(initialState: UndoDocState()).scope(\.title, dependencies: \.self).id
}

/// The rules of ``UndoHistory``, written plainly: every commit kept with its step, the state replayed from the start,
/// and the limits applied to an index into that list. The observation fuzzer uses it as the plain twin of the histories
/// it drives.
struct UndoModel<Document> {
  struct Entry {
    let apply: (inout Document) -> Void
    let step: Int?
  }

  let stepLimit: Int
  let commitLimit: Int
  /// The state before the first commit.
  let base: Document
  /// Every commit but the history's own undos and redos, which are its bookkeeping.
  var entries: [Entry] = []
  /// The commits before this index are folded: their steps can no longer be undone or redone.
  var oldest = 0
  /// The steps kept, oldest first: done, or undone and still redoable.
  var steps: [Int] = []
  /// Steps whose commits the state leaves out: undone (redoable or not any more).
  var undone: Set<Int> = []
  /// Steps undone and not dropped, the one undone last at the end.
  var redoStack: [Int] = []
  /// Steps undone that a new step made final: their commits are gone from the history.
  var dropped: Set<Int> = []
  var nextStep = 1
  var grouping = false {
    didSet { if !grouping { group = nil } }
  }
  var group: Int?

  var canUndo: Bool { steps.contains { !undone.contains($0) } }
  var canRedo: Bool { !redoStack.isEmpty }

  init(stepLimit: Int, commitLimit: Int, base: Document) {
    self.stepLimit = stepLimit
    self.commitLimit = commitLimit
    self.base = base
  }

  var state: Document {
    var state = base
    for entry in entries where !(entry.step.map(undone.contains) ?? false) { entry.apply(&state) }
    return state
  }

  /// The commits the history keeps: from `oldest` on, except those of dropped steps.
  var kept: [Int] {
    (oldest..<entries.count).filter { entries[$0].step.map { !dropped.contains($0) } ?? true }
  }

  mutating func commit(isStep: Bool, _ apply: @escaping (inout Document) -> Void) {
    var step: Int?
    if isStep {
      // A new step makes the undone steps final: they can never be redone, so they take no room.
      dropped.formUnion(redoStack)
      steps.removeAll { redoStack.contains($0) }
      redoStack.removeAll()
      if grouping, let group, steps.last == group {
        step = group
      } else {
        step = nextStep
        nextStep += 1
        steps.append(step!)
        if grouping { group = step }
      }
    }
    entries.append(Entry(apply: apply, step: step))
    // Over a limit, the oldest commit kept is folded; a step's commit takes the whole step (and what lies between).
    while steps.count > stepLimit || kept.count > commitLimit, let first = kept.first {
      guard let folded = entries[first].step else {
        oldest = first + 1
        continue
      }
      oldest = (entries.lastIndex { $0.step == folded } ?? first) + 1
      steps.removeAll { $0 == folded }
      redoStack.removeAll { $0 == folded }
      if group == folded { group = nil }
    }
  }

  mutating func undo() -> Bool {
    guard let step = steps.last(where: { !undone.contains($0) }) else { return false }
    undone.insert(step)
    redoStack.append(step)
    return true
  }

  mutating func redo() -> Bool {
    guard let step = redoStack.popLast() else { return false }
    undone.remove(step)
    return true
  }
}

@Suite("Undo: histories together, and replays of their commands", .timeLimit(.failsafeMinutes(3)))
struct UndoCompositionTests {
  /// A scope's undo is, for the store's history, a commit like another: undoing an earlier root step keeps it.
  @Test func aScopesUndo_survivesTheRootHistorysUndoOfAnEarlierStep() async throws {
    let root = UndoHistory<UndoDocState>()
    let titles = UndoHistory<UndoDocState>(scope: ScopeIDs.title)
    let store = UndoStore(initialState: UndoDocState(), interceptors: [root.interceptor, titles.interceptor])
    let title = store.scope(\.title, dependencies: \.self)
    try await title.dispatch(UndoType(text: "A"))
    try await store.dispatch(UndoCount(amount: 5))
    try await titles.undo(on: title)
    #expect(store.state == UndoDocState(count: 5))
    try await root.undo(on: store)  // the root's latest step: the count
    #expect(store.state == UndoDocState(count: 0))
    try await root.undo(on: store)  // then the typing, already undone by the title's history
    #expect(store.state == UndoDocState(count: 0))
    // The title's redo puts its step back in its own replay, but the root's later undos are commits that set the
    // whole state: they come after it, and win.
    #expect(try await titles.redo(on: title))
    #expect(store.state.title.text == "")
    // Overlapping histories: the title's redo committed the title as its own replay found it (empty, the root
    // having undone the typing); the root's redos come after, but its replay ends with that commit too.
    try await root.redo(on: store)
    try await root.redo(on: store)
    #expect(store.state == UndoDocState(count: 5, title: UndoText(text: "")))
  }

  /// Histories of disjoint scopes compose: each undo changes its own slice only.
  @Test func historiesOfDisjointScopes_eachUndoTheirOwnSlice() async throws {
    let titles = UndoHistory<UndoDocState>(scope: \.title)
    let bodies = UndoHistory<UndoDocState>(scope: \.body)
    #expect(titles.scope == ScopeIDs.title && bodies.scope == ScopeIDs.body)
    let store = UndoStore(initialState: UndoDocState(), interceptors: [titles.interceptor, bodies.interceptor])
    let title = store.scope(\.title, dependencies: \.self)
    let body = store.scope(\.body, dependencies: \.self)
    try await title.dispatch(UndoType(text: "T1"))
    try await body.dispatch(UndoType(text: "B1"))
    try await title.dispatch(UndoType(text: "T2"))
    try await body.dispatch(UndoType(text: "B2"))
    try await titles.undo(on: title)
    try await bodies.undo(on: body)
    try await bodies.undo(on: body)
    #expect(store.state.title.text == "T1" && store.state.body.text == "")
    try await titles.redo(on: title)
    try await bodies.redo(on: body)
    #expect(store.state.title.text == "T1T2" && store.state.body.text == "B1")
    try await titles.undo(on: title)
    try await titles.undo(on: title)
    #expect(store.state.title.text == "" && store.state.body.text == "B1")
  }

  /// Replaying a recording that contains undos sets what they set, and leaves the live history alone.
  @Test func aRecordingWithUndos_replaysThem_withoutTouchingTheHistory() async throws {
    let history = UndoHistory<UndoDocState>()
    let recorder = StoreRecorder<UndoDocState>(checkpointInterval: 1)
    let store = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor, recorder.interceptor])
    try await store.dispatch(UndoCount(amount: 1))
    try await store.dispatch(UndoCount(amount: 2))
    try await history.undo(on: store)
    try await history.undo(on: store)
    try await history.redo(on: store)
    let recording = recorder.recording()
    #expect(try recording.replayedStates().map(\.count) == [1, 3, 1, 0, 1])
    #expect(try recording.replayedState() == store.state)
    // The history is where the live session left it: one step left to redo.
    #expect(try await history.redo(on: store))
    #expect(store.state.count == 3)
  }

  @Test func aScopesHistory_undoesThroughItsScope_only() async throws {
    let titles = UndoHistory<UndoDocState>(scope: ScopeIDs.title)
    let store = UndoStore(initialState: UndoDocState(), interceptors: [titles.interceptor])
    try await store.scope(\.title, dependencies: \.self).dispatch(UndoType(text: "A"))
    await #expect {
      try await titles.undo(on: store)
    } throws: { error in
      guard case RecorderError.scopeRequired = error else { return false }
      return true
    }
    await #expect(throws: RecorderError.self) { try await titles.undo(on: store.scope(\.body, dependencies: \.self)) }
    #expect(store.state.title.text == "A")
  }
}

@Suite("Undo and recording: used on the wrong store", .timeLimit(.failsafeMinutes(3)))
struct RecorderMisuseTests {
  @Test func aHistoryOrRecorderActingOnAStoreItDoesNotFollow_throwsAndChangesNothing() async throws {
    let history = UndoHistory<UndoDocState>()
    let recorder = StoreRecorder<UndoDocState>()
    let followed = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor, recorder.interceptor])
    let other = UndoStore(initialState: UndoDocState(count: 7))
    try await followed.dispatch(UndoCount(amount: 1))

    await #expect(throws: RecorderError.self) { try await history.undo(on: other) }
    await #expect(throws: RecorderError.self) { try await recorder.travel(other, to: 0) }
    await #expect(throws: RecorderError.self) { _ = try await recorder.drain(other) }
    #expect(other.state.count == 7)

    let unused = UndoHistory<UndoDocState>()
    await #expect {
      try await unused.undo(on: followed)
    } throws: { error in
      guard case RecorderError.notInstalled = error else { return false }
      return true
    }
    #expect(followed.state.count == 1)
  }
}

@Suite("Undo under concurrency", .timeLimit(.failsafeMinutes(3)))
struct UndoConcurrencyTests {
  /// Tasks typing through two scopes and counting (some invertibly) at the root, while others undo and redo through a
  /// scope's history and the store's: every state the store committed is what the recording replays to, commit by
  /// commit.
  @Test(arguments: [11, 12, 13, 14] as [UInt64])
  func concurrentStepsUndosAndRedos_replayToTheCommitLog(seed: UInt64) async throws {
    let root = UndoHistory<UndoDocState>(stepLimit: 5, commitLimit: 20)
    let bodies = UndoHistory<UndoDocState>(scope: ScopeIDs.body, stepLimit: 3)
    let recorder = StoreRecorder<UndoDocState>(capacity: 1 << 16, checkpointInterval: 3)
    let store = UndoStore(
      initialState: UndoDocState(), interceptors: [root.interceptor, bodies.interceptor, recorder.interceptor])
    let log = Recorder<UndoDocState>()
    let stop = store.addListener { _, new in log.append(new) }
    defer { stop() }
    let body = store.scope(\.body, dependencies: \.self)
    let title = store.scope(\.title, dependencies: \.self)
    await withTaskGroup(of: Void.self) { group in
      for actor in 0..<4 {
        group.addTask {
          var generator = SeededGenerator(seed: seed &* 31 &+ UInt64(actor))
          for step in 0..<40 {
            switch generator.next() % 6 {
            case 0: _ = try? await body.dispatch(UndoType(text: "\(actor)"))
            case 1: _ = try? await title.dispatch(UndoType(text: "\(step % 10)"))
            case 2:
              // Invertible steps too: the store's history undoes the latest in place when nothing followed it.
              if step % 2 == 0 {
                _ = try? await store.dispatch(UndoCount(amount: 1))
              } else {
                _ = try? await store.dispatch(UndoAppendNumber(number: step))
              }
            case 3: _ = try? await bodies.undo(on: body)
            case 4: _ = try? await (generator.next() % 2 == 0 ? root.undo(on: store) : root.redo(on: store))
            default: _ = try? await bodies.redo(on: body)
            }
          }
        }
      }
    }
    let recording = recorder.recording()
    #expect(recording.initialState == UndoDocState())
    #expect(try recording.replayedStates() == log.values, "seed \(seed)")
    #expect(try recording.replayedState() == store.state)
  }
}

@Suite("Undo: a scope's history made from its key path")
struct UndoScopeKeyPathTests {
  @Test func theKeyPathForms_nameTheScopesTheStoreMounts() {
    let rooms = RecStore(initialState: RecCounterState(rooms: [FeatRoom(id: 1)]))
    #expect(
      UndoHistory<RecCounterState>(scope: \.rooms, id: 1).scope == rooms.scope(\.rooms, id: 1, dependencies: \.self).id)
    #expect(
      UndoHistory<RecCounterState>(scope: \.rooms, id: 2).scope != rooms.scope(\.rooms, id: 1, dependencies: \.self).id)
    #expect(UndoHistory<RecCounterState>(scope: \.cart).scope == rooms.scope(\.cart, dependencies: \.self).id)
    let logs = LogStore(initialState: LogAppState())
    #expect(UndoHistory<LogAppState>(scope: \.draft).scope == logs.scope(\.draft, dependencies: \.self).id)
    #expect(
      UndoHistory<LogAppState>(scope: \.archive.notes).scope
        == logs.scope(\.archive, dependencies: \.self).scope(\.notes, dependencies: \.self).id)
  }
}

// MARK: - The two limits

struct UndoRoom: State, Equatable, Identifiable {
  var id = 0
  var text = ""
}

struct UndoRoomsState: State, Equatable {
  var rooms: [UndoRoom] = []
}

struct UndoTypeInRoom: StateUpdater {
  let text: String
  func updateState(_ state: inout UndoRoom) { state.text += text }
}

@Suite("Undo: the limits count commits, not the history's own undos and redos", .timeLimit(.failsafeMinutes(3)))
struct UndoLimitTests {
  /// Undoes (or redoes) until there is nothing left, at most `bound` times; returns how many did something.
  func repeatedly(_ bound: Int, _ operation: () async throws -> Bool) async throws -> Int {
    var count = 0
    for _ in 0..<bound {
      if try await operation() { count += 1 }
    }
    return count
  }

  @Test func stepLimitSteps_withCommitLimitAsLow_canAllBeUndoneAndRedone_again_andAgain() async throws {
    let history = UndoHistory<UndoDocState>(stepLimit: 5, commitLimit: 5)
    let store = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor])
    for amount in [1, 2, 4, 8, 16] { try await store.dispatch(UndoCount(amount: amount)) }
    for round in 0..<3 {
      #expect(try await repeatedly(10) { try await history.undo(on: store) } == 5, "round \(round)")
      #expect(store.state.count == 0, "round \(round)")
      #expect(try await repeatedly(10) { try await history.redo(on: store) } == 5, "round \(round)")
      #expect(store.state.count == 31, "round \(round)")
    }
  }

  /// Steps undone and then overtaken by a new step can never be redone: they take no room among the `stepLimit`
  /// (a `commitLimit` with room to spare, so that only `stepLimit` is at play).
  @Test func stepsUndoneThenOvertakenByANewStep_takeNoRoom() async throws {
    let history = UndoHistory<UndoDocState>(stepLimit: 3, commitLimit: 100)
    let store = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor])
    for amount in [1, 2, 4] { try await store.dispatch(UndoCount(amount: amount)) }
    try await history.undo(on: store)
    try await history.undo(on: store)
    for amount in [8, 16] { try await store.dispatch(UndoCount(amount: amount)) }
    #expect(store.state.count == 25)
    #expect(!history.canRedo)
    #expect(try await repeatedly(10) { try await history.undo(on: store) } == 3)
    #expect(store.state.count == 0)
  }

  /// `commitLimit` counts the steps' commits and the commits that are not steps (here the root's, for a scope's
  /// history), from the oldest step kept on; past it, the oldest step is folded.
  @Test func commitLimit_countsTheStepsAndTheOtherCommits_andFoldsTheOldestStepPastIt() async throws {
    let history = UndoHistory<UndoDocState>(scope: \.body, stepLimit: 3, commitLimit: 5)
    let store = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor])
    let body = store.scope(\.body, dependencies: \.self)
    try await store.dispatch(UndoCount(amount: 100))  // before the first step: folded first, alone
    try await body.dispatch(UndoType(text: "a"))
    try await store.dispatch(UndoCount(amount: 1))
    try await body.dispatch(UndoType(text: "b"))
    try await store.dispatch(UndoCount(amount: 2))
    try await body.dispatch(UndoType(text: "c"))
    // Kept: a, 1, b, 2, c (five commits, three steps).
    #expect(try await repeatedly(10) { try await history.undo(on: body) } == 3)
    #expect(store.state == UndoDocState(count: 103))
    #expect(try await repeatedly(10) { try await history.redo(on: body) } == 3)
    #expect(store.state == UndoDocState(count: 103, body: UndoText(text: "abc")))
    // A sixth commit: the oldest step goes, two are left to undo.
    try await store.dispatch(UndoCount(amount: 4))
    #expect(try await repeatedly(10) { try await history.undo(on: body) } == 2)
    #expect(store.state == UndoDocState(count: 107, body: UndoText(text: "a")))
  }

  /// Concurrent sessions: each task types `k` steps in its own room (a scope of its own, with a history of its own),
  /// then undoes `k` times, then redoes `k` times, while the other tasks do the same in theirs; the tasks pass a
  /// barrier before each phase, so that the phases overlap. A history keeps its `k` steps and the other tasks'
  /// commits among them (at most `3k` each: steps, undos, redos), so with `commitLimit = k + (tasks - 1) * 3k` every
  /// session must come back, whatever the interleaving: after the undos the room is empty, after the redos it holds
  /// the `k` steps again.
  @Test func concurrentSessions_undoKThenRedoK_comeBack() async throws {
    let (tasks, k, sessions) = (3, 4, 96)
    let commitLimit = k + (tasks - 1) * 3 * k
    let typed = (0..<k).map(String.init).joined()
    var failures: [String] = []
    for session in 0..<sessions {
      let histories = (0..<tasks).map {
        UndoHistory<UndoRoomsState>(scope: \.rooms, id: $0, stepLimit: k, commitLimit: commitLimit)
      }
      let store = Store<UndoRoomsState, EmptySideEffectDependencyContainer>(
        initialState: UndoRoomsState(rooms: (0..<tasks).map { UndoRoom(id: $0) }),
        interceptors: histories.map(\.interceptor))
      let barrier = EventCounter()
      let outcomes = await withTaskGroup(of: String?.self) { group in
        for task in 0..<tasks {
          group.addTask {
            let room = store.scope(\.rooms, id: task, dependencies: \.self)
            let history = histories[task]
            var problem: String?
            // Every task passes every barrier, even after a problem, so that none waits for ever.
            for phase in 0..<3 {
              barrier.increment()
              await barrier.wait(for: (phase + 1) * tasks)
              guard problem == nil else { continue }
              do {
                var done = 0
                for step in 0..<k {
                  switch phase {
                  case 0: try await room.dispatch(UndoTypeInRoom(text: "\(step)"))
                  case 1: if try await history.undo(on: room) { done += 1 }
                  default: if try await history.redo(on: room) { done += 1 }
                  }
                }
                let text = store.state.rooms[task].text
                let expected = phase == 1 ? "" : typed
                if phase > 0, done != k || text != expected {
                  problem = "task \(task): \(done) \(phase == 1 ? "undos" : "redos") to \"\(text)\""
                }
              } catch {
                problem = "task \(task) threw \(error)"
              }
            }
            return problem
          }
        }
        var outcomes: [String] = []
        for await outcome in group { if let outcome { outcomes.append(outcome) } }
        return outcomes
      }
      if !outcomes.isEmpty { failures.append("session \(session): \(outcomes.joined(separator: "; "))") }
    }
    #expect(failures.isEmpty, "\(failures.count) of \(sessions) sessions did not come back: \(failures.prefix(3))")
  }
}

// MARK: - The buffer alone, against the plain model

/// Appends to the body's text at the root: a commit the buffer can replay without a store.
struct UndoAppendBody: StateUpdater {
  let text: String
  func updateState(_ state: inout UndoDocState) { state.body.text += text }
}

@Suite("Undo: the history's buffer, driven directly")
struct UndoBufferTests {
  /// The buffer against ``UndoModel`` on seeded random sequences (longer and with more limits than a store session
  /// affords), and within its bounds after every operation.
  @Test(arguments: Array(0..<200) as [UInt64])
  func randomSequences_matchThePlainModel_andStayWithinTheLimits(seed: UInt64) {
    var generator = SeededGenerator(seed: seed &* 104_729 &+ 3)
    let stepLimit = Int(generator.next() % 5) + 1
    let commitLimit = stepLimit + Int(generator.next() % 6)
    var buffer = UndoBuffer<UndoDocState>(stepLimit: stepLimit, commitLimit: commitLimit)
    buffer.base = UndoDocState()
    var model = UndoModel(stepLimit: stepLimit, commitLimit: commitLimit, base: UndoDocState())
    var trace: [String] = ["limits \(stepLimit), \(commitLimit)"]
    for operation in 0..<80 {
      let choice = generator.next() % 8
      trace.append("\(choice)")
      switch choice {
      case 0, 1, 2:
        let text = String(UnicodeScalar(UInt8(97 + operation % 26)))
        _ = buffer.append(.erased(UndoAppendBody(text: text)), isStep: true)
        model.commit(isStep: true) { $0.body.text += text }
      case 3:
        _ = buffer.append(.erased(UndoCount(amount: operation)), isStep: false)
        model.commit(isStep: false) { $0.count += operation }
      case 4, 5:
        let undone = buffer.undo()
        #expect((undone != nil) == model.undo(), "seed \(seed): \(trace)")
        if let undone { #expect(undone == model.state, "seed \(seed): \(trace)") }
      case 6:
        let redone = buffer.redo()
        #expect((redone != nil) == model.redo(), "seed \(seed): \(trace)")
        if let redone { #expect(redone == model.state, "seed \(seed): \(trace)") }
      default:
        if model.grouping {
          buffer.endGroup()
        } else {
          buffer.beginGroup()
        }
        model.grouping.toggle()
      }
      #expect(buffer.replayed() == model.state, "seed \(seed): \(trace)")
      #expect(buffer.canUndo == model.canUndo && buffer.canRedo == model.canRedo, "seed \(seed): \(trace)")
      #expect(buffer.entries.count == model.kept.count, "seed \(seed): \(trace)")
      #expect(buffer.entries.count <= commitLimit && buffer.steps.count <= stepLimit, "seed \(seed): \(trace)")
    }
  }

  /// A group's commits each count against `commitLimit`: a group of more commits than it leaves no room for the
  /// steps before it.
  @Test func aGroupsCommits_eachCountAgainstCommitLimit() {
    var buffer = UndoBuffer<UndoDocState>(stepLimit: 3, commitLimit: 4)
    buffer.base = UndoDocState()
    _ = buffer.append(.erased(UndoCount(amount: 1)), isStep: true)
    _ = buffer.append(.erased(UndoCount(amount: 2)), isStep: true)
    buffer.beginGroup()
    for _ in 0..<3 { _ = buffer.append(.erased(UndoCount(amount: 10)), isStep: true) }
    buffer.endGroup()
    // Five commits: the oldest step is folded; the group and the step before it are left.
    #expect(buffer.steps.count == 2 && buffer.entries.count == 4)
    #expect(buffer.undo()?.count == 3)
    #expect(buffer.undo()?.count == 1)
    #expect(buffer.undo() == nil)
  }

  /// The entries a new step drops (the undone steps') and the ones a fold takes are handed back, to be released
  /// outside the history's lock.
  @Test func appending_handsBackWhatItDropsAndFolds() {
    var buffer = UndoBuffer<UndoDocState>(stepLimit: 2, commitLimit: 3)
    buffer.base = UndoDocState()
    for amount in [1, 2] { #expect(buffer.append(.erased(UndoCount(amount: amount)), isStep: true).isEmpty) }
    #expect(buffer.append(.erased(UndoCount(amount: 100)), isStep: false).isEmpty)
    _ = buffer.undo()
    // The new step drops the undone one (2); the limits hold without a fold.
    #expect(buffer.append(.erased(UndoCount(amount: 4)), isStep: true).entries.map(\.step) == [2])
    // Past `stepLimit`: the oldest step (1) is folded.
    #expect(buffer.append(.erased(UndoCount(amount: 8)), isStep: true).entries.map(\.step) == [1])
    #expect(buffer.base?.count == 1 && buffer.replayed()?.count == 113)
  }
}

// MARK: - Undos in a log

struct UndoLogText: State, Equatable, Codable {
  var text = ""
}

struct UndoLogRoom: State, Equatable, Codable, Identifiable {
  var id = 0
  var text = ""
}

struct UndoLogState: State, Equatable, Codable {
  var count = 0
  var editor = UndoLogText()
  var rooms = [UndoLogRoom(id: 1), UndoLogRoom(id: 2)]
}

struct UndoLogAdd: StateUpdater, Codable {
  let amount: Int
  func updateState(_ state: inout UndoLogState) { state.count += amount }
}

struct UndoLogType: StateUpdater, Codable {
  let text: String
  func updateState(_ state: inout UndoLogText) { state.text += text }
}

struct UndoLogTypeInRoom: StateUpdater, Codable {
  let text: String
  func updateState(_ state: inout UndoLogRoom) { state.text += text }
}

typealias UndoLogStore = Store<UndoLogState, EmptySideEffectDependencyContainer>

struct UndoLogRefused: Error {}

/// The updaters of the log sessions, and the undo commands of the root's history, the editor's and the rooms'.
func undoLogRegistry() -> ReplayRegistry<UndoLogState> {
  var registry = ReplayRegistry<UndoLogState>()
  registry.register(UndoLogAdd.self, as: "add")
  registry.register(UndoLogType.self, as: "editor.type", at: \.editor)
  registry.register(UndoCommand<UndoLogState>.self, as: "undo")
  registry.register(UndoCommand<UndoLogText>.self, as: "editor.undo", at: \.editor)
  registry.register(UndoLogTypeInRoom.self, as: "rooms.type", onElementsOf: \.rooms)
  registry.register(UndoCommand<UndoLogRoom>.self, as: "rooms.undo", onElementsOf: \.rooms)
  return registry
}

@Suite("Undo: a session with undos replays from its log", .timeLimit(.failsafeMinutes(3)))
struct UndoLogTests {
  /// Records a session of steps, undos and redos at the root, in the editor's scope and in a room's (one undo with
  /// nothing to undo), with the recorder last among the interceptors; returns the store, the recording, and every
  /// state the store committed.
  func recordSession() async throws -> (UndoLogStore, Recording<UndoLogState>, [UndoLogState]) {
    let root = UndoHistory<UndoLogState>(isUndoable: { $0 is UndoLogAdd })
    let editorHistory = UndoHistory<UndoLogState>(scope: \.editor)
    let roomHistory = UndoHistory<UndoLogState>(scope: \.rooms, id: 2)
    let recorder = StoreRecorder<UndoLogState>(checkpointInterval: 2)
    let store = UndoLogStore(
      initialState: UndoLogState(),
      interceptors: [root.interceptor, editorHistory.interceptor, roomHistory.interceptor, recorder.interceptor])
    let states = Recorder<UndoLogState>()
    let stop = store.addListener { _, new in states.append(new) }
    defer { stop() }
    let editor = store.scope(\.editor, dependencies: \.self)
    try await store.dispatch(UndoLogAdd(amount: 1))
    try await store.dispatch(UndoLogAdd(amount: 10))
    #expect(try await root.undo(on: store))  // count 1
    try await store.dispatch(UndoLogAdd(amount: 100))  // 101
    #expect(try await root.undo(on: store))  // 1
    #expect(try await root.redo(on: store))  // 101
    // The root's undos set the whole state: the editor's steps come after them, so that its undos are not overridden.
    try await editor.dispatch(UndoLogType(text: "a"))
    try await editor.dispatch(UndoLogType(text: "b"))
    #expect(try await editorHistory.undo(on: editor))  // "a"
    try await store.dispatch(UndoLogAdd(amount: 1_000))  // 1101: a root step, another commit for the editor
    #expect(try await editorHistory.redo(on: editor))  // "ab"
    #expect(try await editorHistory.undo(on: editor))  // "a"
    #expect(try await editorHistory.undo(on: editor))  // ""
    #expect(try await editorHistory.undo(on: editor) == false)  // nothing to undo: a commit that changes nothing
    let room = store.scope(\.rooms, id: 2, dependencies: \.self)
    try await room.dispatch(UndoLogTypeInRoom(text: "x"))
    try await room.dispatch(UndoLogTypeInRoom(text: "y"))
    #expect(try await roomHistory.undo(on: room))  // "x"
    #expect(try await roomHistory.redo(on: room))  // "xy"
    #expect(try await roomHistory.undo(on: room))  // "x"
    var expected = UndoLogState(count: 1_101)
    expected.rooms[1].text = "x"
    #expect(store.state == expected)
    return (store, recorder.recording(), states.values)
  }

  @Test func aSessionWithUndos_encodedAndDecoded_replaysToTheLiveState() async throws {
    let (store, recording, states) = try await recordSession()
    let text = try RecordingLog.encode(recording, registry: undoLogRegistry())
    let decoded = try RecordingLog.decode(text, registry: undoLogRegistry())
    #expect(decoded.commits.count == recording.commits.count)
    let kinds = { (recording: Recording<UndoLogState>) in
      recording.commits.compactMap {
        ($0.base as? UndoCommand<UndoLogState>)?.kind ?? ($0.base as? UndoCommand<UndoLogText>)?.kind
          ?? ($0.base as? UndoCommand<UndoLogRoom>)?.kind
      }
    }
    #expect(kinds(decoded) == [.undo, .undo, .redo, .undo, .redo, .undo, .undo, .undo, .undo, .redo, .undo])
    #expect(kinds(decoded) == kinds(recording))
    #expect(try decoded.replayedStates() == states)
    #expect(try decoded.replayedState() == store.state)
  }

  @Test func aDecodedSession_replaysIntoAFreshStore() async throws {
    let (store, recording, _) = try await recordSession()
    let decoded = try RecordingLog.decode(
      try RecordingLog.encode(recording, registry: undoLogRegistry()), registry: undoLogRegistry())
    let fresh = UndoLogStore(initialState: decoded.initialState)
    try await decoded.replay(into: fresh)
    #expect(fresh.state == store.state)
    // Through the interceptors too, as a user's replay with a recorder of its own would.
    let again = UndoLogStore(initialState: decoded.initialState)
    try await decoded.replay(into: again, throughInterceptors: true)
    #expect(again.state == store.state)
  }

  /// A decoded undo belongs to no history: the fresh store's history takes it as another history's, a commit that
  /// sets its value, neither a step nor its own bookkeeping.
  @Test func aDecodedUndo_isForTheHistoryOfTheStoreReplayedInto_aCommitThatSetsItsValue() async throws {
    let live = UndoHistory<UndoLogState>()
    let recorder = StoreRecorder<UndoLogState>()
    let store = UndoLogStore(initialState: UndoLogState(), interceptors: [live.interceptor, recorder.interceptor])
    try await store.dispatch(UndoLogAdd(amount: 1))
    try await store.dispatch(UndoLogAdd(amount: 10))
    try await live.undo(on: store)  // sets count 1
    try await store.dispatch(UndoLogAdd(amount: 100))  // 101
    let decoded = try RecordingLog.decode(
      try RecordingLog.encode(recorder.recording(), registry: undoLogRegistry()), registry: undoLogRegistry())

    let history = UndoHistory<UndoLogState>()
    let fresh = UndoLogStore(initialState: UndoLogState(), interceptors: [history.interceptor])
    try await decoded.replay(into: fresh)
    #expect(fresh.state.count == 101)
    // Undoing 100 replays 1, 10 and the undo's "set 1": 1 (skipping the undo, as bookkeeping, would give 11).
    #expect(try await history.undo(on: fresh))
    #expect(fresh.state.count == 1)
    // Next the 10 (the undo is no step): still 1, the undo's value coming after it (were it a step: 11).
    #expect(try await history.undo(on: fresh))
    #expect(fresh.state.count == 1)
    #expect(try await history.undo(on: fresh))
    #expect(fresh.state.count == 1)
    #expect(try await history.undo(on: fresh) == false)
  }

  @Test func anUndoCommand_encodesItsKindAndTheValueItSet_andDecodesToACommandThatSetsIt() async throws {
    let history = UndoHistory<UndoLogState>()
    let commands = Recorder<UndoCommand<UndoLogState>>()
    let seeing: StoreInterceptor = { _ in
      { next in
        { item in
          try await next(item)
          if let command = item as? UndoCommand<UndoLogState> { commands.append(command) }
        }
      }
    }
    let store = UndoLogStore(initialState: UndoLogState(rooms: []), interceptors: [history.interceptor, seeing])
    try await store.dispatch(UndoLogAdd(amount: 5))
    try await history.undo(on: store)
    try await history.undo(on: store)  // nothing to undo
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let texts = try commands.values.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
    #expect(
      texts == [
        #"{"kind":"undo","value":{"count":0,"editor":{"text":""},"rooms":[]}}"#, #"{"kind":"undo","value":null}"#,
      ])
    // Decoded, each sets what it set: the first the value, the second nothing.
    let decoded = try texts.map { try JSONDecoder().decode(UndoCommand<UndoLogState>.self, from: Data($0.utf8)) }
    #expect(decoded.map(\.kind) == [.undo, .undo])
    let other = UndoLogStore(initialState: UndoLogState(count: 7))
    try await other.dispatch(decoded[1])
    #expect(other.state.count == 7)
    try await other.dispatch(decoded[0])
    #expect(other.state.count == 0)
    // A value missing (not null) is an error, not "nothing".
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode(UndoCommand<UndoLogState>.self, from: Data(#"{"kind":"redo"}"#.utf8))
    }
  }

  /// Before its turn, the value a command sets is unknown: encoding it then (an interceptor's doing, or a recording
  /// built by hand) is an encoding error.
  @Test func anUndoCommandThatHasNotCommitted_isAnEncodingError() async throws {
    let history = UndoHistory<UndoLogState>()
    let captured = Recorder<UndoCommand<UndoLogState>>()
    let refusing: StoreInterceptor = { _ in
      { next in
        { item in
          if let command = item as? UndoCommand<UndoLogState> {
            captured.append(command)
            #expect(throws: EncodingError.self) { try JSONEncoder().encode(command) }
            throw UndoLogRefused()
          }
          try await next(item)
        }
      }
    }
    let store = UndoLogStore(initialState: UndoLogState(), interceptors: [refusing, history.interceptor])
    try await store.dispatch(UndoLogAdd(amount: 5))
    await #expect(throws: UndoLogRefused.self) { try await history.undo(on: store) }
    let command = try #require(captured.values.first)
    #expect(throws: EncodingError.self) { try JSONEncoder().encode(command) }
    let recording = Recording(
      initialState: UndoLogState(), commits: [RecordedCommit(sequence: 1, time: .zero, updater: command)])
    #expect(throws: RecordingLogError.self) { try RecordingLog.encode(recording, registry: undoLogRegistry()) }
    #expect(store.state.count == 5)
  }
}
