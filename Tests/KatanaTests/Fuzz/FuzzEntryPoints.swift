// The manifest of the differential fuzzer (SPEC 8, STYLE 13): every public way to dispatch, send, commit, observe,
// replay, undo or travel in module Katana, as a case whose raw value is the key `.ci/check-fuzzer-entry-points` derives
// from the symbol graph. That check fails CI when a public way in has no case here (or a case names no public symbol);
// the differential fuzzer's test, checking `FuzzCoverage` as below, fails when a case was never exercised. Together: a
// new capability cannot arrive without its operation.
//
// Wiring: an operation that calls an entry point notes it, `coverage.note(.storeAnySend)`, next to the call (one
// relaxed atomic load per call once noted, no lock: it adds no ordering between the fuzzer's threads, so it hides no
// race from the thread sanitizer). The differential fuzzer's test hands one `FuzzCoverage` to all its runs and ends
// with
//
//     let missing = coverage.unexercised()
//     #expect(missing.isEmpty, "never exercised: \(missing.map { "\($0) = \($0.rawValue)" })")
//
// `FuzzCoverage.shared` is a process-wide instance for code that has no run at hand.
//
// Each case's comment names the operation that exercises it. Keys are `Owner.name(label: Type, ...)` (overloads read
// apart by their parameter types), `Owner.property`, with ` where ...` for constraints of the declaring extension;
// `.ci/check-fuzzer-entry-points --list` prints every selected key and whether it is here or excluded (and why).
import CKatana

/// Every public way into module Katana that the differential fuzzer must exercise.
enum FuzzEntryPoint: String, CaseIterable, Sendable {
  // MARK: - Store: start-up

  /// A store that starts asynchronously, whose `dependenciesInitializer` keeps the `dispatch` function (operation to
  /// add: side effects dispatch through the container's function).
  case storeInitDependenciesInitializer =
    "Store.init(interceptors: [StoreInterceptor], stateInitializer: StateInitializer, dependenciesInitializer: (AnyDispatch, () -> S) -> D, configuration: Configuration)"
  /// The store of `ScheduleFuzz`, and `OracleRun`'s store whose state initializer waits for a gate.
  case storeInitStateInitializer =
    "Store.init(interceptors: [StoreInterceptor], stateInitializer: StateInitializer, configuration: Configuration)"
  /// `OracleRun`'s store made with `Store(initialState:)`, ready at once.
  case storeInitInitialState =
    "Store.init(initialState: S, interceptors: [StoreInterceptor], configuration: Configuration)"
  /// A store ready at once with a container built beforehand (operation to add: a run made with it).
  case storeInitInitialStateDependencies =
    "Store.init(initialState: S, dependencies: D, interceptors: [StoreInterceptor], configuration: Configuration)"
  /// `ScheduleFuzz` reads it as a plain operation; `OracleWorld.position()`.
  case storeIsReady = "Store.isReady"
  /// `OracleRun`: before the mid-run shutdown and when settling.
  case storeWaitUntilReady = "Store.waitUntilReady()"
  /// `ScheduleFuzz` and `OracleRun`: a shutdown at a random step, racing every other operation.
  case storeShutdown = "Store.shutdown()"

  // MARK: - Store: dispatch and send

  /// `OracleWorld.awaitedDispatch` at the root; `ScheduleFuzz`'s awaited `Apply`, cancelled or not.
  case storeDispatchUpdater = "Store.dispatch(_: StateUpdater)"
  /// `OracleWorld.dispatchReturning` at the root (`OracleReturningRootBump`), its value checked against the commit log.
  case storeDispatchReturningUpdater = "Store.dispatch(_: ReturningStateUpdater)"
  /// `OracleWorld.sideEffect(awaited: true)` at the root; `ScheduleFuzz`'s `Work` and `CancelRuns`.
  case storeDispatchSideEffect = "Store.dispatch(_: SideEffect)"
  /// An awaited returning side effect at the root (operation to add).
  case storeDispatchReturning = "Store.dispatch(_: ReturningSideEffect)"
  /// An erased awaited dispatch at the root, of updaters and side effects (operation to add).
  case storeAnyDispatch = "Store.anyDispatch(_: any Dispatchable)"
  /// `OracleWorld.sendUpdater` at the root; `ScheduleFuzz`'s sent `Apply` from threads.
  case storeSendUpdater = "Store.send(_: StateUpdater)"
  /// `OracleWorld.sendSideEffect` and `sideEffect(awaited: false)` at the root; `ScheduleFuzz`'s sent `Work`.
  case storeSendSideEffect = "Store.send(_: SideEffect)"
  /// A sent returning side effect at the root, its handle's value checked (operation to add).
  case storeSendReturning = "Store.send(_: ReturningSideEffect)"
  /// An erased send at the root, its handle cancelled or awaited (operation to add).
  case storeAnySend = "Store.anySend(_: any Dispatchable)"
  /// `ScheduleFuzz` and `OracleRun`'s task and thread actors: cancel by id, racing runs under that id.
  case storeCancelID = "Store.cancel(id: some Hashable & Sendable)"

