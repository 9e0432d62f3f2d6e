/// Undo and redo for a store, or for one scope of it.
///
/// ```swift
/// let history = UndoHistory<AppState>()                         // every state updater is a step
/// let editor = UndoHistory<AppState>(scope: \.editor)           // the updaters through store.scope(\.editor, ...)
/// let store = Store<AppState, AppDependencies>(
///   initialState: AppState(), interceptors: [history.interceptor, editor.interceptor])
///
/// try await store.dispatch(AddTodo(title: "Milk"))
/// try await history.undo(on: store)                              // the todo is gone
/// try await history.redo(on: store)                              // and back
/// try await editor.undo(on: store.scope(\.editor, dependencies: \.editor))  // a scope's: through its scope
/// ```
///
/// **What an undo does.** Undoing a step is a commit, seen by listeners, streams and observable models like any
/// other; interceptors see it as an ``UndoCommand``. It does not restore a saved state: it replays, from the state
/// before the oldest step the history keeps, every commit since **except** the undone steps' own. Updaters are
/// pure (SPEC 4.5), so this is exact, and it keeps what came from elsewhere:
/// - a commit that came after the undone step (a side effect's result, another feature's change) stays;
/// - an undo in one scope's history leaves other scopes' commits, and the root's, alone;
/// - a side effect still running when its step is undone commits on top of the undone state when it finishes.
///   If that commit is itself a step of this history, it is a new step, and it clears redo; a commit that is not
///   a step (another scope's, or one `isUndoable` declines) never clears redo.
///
/// Redo re-applies the step where it was, among the commits that followed it. A commit that cannot be re-applied
/// (a feature's updater whose element is gone by then) is skipped in the replay.
///
/// A scope's history undoes through its scope (``undo(on:)-(ScopedStore<Slice,D>)``): its command changes only
/// the scope's slice, so histories of disjoint scopes compose. Each command keeps the value it set: replaying a
/// recording, or another history's replay, sets that value again. So histories that overlap (the store's and a
/// scope's) see each other's undos and redos as commits that set a value, and the later one wins.
///
/// **Steps.** By default each state updater the history sees is a step: every updater at the root, or every
/// updater dispatched through the history's scope. `isUndoable` narrows that (for example to leave out selection
/// changes). Several commits become one step between ``beginGroup()`` and ``endGroup()`` (a drag, a burst of
/// typing).
///
/// **Cost and bounds.** The history keeps the updaters (not states) of the commits since its oldest step, up to
/// `commitLimit` of them, and at most `stepLimit` steps: beyond either, the oldest commits are folded into the
/// state it keeps (and their steps can no longer be undone). That state shares its storage with the store's
/// (copy-on-write): the store's next change to a part copies that part once, when the history starts or folds,
/// never per commit; an undo or redo costs one copy of the state plus re-applying the commits kept.
///
/// Put ``interceptor`` in the store's interceptors (after any that change items, so that it sees what the store
/// applies), and give each store its own history.
public final class UndoHistory<S: State>: Sendable {
  /// The most steps kept.
  public let stepLimit: Int
  /// The most commits kept (steps and the commits between them).
  public let commitLimit: Int
  /// The scope whose commits are steps; nil for the whole store.
  public let scope: ScopeID?

  private let isUndoable: @Sendable (any Dispatchable) -> Bool
  /// The store followed.
  private let attached = AttachedStore()
  private let buffer = Locked(UndoBuffer<S>())

  /// Creates a history.
  ///
  /// - Parameters:
  ///   - scope: The scope whose updaters are steps (`scopedStore.id`); nil (the default) for every updater.
  ///   - stepLimit: The most steps kept (at least 1).
  ///   - commitLimit: The most commits kept (at least `stepLimit`).
  ///   - isUndoable: Whether an updater (as dispatched: the feature's own for a scope) is a step.
  public init(
    scope: ScopeID? = nil, stepLimit: Int = 100, commitLimit: Int = 10_000,
    isUndoable: @escaping @Sendable (any Dispatchable) -> Bool = { _ in true }
  ) {
    self.scope = scope
    self.stepLimit = max(1, stepLimit)
    self.commitLimit = max(self.stepLimit, commitLimit)
    self.isUndoable = isUndoable
  }

