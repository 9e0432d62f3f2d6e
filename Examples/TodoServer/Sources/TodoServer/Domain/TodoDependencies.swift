import Katana

/// The store of the to-do server.
public typealias TodoStore = Store<TodoState, TodoDependencies>

/// What the side effects of the to-do server use: the journal, and the lock that makes them one writer.
public final class TodoDependencies: SideEffectDependencyContainer {
  /// Where changes are persisted.
  public let journal: TodoJournal
  let writeLock = WriteLock()

  /// Dependencies that persist to `journal`.
  public init(journal: TodoJournal) {
    self.journal = journal
  }

  /// Dependencies with an in-memory journal (``TodoJournal/inMemory()``): nothing is persisted.
  ///
  /// The server builds its store with ``makeTodoStore(journal:)`` instead, which passes the real journal.
  public convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    self.init(journal: .inMemory())
  }

  /// Waits for the change being written, if any, then closes the journal: later changes fail with
  /// ``JournalError/notOpen`` before they touch the journal or the state.
  public func close() async {
    await writeLock.withLock { journal.close() }
  }
}

/// Creates the store of the to-do server: its state is restored from `journal` by the store's async state
/// initializer, and its side effects append every change to `journal` before committing it.
///
/// Dispatches made while the journal loads wait for it. If loading fails (a corrupt journal), the store never
/// becomes ready and every dispatch throws `StoreError.startupFailed`.
public func makeTodoStore(journal: TodoJournal) -> TodoStore {
  TodoStore(
    interceptors: [],
    stateInitializer: { try journal.load() },
    dependenciesInitializer: { _, _ in TodoDependencies(journal: journal) })
}