  // MARK: - Store: observation

  /// `OracleRun`'s commit log and `OracleWorld.addListener(slice: nil)`; `ScheduleFuzz`'s checks and thread listeners.
  case storeAddListener = "Store.addListener(_: StoreListener<S>)"
  /// An erased listener at the root (operation to add).
  case storeAddAnyListener = "Store.addAnyListener(_: AnyStoreListener)"
  /// `OracleWorld.subscribeStream` at the root (`.rootStates`).
  case storeStates = "Store.states(buffering: StreamBuffering)"
  /// `OracleWorld.subscribeStream` at the root (`.rootChanges`).
  case storeChanges = "Store.changes(buffering: StreamBuffering)"
  /// `OracleWorld.subscribeStream` at the root (`.rootValues`); `ScheduleFuzz.consumeStream`.
  case storeValues = "Store.values(of: (S) -> Value, buffering: StreamBuffering)"
  /// `OracleRun`'s final state and the thread actors' reads; `ScheduleFuzz`'s plain reads.
  case storeState = "Store.state"

  // MARK: - Store: mounting features

  /// `OracleWorld.init`: `\.feature`, `\.outer`, `\.emptyA`, `\.emptyB`.
  case storeScopeField = "Store.scope(_: WritableKeyPath<S, Child>, dependencies: KeyPath<D, ChildDependencies>)"
  /// `OracleWorld.init`: the optional `\.child`.
  case storeScopeOptional = "Store.scope(_: WritableKeyPath<S, Child?>, dependencies: KeyPath<D, ChildDependencies>)"
  /// `OracleWorld.init`: each element of `\.items`.
  case storeScopeElement =
    "Store.scope(_: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, ChildDependencies>)"
  /// A feature mounted at a field with an output handler that dispatches (operation to add, with `emit`).
  case storeScopeFieldOutputs =
    "Store.scope(_: WritableKeyPath<S, Child>, dependencies: KeyPath<D, ChildDependencies>, outputs: FeatureOutputHandler<Output, S, D>)"
  /// The optional child mounted with an output handler (operation to add, with `emit`).
  case storeScopeOptionalOutputs =
    "Store.scope(_: WritableKeyPath<S, Child?>, dependencies: KeyPath<D, ChildDependencies>, outputs: FeatureOutputHandler<Output, S, D>)"
  /// An element mounted with an output handler (operation to add, with `emit`).
  case storeScopeElementOutputs =
    "Store.scope(_: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, ChildDependencies>, outputs: FeatureOutputHandler<Output, S, D>)"

  // MARK: - ScopedStore: dispatch and send

  /// `OracleWorld.awaitedDispatch` through a scope (`OracleBumpCell`, `OracleRename`).
  case scopeDispatchUpdater = "ScopedStore.dispatch(_: StateUpdater)"
  /// `OracleWorld.dispatchReturning` through a scope (`OracleReturningBumpCell`), its value checked against the log.
  case scopeDispatchReturningUpdater = "ScopedStore.dispatch(_: ReturningStateUpdater)"
  /// `OracleWorld.sideEffect(awaited: true)` through a scope.
  case scopeDispatchSideEffect = "ScopedStore.dispatch(_: SideEffect)"
  /// An awaited returning side effect through a scope (operation to add).
  case scopeDispatchReturning = "ScopedStore.dispatch(_: ReturningSideEffect)"
  /// An erased awaited dispatch through a scope (operation to add).
  case scopeAnyDispatch = "ScopedStore.anyDispatch(_: any Dispatchable)"
  /// `OracleWorld.sendUpdater` through a scope.
  case scopeSendUpdater = "ScopedStore.send(_: StateUpdater)"
  /// `OracleWorld.sendSideEffect` and `sideEffect(awaited: false)` through a scope.
  case scopeSendSideEffect = "ScopedStore.send(_: SideEffect)"
  /// A sent returning side effect through a scope (operation to add).
  case scopeSendReturning = "ScopedStore.send(_: ReturningSideEffect)"
  /// An erased send through a scope, its handle cancelled before its turn or awaited (operation to add; bugs 1, 2).
  case scopeAnySend = "ScopedStore.anySend(_: any Dispatchable)"
  /// `OracleWorld.runCheck`: `feature.cancel(id:)` and `emptyB.cancel(id:)` after a run sent under that id.
  case scopeCancelID = "ScopedStore.cancel(id: some Hashable & Sendable)"