  /// Creates the history of the scope a store mounts at `keyPath` (`store.scope(keyPath, ...)`), before the store
  /// exists: install it among the store's interceptors.
  ///
  /// - Parameters: As ``init(scope:stepLimit:commitLimit:isUndoable:)``.
  public convenience init<Slice: State>(
    scope keyPath: WritableKeyPath<S, Slice>, stepLimit: Int = 100, commitLimit: Int = 10_000,
    isUndoable: @escaping @Sendable (any Dispatchable) -> Bool = { _ in true }
  ) {
    self.init(scope: ScopeID.field(keyPath), stepLimit: stepLimit, commitLimit: commitLimit, isUndoable: isUndoable)
  }

  /// Creates the history of the scope a store mounts at the optional field `keyPath`.
  ///
  /// - Parameters: As ``init(scope:stepLimit:commitLimit:isUndoable:)``.
  public convenience init<Slice: State>(
    scope keyPath: WritableKeyPath<S, Slice?>, stepLimit: Int = 100, commitLimit: Int = 10_000,
    isUndoable: @escaping @Sendable (any Dispatchable) -> Bool = { _ in true }
  ) {
    self.init(
      scope: ScopeID.optionalField(keyPath), stepLimit: stepLimit, commitLimit: commitLimit, isUndoable: isUndoable)
  }

  /// Creates the history of the scope a store mounts on the element `id` of the identified collection at `keyPath`
  /// (`store.scope(keyPath, id: id, ...)`).
  ///
  /// - Parameters: As ``init(scope:stepLimit:commitLimit:isUndoable:)``, and `id`, the element's id.
  public convenience init<Elements: MutableCollection>(
    scope keyPath: WritableKeyPath<S, Elements>, id: Elements.Element.ID, stepLimit: Int = 100,
    commitLimit: Int = 10_000, isUndoable: @escaping @Sendable (any Dispatchable) -> Bool = { _ in true }
  ) where Elements.Element: Identifiable, Elements.Element.ID: Sendable {
    self.init(
      scope: ScopeID.element(keyPath, id: id), stepLimit: stepLimit, commitLimit: commitLimit,
      isUndoable: isUndoable)
  }

  /// The interceptor that feeds the history: put it in the store's interceptors.
  public var interceptor: StoreInterceptor {
    { [self] context in
      attach(to: context)
      return { next in next }
    }
  }

  /// Whether there is a step to undo.
  public var canUndo: Bool { buffer.withLock { $0.lastDone != nil } }
  /// Whether there is a step to redo.
  public var canRedo: Bool { buffer.withLock { !$0.redo.isEmpty } }

  /// Undoes the latest step not undone, as a commit of an ``UndoCommand`` made when its turn comes: the state
  /// becomes the one replayed without that step.
  ///
  /// - Returns: Whether there was a step to undo (without one, the command's commit leaves the state as it is).
  /// - Throws: ``RecorderError`` if the history does not follow `store`, or is a scope's (which undoes through its
  ///   scope, ``undo(on:)-(ScopedStore<Slice,D>)``); what dispatching throws (an interceptor's error,
  ///   ``StoreError/storeShutDown``).
  @discardableResult
  public nonisolated(nonsending) func undo<D: SideEffectDependencyContainer>(on store: Store<S, D>) async throws
    -> Bool
  {
    try await perform(.undo, on: store)
  }

  /// Redoes the step undone last, as a commit of an ``UndoCommand``.
  ///
  /// - Returns: Whether there was a step to redo.
  /// - Throws: As ``undo(on:)-(Store<S,D>)``.
  @discardableResult
  public nonisolated(nonsending) func redo<D: SideEffectDependencyContainer>(on store: Store<S, D>) async throws
    -> Bool
  {
    try await perform(.redo, on: store)
  }

