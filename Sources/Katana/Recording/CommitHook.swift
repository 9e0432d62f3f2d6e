/// How a store hands each commit to an ``UndoHistory`` (or a test's tap): whichever path made it, the one commit
/// transition (``CoreState/commit(_:touching:delivering:_:)``) calls the hooks, in the order they were attached, in
/// the commit's own critical section, under the store's lock, as it does the recorders' logs. What a hook lets go
/// (user values: updaters, states) it returns, and the transition hands it to its caller to release after unlocking.
/// Moves in time are handed to no hook but a test's tap.
@usableFromInline
final class CommitHook<S: FeatureState>: Sendable {
  /// Takes in a commit, under the store's lock: the item, the state after it, and the commit's inverse and the item
  /// itself, typed (if ``wantsInverse`` and the item is an ``InvertibleStateUpdater`` of the whole state). Returns
  /// what it lets go, for the caller to release after unlocking.
  ///
  /// The state is the store's own, handed `inout` so that it is read where it lies (a copy retained and released
  /// its storage on every commit): a hook reads it and never changes it.
  @usableFromInline let record:
    @Sendable (_ item: any Dispatchable, _ after: inout S, _ inverted: InvertedCommit?) -> UndoLetGo
  /// Whether the hook is also handed the moves in time (``TimeTravelCommand``): only a test's tap, which labels
  /// every commit of a store; undo histories leave them out of the session.
  @usableFromInline let seesMoves: Bool
  /// Whether the hook wants the inverse of an ``InvertibleStateUpdater``'s commit (the store's undo history): the
  /// commit transition then applies such an item through its inverting `updateState(_:)` and hands the inverse on.
  @usableFromInline let wantsInverse: Bool
  /// Handed the state the hook starts from, under the store's lock: when it is attached to a ready store, or when
  /// the store it was attached to while starting becomes ready (an undo history attached with
  /// ``UndoHistory/attach(to:)``). Nil: the hook needs none.
  let start: (@Sendable (S) -> Void)?

  init(
    seesMoves: Bool = false, wantsInverse: Bool = false, start: (@Sendable (S) -> Void)? = nil,
    record: @escaping @Sendable (any Dispatchable, inout S, InvertedCommit?) -> UndoLetGo
  ) {
    self.seesMoves = seesMoves
    self.wantsInverse = wantsInverse
    self.start = start
    self.record = record
  }
}

/// A context whose store can take a ``CommitHook``.
protocol RecorderAttachable: StoreContextInternals {
  /// Hands the store's commits to `hook`; returns the store as the recorder or history follows it, or nil if the hook
  /// is for another state type or the context is not a store's.
  func attach<T: State>(_ hook: CommitHook<T>) -> FollowedStore?
  /// Attaches `recorder` to the store; returns false if the context is not a store's, the store's state type is
  /// another, or the recorder records another store.
  func attach<T: State>(_ recorder: StoreRecorder<T>) -> Bool
}

extension SideEffectContext: RecorderAttachable {
  func attach<T: State>(_ hook: CommitHook<T>) -> FollowedStore? {
    guard case .store(let core) = backing, let hook = hook as? CommitHook<S> else { return nil }
    core.withLock { $0.attach(hook) }
    return FollowedStore(core)
  }

  func attach<T: State>(_ recorder: StoreRecorder<T>) -> Bool {
    guard case .store(let core) = backing, let core = core as? StoreCore<T, D> else { return false }
    do {
      try recorder.attach(core, what: "StoreRecorder.interceptor")
      return true
    } catch {
      return false
    }
  }
}

/// The store a recorder or an undo history follows: its identity, its flag of time travel and its count of what it
/// refused while away (both read without its lock).
struct FollowedStore: Sendable {
  let identity: ObjectIdentifier
  let awayFlag: AtomicFlag
  let refusedWhileAway: AtomicCount

  init<S: FeatureState, D: SideEffectDependencyContainer>(_ core: StoreCore<S, D>) {
    identity = ObjectIdentifier(core)
    awayFlag = core.awayFlag
    refusedWhileAway = core.refusedWhileAway
  }
}

/// Which store a recorder or an undo history follows, set once when its interceptor is installed.
@usableFromInline
final class AttachedStore: Sendable {
  private let followed = Locked<FollowedStore?>(nil)
  /// The identity of the store followed, as a word (0: none), written in the critical section that sets it: what
  /// ``check(_:what:)`` reads first, without the lock (each undo and redo checks: the lock was about 3% of them). A
  /// store's identity is never 0, and the store followed never changes once set, so a word that equals the identity
  /// checked says that store is followed; anything else takes the lock, which decides and names the error.
  @usableFromInline let identity = AtomicWord(word: 0)

  func set(_ store: FollowedStore?) {
    followed.withLock {
      $0 = store
      identity.storeReleasing(store.map { UInt(bitPattern: $0.identity) } ?? 0)
    }
  }

  /// Follows `store` if no store is followed yet; returns whether it did.
  func setIfUnset(_ store: FollowedStore) -> Bool {
    followed.withLock { followed in
      guard followed == nil else { return false }
      followed = store
      identity.storeReleasing(UInt(bitPattern: store.identity))
      return true
    }
  }

  /// Whether the store followed is away from live (time travel); false before one is followed.
  var isAwayFromLive: Bool {
    followed.withLock { $0?.awayFlag }?.isSet ?? false
  }

  /// What the store followed refused since it last went away from live; 0 before one is followed.
  var refusedWhileAway: Int {
    followed.withLock { $0?.refusedWhileAway }?.value ?? 0
  }

  /// Throws unless `core` is the store followed.
  @inlinable
  func check(_ core: AnyObject, what: String) throws(RecorderError) {
    try check(ObjectIdentifier(core), what: what)
  }

  /// Throws unless `store` is the identity of the store followed.
  @inlinable
  func check(_ store: ObjectIdentifier, what: String) throws(RecorderError) {
    if identity.acquired == UInt(bitPattern: store) { return }
    try checkLocked(store, what: what)
  }

  /// ``check(_:what:)`` under the lock: when the word says another store, or none.
  @usableFromInline
  func checkLocked(_ store: ObjectIdentifier, what: String) throws(RecorderError) {
    switch followed.withLock({ $0?.identity }) {
    case nil: throw .notInstalled(what)
    case store?: return
    default: throw .anotherStore(what)
    }
  }
}

/// Why a recorder or an undo history refused to act on a store.
public enum RecorderError: Error, CustomStringConvertible {
  /// Its interceptor is not among the store's interceptors (or the store has not started yet).
  case notInstalled(String)
  /// It follows another store, or another scope.
  case anotherStore(String)
  /// A scope's undo history undoes through its scope (`undo(on: scopedStore)`), which changes only its slice.
  case scopeRequired(String)

  /// A sentence saying what was refused.
  public var description: String {
    switch self {
    case .notInstalled(let what):
      "\(what): its interceptor is not installed on a started store; add it to the store's interceptors."
    case .anotherStore(let what): "\(what): it follows another store or scope."
    case .scopeRequired(let what): "\(what): a scope's history undoes through its scope: pass the scoped store."
    }
  }
}