  // MARK: - ScopedStore: observation

  /// `OracleWorld.addListener(slice:)` with a slice.
  case scopeAddListener = "ScopedStore.addListener(_: StoreListener<S>)"
  /// An erased listener of a slice (operation to add).
  case scopeAddAnyListener = "ScopedStore.addAnyListener(_: AnyStoreListener) where S: State"
  /// `OracleWorld.subscribeStream` through a scope (`.scopeStates`).
  case scopeStates = "ScopedStore.states(buffering: StreamBuffering)"
  /// `OracleWorld.subscribeStream` through a scope (`.scopeChanges`).
  case scopeChanges = "ScopedStore.changes(buffering: StreamBuffering)"
  /// `OracleWorld.subscribeStream` and `subscribeRacingProjection` through a scope (`.scopeValues`).
  case scopeValues = "ScopedStore.values(of: (S) -> Value, buffering: StreamBuffering)"
  /// A scope's slice read as `S()` when missing (operation to add).
  case scopeState = "ScopedStore.state where S: State"
  /// `OracleRun`'s thread actors read an element's slice.
  case scopeStateIfPresent = "ScopedStore.stateIfPresent"

  // MARK: - ScopedStore: mounting features

  /// `OracleWorld.init`: `\.outer` then `\.inner`.
  case scopeScopeField =
    "ScopedStore.scope(_: WritableKeyPath<S, Child>, dependencies: KeyPath<D, ChildDependencies>)"
  /// An optional child mounted through a scope (operation to add).
  case scopeScopeOptional =
    "ScopedStore.scope(_: WritableKeyPath<S, Child?>, dependencies: KeyPath<D, ChildDependencies>)"
  /// An element mounted through a scope (operation to add).
  case scopeScopeElement =
    "ScopedStore.scope(_: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, ChildDependencies>)"
  /// A nested feature with an output handler that dispatches with its parent's context (operation to add).
  case scopeScopeFieldOutputs =
    "ScopedStore.scope(_: WritableKeyPath<S, Child>, dependencies: KeyPath<D, ChildDependencies>, outputs: FeatureOutputHandler<Output, S, D>)"
  /// A nested optional child with an output handler (operation to add).
  case scopeScopeOptionalOutputs =
    "ScopedStore.scope(_: WritableKeyPath<S, Child?>, dependencies: KeyPath<D, ChildDependencies>, outputs: FeatureOutputHandler<Output, S, D>)"
  /// A nested element with an output handler (operation to add).
  case scopeScopeElementOutputs =
    "ScopedStore.scope(_: WritableKeyPath<S, Elements>, id: Elements.Element.ID, dependencies: KeyPath<D, ChildDependencies>, outputs: FeatureOutputHandler<Output, S, D>)"

  // MARK: - Side-effect contexts

