// Returning state updaters: the value of `updateState` threaded out of the one commit of a dispatch.
//
// No route of its own: a returning updater takes the routes of every updater (the fast path
// ``StoreCore/applyIfIdle(touching:item:_:)``, the mailbox and the interceptor chain through
// ``StoreCore/dispatchUpdaterWaitingForTurn(_:frame:apply:depth:)``, a scope's ``ScopeRoutes``), and so the one commit
// transition; only the mutation it hands them differs: it keeps the value where the dispatch reads it once the route
// has returned. A plain updater's dispatch is untouched and pays nothing for this.

extension StoreCore {
  /// Dispatches a returning state updater and returns the value its commit computed.
  ///
  /// - Throws: What ``dispatch(_:)`` throws; ``StoreError/returnValueUnavailable(_:)`` if the dispatch returned
  ///   without a commit of an item of type `U` (an interceptor dropped or replaced it, or caught its commit's error).
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatchReturning<U: ReturningStateUpdater>(_ updater: U) async throws
    -> U.ReturnValue where U.StateType == S
  {
    if let dispatchObservers {
      return try await dispatchObservers.observe(updater) { try await dispatchReturningUnobserved(updater) }
    }
    return try await dispatchReturningUnobserved(updater)
  }

  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatchReturningUnobserved<U: ReturningStateUpdater>(_ updater: U) async throws
    -> U.ReturnValue where U.StateType == S
  {
    if tracksActivity {
      return try await withActivity { try await dispatchReturningUntracked(updater) }
    }
    return try await dispatchReturningUntracked(updater)
  }

  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatchReturningUntracked<U: ReturningStateUpdater>(_ updater: U) async throws
    -> U.ReturnValue where U.StateType == S
  {
    if let value = try dispatchReturningWithoutWaiting(updater) { return value.value }
    let returned = ReturnedValue<U.ReturnValue>()
    try await dispatchUpdaterWaitingForTurn(
      updater, applying: UpdaterFrame<S>.applying(U.self, returningInto: returned),
      apply: { returned.keep(updater.updateState(&$0)) }, depth: 0)
    return try returned.value(of: U.self)
  }

  /// ``dispatchWithoutWaiting(_:)`` for a returning updater: the value, if the fast path committed it; nil when the
  /// caller must wait for its turn.
  @inlinable @inline(never)
  func dispatchReturningWithoutWaiting<U: ReturningStateUpdater>(_ updater: U) throws -> Returned<U.ReturnValue>?
  where U.StateType == S {
    guard !hasInterceptors else { return nil }
    var value: U.ReturnValue?
    let applied = try applyIfIdle(
      touching: nil, item: { updater },
      {
        try Self.checkCancellationAtArrival()
        value = updater.updateState(&$0)
      })
    return try Returned(applied: applied, value, of: U.self)
  }
}

/// The value a fast path's commit computed; a box, so that a `ReturnValue` that is itself optional reads apart from
/// "not committed".
@usableFromInline
struct Returned<Value> {
  @usableFromInline let value: Value

  /// The value of a fast path that `applied` (nil when it did not, and the caller takes the plain path).
  ///
  /// - Throws: ``StoreError/returnValueUnavailable(_:)`` if it applied without a value (a broken internal invariant:
  ///   an applied fast path ran its mutation), rather than trap.
  @inlinable
  init?(applied: Bool, _ value: Value?, of updater: Any.Type) throws {
    guard applied else { return nil }
    guard let value else { throw StoreError.returnValueUnavailable(String(reflecting: updater)) }
    self.value = value
  }
}

/// Where the commits of a returning updater's dispatch leave its values, for the dispatch to read once its route has
/// returned. Written under the store's lock (inside the mutation), read after it; a lock of its own all the same, as
/// an interceptor may hand a scope's item on to a dispatch of its own that commits later.
@usableFromInline
final class ReturnedValue<Value: Sendable>: Sendable {
  /// Every value kept, in commit order. Appended to, never overwritten: a value dropped here would be released under
  /// the store's lock, and a user's value may run code when released.
  private let values = Locked<[Value]>([])

  @usableFromInline init() {}

  /// Keeps the value of one commit.
  @usableFromInline func keep(_ value: Value) {
    values.withLock { $0.append(value) }
  }

  /// The value of the last commit.
  ///
  /// - Throws: ``StoreError/returnValueUnavailable(_:)`` if no commit of an item of `updater`'s type happened.
  @usableFromInline func value(of updater: Any.Type) throws -> Value {
    guard let value = values.withLock({ $0.last }) else {
      throw StoreError.returnValueUnavailable(String(reflecting: updater))
    }
    return value
  }
}

extension UpdaterFrame {
  /// A frame for a dispatch of the returning updater type `U`: an item of that type handed to `next` applies in place
  /// and leaves its value in `returned`.
  @inlinable
  convenience init<U: ReturningStateUpdater>(
    storeID: ObjectIdentifier, dispatching _: U.Type, returningInto returned: ReturnedValue<U.ReturnValue>
  ) where U.StateType == S {
    self.init(storeID: storeID, applyIfDispatchedType: Self.applying(U.self, returningInto: returned))
  }

  /// What a frame for a dispatch of the returning updater type `U` applies in place: an item of that type, its value
  /// left in `returned`.
  @inlinable
  static func applying<U: ReturningStateUpdater>(
    _: U.Type, returningInto returned: ReturnedValue<U.ReturnValue>
  ) -> TypedApply where U.StateType == S {
    { item, state in
      guard let updater = exactly(item, U.self) else { return false }
      returned.keep(updater.updateState(&state))
      return true
    }
  }
}
