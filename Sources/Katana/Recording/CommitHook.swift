/// How a store hands each commit made through its interceptor chain (or replayed into it) to a ``StoreRecorder`` or
/// an ``UndoHistory``: called in commit order, while the committing updater holds the store's turn, outside the
/// store's lock.
@usableFromInline
final class CommitHook<S: State>: Sendable {
  /// Whether the hook wants the state before the next commit (a recorder with no initial state since a reset).
  @usableFromInline let needsBefore: AtomicFlag
  @usableFromInline let record: @Sendable (_ item: any Dispatchable, _ before: S?, _ after: S) -> Void

  init(needsBefore: Bool, record: @escaping @Sendable (any Dispatchable, S?, S) -> Void) {
    self.needsBefore = AtomicFlag(needsBefore)
    self.record = record
  }
}

/// A context whose store can take a ``CommitHook``.
protocol RecorderAttachable: StoreContextInternals {
  func attach<T: State>(_ hook: CommitHook<T>)
}

extension SideEffectContext: RecorderAttachable {
  func attach<T: State>(_ hook: CommitHook<T>) {
    guard case .store(let core) = backing, let hook = hook as? CommitHook<S> else { return }
    core.withLock { $0.commitHooks.append(hook) }
  }
}
