import Katana
import KatanaTestSupport
import Testing

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

@Suite("Undo and redo", .timeLimit(.minutes(1)))
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
  /// seeded random sequences of steps, other commits, undos, redos and groups, with small bounds.
  @Test(arguments: Array(0..<40) as [UInt64])
  func randomSessions_matchAPlainModel(seed: UInt64) async throws {
    var generator = SeededGenerator(seed: seed &* 7_919 &+ 17)
    let stepLimit = Int(generator.next() % 4) + 1
    let history = UndoHistory<UndoDocState>(scope: ScopeIDs.body, stepLimit: stepLimit)
    let store = UndoStore(initialState: UndoDocState(), interceptors: [history.interceptor])
    let body = store.scope(\.body, dependencies: \.self)
    var model = UndoModel(stepLimit: stepLimit)
    var trace: [String] = ["limit \(stepLimit)"]
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
        #expect(try await history.undo(on: body) == model.undo())
      case 5:
        #expect(try await history.redo(on: body) == model.redo())
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
}

/// Scope ids computed by a store, to check the key-path form of the histories' initializers against.
enum ScopeIDs {
  static let body = UndoStore(initialState: UndoDocState()).scope(\.body, dependencies: \.self).id
  static let title = UndoStore(initialState: UndoDocState()).scope(\.title, dependencies: \.self).id
}

/// The rules of ``UndoHistory``, written plainly: every commit kept with its step, the state replayed from the start.
struct UndoModel {
  struct Entry {
    let apply: (inout UndoDocState) -> Void
    let step: Int?
  }

  let stepLimit: Int
  var entries: [Entry] = []
  var steps: [Int] = []
  var undone: Set<Int> = []
  var redoStack: [Int] = []
  var nextStep = 1
  var grouping = false {
    didSet { if !grouping { group = nil } }
  }
  var group: Int?

  /// Only the latest `stepLimit` steps can be undone or redone.
  var live: [Int] { Array(steps.suffix(stepLimit)) }
  var canUndo: Bool { live.contains { !undone.contains($0) } }
  var canRedo: Bool { redoStack.contains { live.contains($0) } }

  var state: UndoDocState {
    var state = UndoDocState()
    for entry in entries where !(entry.step.map(undone.contains) ?? false) { entry.apply(&state) }
    return state
  }

  mutating func commit(isStep: Bool, _ apply: @escaping (inout UndoDocState) -> Void) {
    var step: Int?
    if isStep {
      if grouping, let group, live.contains(group), !undone.contains(group) {
        step = group
      } else {
        step = nextStep
        nextStep += 1
        steps.append(step!)
        if grouping { group = step }
      }
      redoStack.removeAll()
    }
    entries.append(Entry(apply: apply, step: step))
    let live = self.live
    redoStack.removeAll { !live.contains($0) }
  }

  mutating func undo() -> Bool {
    guard let step = live.last(where: { !undone.contains($0) }) else { return false }
    undone.insert(step)
    redoStack.append(step)
    return true
  }

  mutating func redo() -> Bool {
    let live = self.live
    redoStack.removeAll { !live.contains($0) }
    guard let step = redoStack.popLast() else { return false }
    undone.remove(step)
    return true
  }
}

@Suite("Undo: histories together, and replays of their commands", .timeLimit(.minutes(1)))
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

@Suite("Undo and recording: used on the wrong store", .timeLimit(.minutes(1)))
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

@Suite("Undo under concurrency", .timeLimit(.minutes(1)))
struct UndoConcurrencyTests {
  /// Tasks typing through two scopes and counting at the root, while others undo and redo through a scope's history
  /// and the store's: every state the store committed is what the recording replays to, commit by commit.
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
            case 2: _ = try? await store.dispatch(UndoCount(amount: 1))
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