  /// Undoes the latest step of a scope's history, as a commit of an ``UndoCommand`` dispatched through `scope`:
  /// only the scope's slice changes, to its value in the state replayed without that step.
  ///
  /// - Returns: Whether there was a step to undo.
  /// - Throws: ``RecorderError`` if this is not the history of `scope` on the store it follows; what dispatching
  ///   through the scope throws (``ScopeError`` if the slice is missing).
  @discardableResult
  public nonisolated(nonsending) func undo<Slice: State, D: SideEffectDependencyContainer>(
    on scope: ScopedStore<Slice, D>
  ) async throws -> Bool {
    try await perform(.undo, on: scope)
  }

  /// Redoes the step of a scope's history undone last, through `scope`; see ``undo(on:)-(ScopedStore<Slice,D>)``.
  @discardableResult
  public nonisolated(nonsending) func redo<Slice: State, D: SideEffectDependencyContainer>(
    on scope: ScopedStore<Slice, D>
  ) async throws -> Bool {
    try await perform(.redo, on: scope)
  }

  private nonisolated(nonsending) func perform<D: SideEffectDependencyContainer>(
    _ kind: UndoKind, on store: Store<S, D>
  ) async throws -> Bool {
    let what = kind == .undo ? "UndoHistory.undo" : "UndoHistory.redo"
    try attached.check(store.core, what: what)
    if scope != nil { throw RecorderError.scopeRequired(what) }
    let command = UndoCommand<S>(kind: kind, history: self) { $0 }
    try await store.dispatch(command)
    return command.outcome.isSet
  }

  private nonisolated(nonsending) func perform<Slice: State, D: SideEffectDependencyContainer>(
    _ kind: UndoKind, on scoped: ScopedStore<Slice, D>
  ) async throws -> Bool {
    let what = kind == .undo ? "UndoHistory.undo" : "UndoHistory.redo"
    try attached.check(scoped.core.rootIdentity, what: what)
    guard scoped.id == scope else { throw RecorderError.anotherStore(what) }
    let core = scoped.core
    let command = UndoCommand<Slice>(kind: kind, history: self) { core.slice(of: $0) }
    try await scoped.dispatch(command)
    return command.outcome.isSet
  }

  /// Makes the undoable commits from now until ``endGroup()`` one step (groups nest: the outermost decides).
  public func beginGroup() {
    buffer.withLock { $0.groupDepth += 1 }
  }

  /// Ends the group ``beginGroup()`` began.
  public func endGroup() {
    buffer.withLock { buffer in
      buffer.groupDepth = max(0, buffer.groupDepth - 1)
      if buffer.groupDepth == 0 { buffer.openGroup = nil }
    }
  }

  /// Forgets every step: nothing can be undone or redone until the next one.
  public func clear() {
    let dropped = buffer.withLock { buffer -> UndoBuffer<S> in
      var fresh = UndoBuffer<S>()
      fresh.attached = buffer.attached
      fresh.base = buffer.replayed()
      fresh.nextStep = buffer.nextStep
      swap(&fresh, &buffer)
      return fresh
    }
    withExtendedLifetime(dropped) {}
  }

  // MARK: - Feeding

  private func attach(to context: any AnySideEffectContext) {
    guard let target = context as? any RecorderAttachable else { return }
    guard let initial = context.getAnyState() as? S else {
      target.runtimeWarning(
        "An UndoHistory<\(String(reflecting: S.self))> was given to a store of another state type; it does nothing.")
      return
    }
    let isFirstStore = buffer.withLock { buffer -> Bool in
      guard !buffer.attached else { return false }
      buffer.attached = true
      buffer.base = initial
      return true
    }
    guard isFirstStore else {
      target.runtimeWarning("An UndoHistory was given to a second store; it follows only the first one.")
      return
    }
    attached.set(target.attach(CommitHook<S>(needsBefore: false) { [self] item, _, _ in record(item) }))
  }