  /// `OracleWork` and `OracleCellWork` dispatch nested updaters; `ScheduleFuzz`'s `Work`.
  case contextDispatchUpdater = "SideEffectContext.dispatch(_: StateUpdater)"
  /// `OracleWay.returningUpdater`, at the root and in a feature's context, its value checked against the commit log.
  case contextDispatchReturningUpdater = "SideEffectContext.dispatch(_: ReturningStateUpdater)"
  /// A side effect that awaits another through its context (operation to add).
  case contextDispatchSideEffect = "SideEffectContext.dispatch(_: SideEffect)"
  /// A side effect that awaits a returning side effect through its context (operation to add).
  case contextDispatchReturning = "SideEffectContext.dispatch(_: ReturningSideEffect)"
  /// A side effect's erased awaited dispatch, at the root and in a feature's context (operation to add).
  case contextAnyDispatch = "SideEffectContext.anyDispatch(_: any Dispatchable)"
  /// A side effect that sends an updater through its context (operation to add).
  case contextSendUpdater = "SideEffectContext.send(_: StateUpdater)"
  /// A side effect that sends a side effect through its context (operation to add).
  case contextSendSideEffect = "SideEffectContext.send(_: SideEffect)"
  /// A side effect that sends a returning side effect through its context (operation to add).
  case contextSendReturning = "SideEffectContext.send(_: ReturningSideEffect)"
  /// A side effect's erased send, in a feature's context (operation to add).
  case contextAnySend = "SideEffectContext.anySend(_: any Dispatchable)"
  /// A feature's side effect that emits an output whose handler dispatches (operation to add).
  case contextEmit = "SideEffectContext.emit(_: FeatureOutput)"
  /// A side effect that reads its state after its own awaited dispatch (operation to add).
  case contextGetState = "SideEffectContext.getState() where S: State"
  /// A feature's side effect that reads its slice, present or missing (operation to add).
  case contextGetStateIfPresent = "SideEffectContext.getStateIfPresent()"
  /// A side effect that reads its state erased (operation to add).
  case contextGetAnyState = "SideEffectContext.getAnyState()"

  // MARK: - Erased contexts (interceptors and returning side effects)

  /// An interceptor or a returning side effect that dispatches through `any AnySideEffectContext` (operation to add).
  case anyContextAnyDispatch = "AnySideEffectContext.anyDispatch(_: any Dispatchable)"
  /// An interceptor that sends through its erased context, while its updater holds the turn (operation to add).
  case anyContextAnySend = "AnySideEffectContext.anySend(_: any Dispatchable)"
  /// A returning side effect that reads the state through its erased context (operation to add).
  case anyContextGetAnyState = "AnySideEffectContext.getAnyState()"
  /// A returning side effect dispatched through an erased context (operation to add).
  case anyContextDispatchReturning = "AnySideEffectContext.dispatch(_: ReturningSideEffect)"
  /// `OracleWork`, `OracleMarkedRun` and `ScheduleFuzz`'s `Work`: work under an id, with or without `cancelInFlight`.
  case anyContextRun =
    "AnySideEffectContext.run(id: some Hashable & Sendable, cancelInFlight: Bool, operation: () async throws -> T)"
  /// `ScheduleFuzz`'s `CancelRuns`: cancel by id from inside a side effect.
  case anyContextCancelID = "AnySideEffectContext.cancel(id: some Hashable & Sendable)"

  // MARK: - Handles

  /// A sent item's outcome awaited as a throwing value (operation to add).
  case handleValue = "DispatchHandle.value"
  /// `OracleWorld`'s sent items and runs, `ScheduleFuzz`'s handles: awaited at the end of each run.
  case handleResult = "DispatchHandle.result"
  /// `ScheduleFuzz`'s threads cancel sent updaters and side effects, applied or not.
  case handleCancel = "DispatchHandle.cancel()"

  // MARK: - Dependency containers

  /// A container that keeps the store's `dispatch` function, which side effects then call (operation to add).
  case containerInitDispatch = "SideEffectDependencyContainer.init(dispatch: AnyDispatch, getState: GetState)"

  // MARK: - Observable models

  /// `OracleWorld.makeObservableStore(slice: nil)`.
  case observableInitStore = "ObservableStore.init(store: Store<S, D>) where S: State"
  /// `OracleWorld.makeObservableStore(slice:)` with a slice.
  case observableInitScope = "ObservableStore.init(scope: ScopedStore<S, D>) where S: State"
  /// `OracleWorld.makeObservableStore(slice:)`, a fifth of the models of a slice (in an optional context).
  case observableInitScopeIfPresent = "ObservableStore.init(scope: ScopedStore<S, D>)"
  /// `OracleWorld.makeObservableStore`: what the model ends showing.
  case observableState = "ObservableStore.state"
  /// A model read by dynamic member (operation to add).
  case observableDynamicMember = "ObservableStore.subscript(dynamicMember: KeyPath<S, T>)"
  /// A model read by key path (operation to add).
  case observableSubscript = "ObservableStore.subscript(_: KeyPath<S, T>)"
  /// A model that sends an updater (operation to add).
  case observableSendUpdater = "ObservableStore.send(_: StateUpdater)"
  /// A model that sends a side effect (operation to add).
  case observableSendSideEffect = "ObservableStore.send(_: SideEffect)"
  /// A model that sends a returning side effect (operation to add).
  case observableSendReturning = "ObservableStore.send(_: ReturningSideEffect)"
  /// A binding whose setter sends an updater (operation to add).
  case observableFieldBindingUpdater = "ObservableStore.fieldBinding(_: KeyPath<S, T>, send: (T) -> U)"
  /// A binding whose setter sends a side effect (operation to add).
  case observableFieldBindingSideEffect = "ObservableStore.fieldBinding(_: KeyPath<S, T>, send: (T) -> E)"
  /// A binding read (operation to add).
  case fieldBindingGet = "StoreFieldBinding.get()"
  /// A binding set, which sends (operation to add).
  case fieldBindingSet = "StoreFieldBinding.set(_: Value)"

