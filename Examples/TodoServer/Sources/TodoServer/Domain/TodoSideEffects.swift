import Foundation
import Katana
import OrderedCollections

// Every change takes the same path, in a side effect, one writer at a time (`write(_:)` below):
// 1. decide, against the latest committed state: validate, and pick the change (or none);
// 2. append the change to the journal;
// 3. commit it to the store through `CommitChange`, and wait until it is committed;
// then the next writer starts. So the journal and the state see the same changes in the same order, and
// each change is validated against the state its predecessors left: the state restored from the journal is
// always the state the server had, whatever the interleaving of requests.

/// Creates a to-do with a validated title, persists it, commits it, and returns it.
public struct CreateTodo: ReturningSideEffect {
  /// The requested title; surrounding white space is removed.
  public let title: String

  /// Creates the side effect.
  public init(title: String) {
    self.title = title
  }

  /// Returns the new to-do.
  ///
  /// - Throws: ``TodoError/invalidTitle(_:)``; ``JournalError`` if the change cannot be saved.
  public func sideEffect(_ context: any AnySideEffectContext) async throws -> Todo {
    let title = try Todo.validatedTitle(title)
    let todo = Todo(id: UUID(), title: title, completed: false)
    return try await context.typed(TodoState.self, TodoDependencies.self).write { _ in
      (.created(todo: todo), todo)
    }
  }
}

/// Marks a to-do done and returns it. Completing a done to-do changes nothing and writes nothing.
public struct CompleteTodo: ReturningSideEffect {
  /// The to-do's id.
  public let id: UUID

  /// Creates the side effect.
  public init(id: UUID) {
    self.id = id
  }

  /// Returns the to-do, done.
  ///
  /// - Throws: ``TodoError/notFound(_:)``; ``JournalError`` if the change cannot be saved.
  public func sideEffect(_ context: any AnySideEffectContext) async throws -> Todo {
    try await context.typed(TodoState.self, TodoDependencies.self).write { state in
      guard var todo = state.todos[id] else { throw TodoError.notFound(id) }
      guard !todo.completed else { return (nil, todo) }
      todo.completed = true
      return (.completed(id: id), todo)
    }
  }
}

/// Deletes a to-do.
public struct DeleteTodo: SideEffect {
  /// The to-do's id.
  public let id: UUID

  /// Creates the side effect.
  public init(id: UUID) {
    self.id = id
  }

  /// Deletes the to-do.
  ///
  /// - Throws: ``TodoError/notFound(_:)``; ``JournalError`` if the change cannot be saved.
  public func sideEffect(_ context: SideEffectContext<TodoState, TodoDependencies>) async throws {
    try await context.write { state in
      guard state.todos[id] != nil else { throw TodoError.notFound(id) }
      return (.deleted(id: id), ())
    }
  }
}

extension SideEffectContext<TodoState, TodoDependencies> {
  /// The write path of every change (see the top of this file).
  ///
  /// - Parameter decide: Validates against the latest committed state and returns the change to make (nil
  ///   for none) and the result for the caller. It throws to refuse the change.
  nonisolated(nonsending) func write<Result: Sendable>(
    _ decide: (TodoState) throws -> (change: TodoChange?, result: Result)
  ) async throws -> Result {
    try await dependencies.writeLock.withLock {
      let (change, result) = try decide(getState())
      guard let change else { return result }
      // A request cancelled while it waited for the lock changes nothing.
      try Task.checkCancellation()
      try dependencies.journal.append(change)
      // Once the change is in the journal it must reach the state, even if the request is cancelled now:
      // `send` hands the updater to the store, which applies it whatever happens to this task, and waiting
      // for its handle is not cancelled with the task. (`dispatch` would withdraw it on cancellation.) Only a
      // store shut down in between (a forced shutdown: a graceful one closes the journal first, under this
      // lock) fails it; the change is then applied at the next start, from the journal.
      try await send(CommitChange(change: change)).value
      return result
    }
  }
}