  /// Takes in a commit (in commit order, while it holds the store's turn).
  private func record(_ item: any Dispatchable) {
    // Time travel goes away from live and comes back to it: no part of the history.
    guard let updater = item as? any AnyStateUpdater, !(item is TimeTravelCommand<S>) else { return }
    // This history's own undos and redos are its bookkeeping (replays skip them); another history's are commits
    // like any other (replayed as the state they set).
    let base = (item as? any ScopedDispatchable)?.base ?? item
    if let command = base as? any HistoryCommand, command.historyIdentity == ObjectIdentifier(self) {
      // Kept as a marker, not the command: the command keeps the value it set, and a history of many undos
      // would pin as many versions of the state.
      return append(OwnCommandMarker(), isStep: false, isCommand: true)
    }
    let isStep: Bool
    if base is any HistoryCommand {
      isStep = false
    } else if let scope {
      guard let scoped = item as? any ScopedDispatchable, scoped.scope == scope else {
        return append(updater, isStep: false, isCommand: false)
      }
      isStep = isUndoable(scoped.base)
    } else {
      isStep = isUndoable(base)
    }
    append(updater, isStep: isStep, isCommand: false)
  }

  private func append(_ updater: any AnyStateUpdater, isStep: Bool, isCommand: Bool) {
    let (stepLimit, commitLimit) = (self.stepLimit, self.commitLimit)
    let dropped = buffer.withLock { buffer in
      buffer.append(updater, isStep: isStep, isCommand: isCommand)
      return buffer.fold(stepLimit: stepLimit, commitLimit: commitLimit)
    }
    // Folded updaters are released outside the lock.
    withExtendedLifetime(dropped) {}
  }

  // MARK: - Undoing (inside the command's commit)

  /// The state after undoing or redoing, or nil if there is nothing to do.
  func apply(_ kind: UndoKind) -> S? {
    buffer.withLock { buffer in
      switch kind {
      case .undo:
        guard let step = buffer.lastDone else { return nil }
        buffer.undone.insert(step)
        buffer.redo.append(step)
      case .redo:
        guard let step = buffer.redo.popLast() else { return nil }
        buffer.undone.remove(step)
      }
      return buffer.replayed()
    }
  }
}

/// An undo or a redo of an ``UndoHistory``, as the store's interceptors and recorder see it: a state updater that
/// replaces the state (a scope's history: its slice, dispatched through the scope) with the one the history
/// computes when the command's turn comes.
///
/// The value it sets is kept in the command, so that replaying a recording that contains it (or another history's
/// replay) sets the same value again, without touching the history. So a recording (or another history) that keeps
/// many undos keeps as many versions of the state (or of the scope's slice), sharing their unchanged parts; the
/// history that made the command keeps only a marker.
public struct UndoCommand<T: State>: StateUpdater, HistoryCommand {
  /// Whether it undoes or redoes.
  public let kind: UndoKind
  let historyIdentity: ObjectIdentifier
  /// Computes the new value when the command first commits: the history's replayed state, read at the place the
  /// command applies to; nil if there is nothing to undo or redo.
  private let compute: @Sendable (UndoKind) -> T?
  /// The value set by the first commit, nil if it changed nothing.
  private let result = Locked<T??>(nil)
  /// Set by the commit if there was a step to undo or redo.
  let outcome = AtomicFlag(false)

  init<S: State>(kind: UndoKind, history: UndoHistory<S>, read: @escaping @Sendable (S) -> T?) {
    self.kind = kind
    historyIdentity = ObjectIdentifier(history)
    compute = { kind in history.apply(kind).flatMap(read) }
  }

  /// Replaces the state with the history's, if there is a step to undo or redo (or with the value this command
  /// set when it first committed).
  public func updateState(_ state: inout T) {
    let value = result.withLock { result -> T? in
      if let known = result { return known }
      let computed = compute(kind)
      result = .some(computed)
      return computed
    }
    guard let value else { return }
    state = value
    outcome.set(true)
  }
}

/// Where a history's own undo or redo stands among its entries: its replays skip it (its effect is the history's
/// bookkeeping), so nothing of the command needs keeping.
struct OwnCommandMarker: AnyStateUpdater {
  func updatedState(currentState: any State) throws -> any State { currentState }
}

/// Which way an ``UndoCommand`` goes.
public enum UndoKind: Sendable, Hashable {
  /// Undo the latest step.
  case undo
  /// Redo the step undone last.
  case redo
}