  // MARK: - Interceptors and dispatch observers

  /// An `ObserverInterceptor` whose entries send on start, on state change, on dispatch and on a notification
  /// (operation to add).
  case observerInterceptorObserve =
    "ObserverInterceptor.observe(_: [ObserverType], notificationCenter: NotificationCenter)"
  /// A dispatch observer whose `willHandle` and `didHandle` are checked: one each per item (operation to add).
  case dispatchObserverInit =
    "DispatchObserver.init(willHandle: ((any Dispatchable) -> Void)?, didHandle: ((any Dispatchable, Outcome) -> Void)?)"
  /// A measuring dispatch observer (operation to add).
  case dispatchObserverMeasuring = "DispatchObserver.measuring(_: (DispatchInstrumentation.Event) -> Void)"
  /// The world's interceptor in the faster form, in half the runs with interceptors.
  case dispatchInterceptorIntercept =
    "DispatchInterceptor.intercept(_: any Dispatchable, next: DispatchInterceptorNext)"
  /// Its `next`: handed on, twice, from a child task, from a task it does not await.
  case dispatchInterceptorNextCall = "DispatchInterceptorNext.callAsFunction(_: any Dispatchable)"

  // MARK: - Recorder and time travel

  /// `OracleRun` on the plain path: the recorder, last among the interceptors.
  case recorderInterceptor = "StoreRecorder.interceptor"
  /// `OracleRun`: the recorder attached to the store it made (in the runs where it is not an interceptor).
  case recorderAttach = "StoreRecorder.attach(to: Store<S, D>)"
  /// `OracleWorld.followOp`: what a follower reads racing commits, and at the end, against the recording.
  case recorderCommitsAfter = "StoreRecorder.commits(after: Int)"
  /// `OracleWorld.followOp`: the side effects read racing their starts and ends.
  case recorderEffectsChanged = "StoreRecorder.effects(changedSince: Int)"
  /// `OracleRun.checkReplay`: the recording of the whole run.
  case recorderRecording = "StoreRecorder.recording()"
  /// A drain racing dispatches; the drained recordings chain and replay to the commit log (operation to add).
  case recorderDrain = "StoreRecorder.drain(_: Store<S, D>)"
  /// A reset racing commits (operation to add).
  case recorderReset = "StoreRecorder.reset()"
  /// Read around `travel` and `returnToLive` (operation to add).
  case recorderIsAwayFromLive = "StoreRecorder.isAwayFromLive"
  /// A travel racing dispatches and `returnToLive` (operation to add; bugs 4, 5, 6).
  case recorderTravel = "StoreRecorder.travel(_: Store<S, D>, to: Int)"
  /// A return to live racing a travel and dispatches (operation to add; bug 6).
  case recorderReturnToLive = "StoreRecorder.returnToLive(_: Store<S, D>)"

  // MARK: - Recordings and replay

