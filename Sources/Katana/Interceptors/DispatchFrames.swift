/// Per-dispatch bookkeeping for a state updater whose interceptor chain is running.
///
/// The dispatch holds the store's turn, so at most one frame exists per store at a time; the store keeps it
/// in its locked state, where the chain's final `next` finds it. That keeps task-locals (about 65 ns to bind
/// on the reference machine) off the updater path.
@usableFromInline
class UpdaterFrame<S: State>: @unchecked Sendable {  // Sendable: fields are only touched under the store lock.
  /// Items of the other kind handed to `next`; dispatched once the chain has returned.
  @usableFromInline var redirects: [any Dispatchable] = []

  @usableFromInline
  init() {}

  /// Applies `item` if it has the dispatched item's type, and returns whether it did. The typed subclass
  /// does this with one cast; the base class leaves every item to the store's type-erased path.
  @usableFromInline
  func applyIfDispatchedType(_ item: any Dispatchable, to state: inout S) -> Bool {
    false
  }
}

/// An ``UpdaterFrame`` that knows the dispatched updater's type.
@usableFromInline
final class TypedUpdaterFrame<S: State, U: StateUpdater>: UpdaterFrame<S>, @unchecked Sendable
where U.StateType == S {
  @usableFromInline
  override init() {}

  @usableFromInline
  override func applyIfDispatchedType(_ item: any Dispatchable, to state: inout S) -> Bool {
    guard let updater = item as? U else { return false }
    updater.updateState(&state)
    return true
  }
}

/// Per-dispatch bookkeeping for a side effect whose interceptor chain is running.
///
/// Side-effect chains run concurrently, so the chain's final `next` finds its frame through a task-local.
/// The body itself runs with the task-local cleared, so that dispatches it makes get frames of their own.
@usableFromInline
class SideEffectFrame: @unchecked Sendable {  // Sendable: mutable state lives in `record`, behind a lock.
  /// The frame of the side-effect chain running in the current task, if any.
  @TaskLocal @usableFromInline static var current: SideEffectFrame?

  @usableFromInline
  struct Record {
    @usableFromInline var isOpen = true
    @usableFromInline var value: (any Sendable)?
    @usableFromInline var redirects: [any Dispatchable] = []

    @inlinable
    init() {}
  }

  /// The store whose chain this frame belongs to.
  @usableFromInline let storeID: ObjectIdentifier
  @usableFromInline let record = Locked(Record())
  /// The store's side-effect runner, if it has one.
  @usableFromInline let runner: (any SideEffectRunner)?

  @usableFromInline
  init(storeID: ObjectIdentifier, runner: (any SideEffectRunner)?) {
    self.storeID = storeID
    self.runner = runner
  }

  /// Runs a side-effect body, through the store's runner if it has one.
  @usableFromInline
  nonisolated(nonsending) func runBody<T: Sendable>(_ body: sending nonisolated(nonsending) () async throws -> T)
    async throws -> T
  {
    guard let runner else { return try await body() }
    return try await runner.run(body)
  }

  /// Runs `item` if it has the dispatched item's type and returns its value; returns nil for any other
  /// item, which the store then handles on its type-erased path.
  @usableFromInline
  func runIfDispatchedType(_ item: any Dispatchable) async throws -> (any Sendable)? {
    nil
  }

  /// Throws ``StoreError/nextCalledOutOfScope(_:)`` if the dispatch has already finished.
  @inlinable
  func checkOpen(for item: any Dispatchable) throws {
    let isOpen = record.withLock { $0.isOpen }
    guard isOpen else { throw StoreError.nextCalledOutOfScope(typeName(of: item)) }
  }

  @inlinable
  func setValue(_ value: any Sendable) {
    record.withLock { $0.value = value }
  }

  @inlinable
  func addRedirect(_ item: any Dispatchable) {
    record.withLock { $0.redirects.append(item) }
  }

  /// Closes the frame: later calls to `next` fail. Returns what the chain produced.
  @inlinable
  func close() -> Record {
    record.withLock { record in
      record.isOpen = false
      return record
    }
  }

  /// Runs `body` with `frame` as the current side-effect frame (nil: outside of any).
  @usableFromInline
  nonisolated(nonsending) static func withFrame<T>(
    _ frame: SideEffectFrame?, _ body: () async throws -> T
  ) async rethrows -> T {
    try await $current.withValue(frame) { try await body() }
  }

  /// Runs `body` outside of any side-effect frame.
  @inlinable
  nonisolated(nonsending) static func withoutFrame<T>(_ body: () async throws -> T) async rethrows -> T {
    try await withFrame(nil, body)
  }
}

/// A ``SideEffectFrame`` for a typed ``SideEffect``.
@usableFromInline
final class TypedSideEffectFrame<E: SideEffect>: SideEffectFrame, @unchecked Sendable {
  @usableFromInline let context: SideEffectContext<E.StateType, E.Dependencies>

  @usableFromInline
  init(
    storeID: ObjectIdentifier, context: SideEffectContext<E.StateType, E.Dependencies>,
    runner: (any SideEffectRunner)?
  ) {
    self.context = context
    super.init(storeID: storeID, runner: runner)
  }

  @usableFromInline
  override func runIfDispatchedType(_ item: any Dispatchable) async throws -> (any Sendable)? {
    guard let effect = item as? E else { return nil }
    try await Self.withoutFrame { try await runBody { try await effect.sideEffect(context) } }
    return ()
  }
}

/// A ``SideEffectFrame`` for a ``ReturningSideEffect``.
@usableFromInline
final class ReturningSideEffectFrame<R: ReturningSideEffect>: SideEffectFrame, @unchecked Sendable {
  @usableFromInline let context: any AnySideEffectContext

  @usableFromInline
  init(storeID: ObjectIdentifier, context: any AnySideEffectContext, runner: (any SideEffectRunner)?) {
    self.context = context
    super.init(storeID: storeID, runner: runner)
  }

  @usableFromInline
  override func runIfDispatchedType(_ item: any Dispatchable) async throws -> (any Sendable)? {
    guard let effect = item as? R else { return nil }
    return try await Self.withoutFrame { try await runBody { try await effect.sideEffect(context) } }
  }
}