/// An undo or redo of some history (whatever the state it applies to).
protocol HistoryCommand {
  var historyIdentity: ObjectIdentifier { get }
}

/// What an ``UndoHistory`` holds, under its lock.
struct UndoBuffer<S: State> {
  struct Entry {
    let updater: any AnyStateUpdater
    /// The step it belongs to; nil for a commit that is not a step.
    let step: Int?
    /// An undo or redo: its effect is the history's own bookkeeping, so replays skip it.
    let isCommand: Bool
  }

  var attached = false
  /// The state before the oldest entry kept (never the store's current state: keeping that would make the store
  /// copy what it changes next).
  var base: S?
  var entries = RingBuffer<Entry>()
  /// The number of entries ever folded away: entry `n` (counting from the first commit) is `entries[n - folded]`.
  var folded = 0
  /// The steps kept, oldest first, with the numbers of their first and last entries.
  var steps: [(id: Int, first: Int, last: Int)] = []
  var undone: Set<Int> = []
  /// Steps undone by undo, the last one undone last; cleared by a new step.
  var redo: [Int] = []
  var nextStep = 1
  var groupDepth = 0
  var openGroup: Int?

  /// The latest step that is not undone.
  var lastDone: Int? { steps.last { !undone.contains($0.id) }?.id }

  mutating func append(_ updater: any AnyStateUpdater, isStep: Bool, isCommand: Bool) {
    let number = folded + entries.count
    var step: Int?
    if isStep {
      // A group goes on while it is the latest step and not undone; after an undo, the next commit starts another.
      if groupDepth > 0, let group = openGroup, steps.last?.id == group, !undone.contains(group) {
        step = group
        steps[steps.count - 1].last = number
      } else {
        step = nextStep
        nextStep += 1
        steps.append((step!, number, number))
        if groupDepth > 0 { openGroup = step }
      }
      // A new step after an undo: what was undone can no longer be redone (it stays undone).
      redo.removeAll()
    }
    entries.append(Entry(updater: updater, step: step, isCommand: isCommand))
  }

  /// Folds the oldest entries into `base` while more than `stepLimit` steps or `commitLimit` commits are kept (a
  /// step is folded whole); returns them, to release after unlocking.
  mutating func fold(stepLimit: Int, commitLimit: Int) -> [Entry] {
    guard entries.count > commitLimit || steps.count > stepLimit else { return [] }
    // Everything before entry number `end` goes.
    var end = folded + max(0, entries.count - commitLimit)
    if steps.count > stepLimit { end = max(end, steps[steps.count - stepLimit - 1].last + 1) }
    // A step that begins before `end` goes whole (and the steps that begin before its end).
    var dropped = 0
    while dropped < steps.count, steps[dropped].first < end {
      end = max(end, steps[dropped].last + 1)
      dropped += 1
    }
    var removed: [Entry] = []
    removed.reserveCapacity(end - folded)
    while folded < end, let entry = entries.removeFirst() {
      removed.append(entry)
      folded += 1
    }
    if var state = base {
      base = nil  // `state` is now the only reference: folding mutates it in place.
      for entry in removed where !entry.isCommand && !(entry.step.map(undone.contains) ?? false) {
        try? StoreCore<S, EmptySideEffectDependencyContainer>.applyErased(entry.updater, to: &state)
      }
      base = state
    }
    for step in steps.prefix(dropped) {
      undone.remove(step.id)
      redo.removeAll { $0 == step.id }
    }
    steps.removeFirst(dropped)
    if let group = openGroup, !steps.contains(where: { $0.id == group }) { openGroup = nil }
    return removed
  }

  /// The state replayed from `base` over every entry except commands and undone steps.
  func replayed() -> S? {
    guard var state = base else { return nil }
    for offset in 0..<entries.count {
      let entry = entries[offset]
      guard !entry.isCommand, !(entry.step.map(undone.contains) ?? false) else { continue }
      // A commit that cannot be re-applied now (its element is gone) is skipped.
      try? StoreCore<S, EmptySideEffectDependencyContainer>.applyErased(entry.updater, to: &state)
    }
    return state
  }
}
