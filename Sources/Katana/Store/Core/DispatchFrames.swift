/// The dispatch an interceptor chain is running for: how the chain's final `next` knows which dispatch a call
/// belongs to.
///
/// A ``StoreInterceptorNext`` is made once per store, so each dispatch that goes through closure interceptors binds
/// its frame to a task-local while its chain runs: a `next` called from that chain, or from a child task or a task it
/// started, finds the frame there. A ``DispatchInterceptorNext`` is made per call and carries its dispatch's frame
/// (found in the task where the chain starts with closure interceptors; handed over directly, with no task-local, for a
/// state updater's chain of ``DispatchInterceptor``s alone). Either way the store then handles the item only if the
/// frame's dispatch is still running (for a state updater: still holds the turn). So a `next` called after its
/// dispatch fails with ``StoreError/nextCalledOutOfScope(_:)`` instead of being applied in whatever dispatch runs at
/// the time.
@usableFromInline
class DispatchFrame: @unchecked Sendable {
  // Sendable: subclasses keep their mutable state under a lock (the store's, or their own).

  /// The task-local behind ``current``, declared without the property wrapper so that the inlined
  /// ``withFrame(_:_:)`` can bind it.
  @usableFromInline static let local = TaskLocal<DispatchFrame?>(wrappedValue: nil)

  /// The frame of the chain running in the current task, if any.
  @usableFromInline static var current: DispatchFrame? { local.get() }

  /// The store whose chain this frame belongs to.
  @usableFromInline let storeID: ObjectIdentifier
  /// Whether this is an ``UpdaterFrame`` (otherwise a ``SideEffectFrame``).
  @usableFromInline let isUpdater: Bool

  @usableFromInline init(storeID: ObjectIdentifier, isUpdater: Bool) {
    self.storeID = storeID
    self.isUpdater = isUpdater
  }

  /// Runs `body` with `frame` as the current frame (nil: outside of any).
  @inlinable nonisolated(nonsending) static func withFrame<T>(
    _ frame: DispatchFrame?, _ body: nonisolated(nonsending) () async throws -> T
  ) async rethrows -> T {
    try await local.withValue(frame) { try await body() }
  }

  /// Runs `body` outside of any frame: what a side effect's body does, so that its dispatches get frames of
  /// their own.
  nonisolated(nonsending) static func withoutFrame<T>(_ body: () async throws -> T) async rethrows -> T {
    try await withFrame(nil, body)
  }
}

/// Per-dispatch bookkeeping for a state updater whose interceptor chain is running.
///
/// The dispatch holds the store's turn, so at most one such frame is active per store: the store keeps it as
/// its turn frame, and the chain's final `next` checks that the frame it found is that one.
@usableFromInline
final class UpdaterFrame<S: FeatureState>: DispatchFrame, @unchecked Sendable {
  // Sendable: the fields below are only touched under the store's lock.

  /// Applies an item if it has the dispatched updater's type, and returns whether it did: one cast, made by
  /// specialised code (a function with no captures, so making a frame allocates only the frame).
  @usableFromInline typealias TypedApply = (any Dispatchable, inout S) -> Bool

  /// A variable: a frame recycled for another dispatch (``CoreState/takeSpareFrame(applying:)``) takes that
  /// dispatch's. Only touched under the store's lock, or before the frame is shared.
  @exclusivity(unchecked) @usableFromInline var applyIfDispatchedType: TypedApply
  // Both fields are only touched under the store's lock, which already makes their accesses exclusive: unchecked,
  // they cost no dynamic exclusivity check (about 3% of a dispatch through one interceptor).
  /// Items of the other kind handed to `next`; dispatched once the chain has returned.
  @exclusivity(unchecked) @usableFromInline var redirects: [any Dispatchable] = []
  /// Where the dispatch's chain stands (see ``ChainEnd``). Changed only by ``CoreState``'s chain-end transitions,
  /// under the store's lock.
  @exclusivity(unchecked) @usableFromInline var chainEnd = ChainEnd.running

  /// A frame for a dispatch of `U`.
  @inlinable
  convenience init<U: StateUpdater>(storeID: ObjectIdentifier, dispatching _: U.Type) where U.StateType == S {
    self.init(storeID: storeID, applyIfDispatchedType: Self.applying(U.self))
  }

  /// A frame for a type-erased dispatch, whose items all take the store's type-erased path.
  @inlinable
  convenience init(storeID: ObjectIdentifier) {
    self.init(storeID: storeID, applyIfDispatchedType: Self.applyingNothing)
  }

  /// What a frame for a dispatch of `U` applies in place: an item of type `U`.
  @inlinable
  static func applying<U: StateUpdater>(_: U.Type) -> TypedApply where U.StateType == S {
    { item, state in
      guard let updater = exactly(item, U.self) else { return false }
      updater.updateState(&state)
      return true
    }
  }

  /// What a frame for a type-erased dispatch applies in place: nothing (a function with no captures).
  @inlinable
  static var applyingNothing: TypedApply {
    { _, _ in false }
  }