  /// `OracleRun.checkReplay`: the recording replays to the commit log.
  case recordingReplayedStates = "Recording.replayedStates() where S: Equatable"
  /// The recording's final state, checked against the store's (operation to add).
  case recordingReplayedState = "Recording.replayedState() where S: Equatable"
  /// The replay with a comparison of the caller's (operation to add).
  case recordingReplayedStatesEqual = "Recording.replayedStates(equal: ((S, S) -> Bool)?)"
  /// The replayed final state with a comparison of the caller's (operation to add).
  case recordingReplayedStateEqual = "Recording.replayedState(equal: ((S, S) -> Bool)?)"
  /// `OracleRun.checkRecordings`: the state after each commit of a recording (and the one before its first), from
  /// the nearest checkpoint, against the commit log; nil for numbers the recording does not keep.
  case recordingReplayedStateAfter = "Recording.replayedState(after: Int)"
  /// A replay into a live store, racing dispatches and time travel (operation to add; bug 4).
  case recordingReplayInto = "Recording.replay(into: Store<S, D>, throughInterceptors: Bool)"
  /// A replay into a fresh store, checked from the recording's initial state (operation to add).
  case recordingReplayIntoChecked = "Recording.replay(into: Store<S, D>, throughInterceptors: Bool) where S: Equatable"

  // MARK: - Undo

  /// A history among the interceptors, of the store or of a scope (operation to add).
  case undoInit =
    "UndoHistory.init(scope: ScopeID?, stepLimit: Int, commitLimit: Int, isUndoable: (any Dispatchable) -> Bool)"
  /// The history's interceptor installed in a fuzzed store (operation to add).
  case undoInterceptor = "UndoHistory.interceptor"
  /// `OracleRun`: the histories attached to the store it made (in half the runs with histories).
  case undoAttach = "UndoHistory.attach(to: Store<S, D>)"
  /// Read against the model's steps (operation to add).
  case undoCanUndo = "UndoHistory.canUndo"
  /// Read against the model's steps (operation to add).
  case undoCanRedo = "UndoHistory.canRedo"
  /// Undo on the store, racing dispatches (operation to add; bug 7).
  case undoOnStore = "UndoHistory.undo(on: Store<S, D>)"
  /// Redo on the store (operation to add; bug 7).
  case redoOnStore = "UndoHistory.redo(on: Store<S, D>)"
  /// Undo through a scope (operation to add).
  case undoOnScope = "UndoHistory.undo(on: ScopedStore<Slice, D>)"
  /// Redo through a scope (operation to add).
  case redoOnScope = "UndoHistory.redo(on: ScopedStore<Slice, D>)"
  /// A group opened around several commits (operation to add).
  case undoBeginGroup = "UndoHistory.beginGroup()"
  /// A group closed (operation to add).
  case undoEndGroup = "UndoHistory.endGroup()"
  /// The history cleared while commits go on (operation to add).
  case undoClear = "UndoHistory.clear()"
}

/// Which manifest entries the fuzzer exercised: one flag per case, set at the first note and only read after.
///
/// A note is a relaxed atomic load (and, the first time, a relaxed store): no lock and no acquire or release, so
/// noting adds no happens-before edge between the fuzzer's tasks and threads that could hide a race from the thread
/// sanitizer. Read the result once the operations have returned (awaiting them orders their notes before the read).
final class FuzzCoverage: @unchecked Sendable {  // Sendable: the flags are only accessed atomically.
  /// A process-wide record, for operations that have no run's record at hand.
  static let shared = FuzzCoverage()

  /// Each case's position in `allCases`, and its flag there.
  private static let positions: [FuzzEntryPoint: Int] = Dictionary(
    uniqueKeysWithValues: FuzzEntryPoint.allCases.enumerated().map { ($0.element, $0.offset) })
  private let flags: UnsafeMutablePointer<UInt>

  init() {
    flags = .allocate(capacity: FuzzEntryPoint.allCases.count)
    flags.initialize(repeating: 0, count: FuzzEntryPoint.allCases.count)
  }

  deinit {
    flags.deallocate()
  }

  /// Records that an operation exercised `entry`.
  func note(_ entry: FuzzEntryPoint) {
    let flag = flags + Self.positions[entry]!
    if ckatana_load_relaxed(flag) == 0 { ckatana_store_relaxed(flag, 1) }
  }

  /// Records `entry` in ``shared``.
  static func note(_ entry: FuzzEntryPoint) {
    shared.note(entry)
  }

  /// Whether an operation exercised `entry`.
  func exercised(_ entry: FuzzEntryPoint) -> Bool {
    ckatana_load_relaxed(flags + Self.positions[entry]!) != 0
  }

  /// The cases of `entries` that no operation exercised, in manifest order: what a fuzzer run that must cover the
  /// manifest reports as its failure.
  func unexercised(of entries: [FuzzEntryPoint] = FuzzEntryPoint.allCases) -> [FuzzEntryPoint] {
    entries.filter { !exercised($0) }
  }
}