  @usableFromInline init(storeID: ObjectIdentifier, applyIfDispatchedType: @escaping TypedApply) {
    self.applyIfDispatchedType = applyIfDispatchedType
    super.init(storeID: storeID, isUpdater: true)
  }
}

/// Where an updater's interceptor chain stands, as the chain's final `next` and the dispatch that holds the turn
/// see it: one state, advanced only by ``CoreState/installChain(_:holder:)``, ``CoreState/enterNext(_:frame:)``,
/// ``CoreState/exitNext(_:)`` and ``CoreState/closeChain(_:)``, under the store's lock.
///
/// ```
/// running --enterNext--> inNext --exitNext--> running
/// running --closeChain--> closed
/// inNext --closeChain--> closing --exitNext--> closed (the dispatch waiting in closeChain goes on)
/// ```
@usableFromInline
enum ChainEnd {
  /// The chain runs; no call of `next` is being handled.
  case running
  /// A call of `next` is being handled (committed, then delivered): a second call meanwhile is rejected, so that
  /// commits never overlap.
  case inNext
  /// The chain returned while a call of `next` (handed to a task the interceptor did not await) was still being
  /// handled: the dispatch waits as this waiter, and returns once that call ends.
  case closing(waiter: UInt64)
  /// The chain returned: a `next` called from now on fails.
  case closed
}

/// Per-dispatch bookkeeping for a side effect whose interceptor chain is running.
///
/// Side-effect chains run concurrently, so each frame keeps its record under a lock of its own. The body
/// itself runs outside of any frame, so that dispatches it makes get frames of their own.
@usableFromInline
class SideEffectFrame: DispatchFrame, @unchecked Sendable {
  // Sendable: mutable state lives in `record`, behind a lock.

  @usableFromInline
  struct Record {
    var isOpen = true
    var value: (any Sendable)?
    var redirects: [any Dispatchable] = []

    init() {}
  }

  let record = Locked(Record())
  /// The store's side-effect runner, if it has one.
  let runner: (any SideEffectRunner)?

  init(storeID: ObjectIdentifier, runner: (any SideEffectRunner)?) {
    self.runner = runner
    super.init(storeID: storeID, isUpdater: false)
  }

  /// Runs a side-effect body, through the store's runner if it has one.
  nonisolated(nonsending) func runBody<T: Sendable>(_ body: sending nonisolated(nonsending) () async throws -> T)
    async throws -> T
  {
    guard let runner else { return try await body() }
    return try await runner.run(body)
  }

  /// Runs `item` if it has the dispatched item's type and returns its value; returns nil for any other
  /// item, which the store then handles on its type-erased path.
  func runIfDispatchedType(_ item: any Dispatchable) async throws -> (any Sendable)? {
    nil
  }

  /// Throws ``StoreError/nextCalledOutOfScope(_:)`` if the dispatch has already finished.
  func checkOpen(for item: any Dispatchable) throws {
    let isOpen = record.withLock { $0.isOpen }
    guard isOpen else { throw StoreError.nextCalledOutOfScope(typeName(of: item)) }
  }

  func setValue(_ value: any Sendable) {
    record.withLock { $0.value = value }
  }

  func addRedirect(_ item: any Dispatchable) {
    record.withLock { $0.redirects.append(item) }
  }

  /// Closes the frame: later calls to `next` fail. Returns what the chain produced.
  func close() -> Record {
    record.withLock { record in
      record.isOpen = false
      return record
    }
  }
}

/// A ``SideEffectFrame`` for a typed ``SideEffect``.
@usableFromInline
final class TypedSideEffectFrame<E: SideEffect>: SideEffectFrame, @unchecked Sendable {
  let context: SideEffectContext<E.StateType, E.Dependencies>

  init(
    storeID: ObjectIdentifier, context: SideEffectContext<E.StateType, E.Dependencies>,
    runner: (any SideEffectRunner)?
  ) {
    self.context = context
    super.init(storeID: storeID, runner: runner)
  }

  override func runIfDispatchedType(_ item: any Dispatchable) async throws -> (any Sendable)? {
    guard let effect = item as? E else { return nil }
    try await Self.withoutFrame { try await runBody { try await effect.sideEffect(context) } }
    return ()
  }
}

/// A ``SideEffectFrame`` for a ``ReturningSideEffect``.
@usableFromInline
final class ReturningSideEffectFrame<R: ReturningSideEffect>: SideEffectFrame, @unchecked Sendable {
  let context: any AnySideEffectContext

  init(storeID: ObjectIdentifier, context: any AnySideEffectContext, runner: (any SideEffectRunner)?) {
    self.context = context
    super.init(storeID: storeID, runner: runner)
  }

  override func runIfDispatchedType(_ item: any Dispatchable) async throws -> (any Sendable)? {
    guard let effect = item as? R else { return nil }
    return try await Self.withoutFrame { try await runBody { try await effect.sideEffect(context) } }
  }
}
