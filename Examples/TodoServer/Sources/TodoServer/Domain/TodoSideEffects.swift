import Foundation
import Katana

// Every change takes the same path, in a side effect (`write(todoID:request:_:)` below), inside one database
// transaction:
// 1. read the to-do the change is about, locked until the transaction ends (the database checks conflicts:
//    the store of this instance may not have seen another instance's change yet);
// 2. decide: validate, and pick the change (or none);
// 3. store the change and give it the next sequence number;
// then, once the transaction has committed, the store applies the change in sequence order, and the side
// effect returns only after that, so a client that got a 2xx reads its own change from this instance.
// How the committed change reaches the store depends on the engine: see `TodoDatabase`.

/// Creates a to-do with a validated title, persists it, commits it, and returns it.
public struct CreateTodo: ReturningSideEffect, Encodable {
  /// The requested title; surrounding white space is removed.
  public let title: String
  /// The HTTP request that asked for it (`"POST /todos #12"`), for the inspector and the audit log.
  public let request: String?

  /// Creates the side effect.
  public init(title: String, request: String? = nil) {
    self.title = title
    self.request = request
  }

  /// Returns the new to-do.
  ///
  /// - Throws: ``TodoError/invalidTitle(_:)``; ``TodoDatabaseError`` or the database's error if the change
  ///   cannot be saved.
  public func sideEffect(_ context: any AnySideEffectContext) async throws -> Todo {
    let title = try Todo.validatedTitle(title)
    let todo = Todo(id: UUID(), title: title, completed: false)
    return try await context.typed(TodoState.self, TodoDependencies.self).write(todoID: nil, request: request) { _ in
      (.created(todo: todo), todo)
    }
  }
}

/// Marks a to-do done and returns it. Completing a done to-do changes nothing and writes nothing.
public struct CompleteTodo: ReturningSideEffect, Encodable {
  /// The to-do's id.
  public let id: UUID
  /// The HTTP request that asked for it (`"POST /todos/.../complete #12"`), for the inspector and the audit log.
  public let request: String?

  /// Creates the side effect.
  public init(id: UUID, request: String? = nil) {
    self.id = id
    self.request = request
  }

  /// Returns the to-do, done.
  ///
  /// - Throws: ``TodoError/notFound(_:)`` if the database has no such to-do (on every instance, as soon as
  ///   the delete has committed); ``TodoDatabaseError`` or the database's error if the change cannot be saved.
  public func sideEffect(_ context: any AnySideEffectContext) async throws -> Todo {
    let id = id
    return try await context.typed(TodoState.self, TodoDependencies.self).write(todoID: id, request: request) {
      current in
      guard var todo = current else { throw TodoError.notFound(id) }
      guard !todo.completed else { return (nil, todo) }
      todo.completed = true
      return (.completed(id: id), todo)
    }
  }
}

/// Deletes a to-do.
public struct DeleteTodo: SideEffect, Encodable {
  /// The to-do's id.
  public let id: UUID
  /// The HTTP request that asked for it (`"DELETE /todos/... #12"`), for the inspector and the audit log.
  public let request: String?

  /// Creates the side effect.
  public init(id: UUID, request: String? = nil) {
    self.id = id
    self.request = request
  }

  /// Deletes the to-do.
  ///
  /// - Throws: ``TodoError/notFound(_:)``; ``TodoDatabaseError`` or the database's error if the change cannot
  ///   be saved.
  public func sideEffect(_ context: SideEffectContext<TodoState, TodoDependencies>) async throws {
    let id = id
    try await context.write(todoID: id, request: request) { current in
      guard current != nil else { throw TodoError.notFound(id) }
      return (.deleted(id: id), ())
    }
  }
}

extension SideEffectContext<TodoState, TodoDependencies> {
  /// The write path of every change (see the top of this file).
  ///
  /// - Parameters:
  ///   - todoID: The to-do the change is about, which the database reads and locks; nil for a new to-do.
  ///   - request: The HTTP request that asked for the change, carried to the commit (``CommitChanges/request``).
  ///   - decide: Given that to-do as the database has it (nil if there is none), returns the change to make
  ///     (nil for none) and the result for the caller. It throws to refuse the change: nothing is written.
  nonisolated(nonsending) func write<Result: Sendable>(
    todoID: UUID?, request: String?,
    _ decide: @escaping @Sendable (Todo?) throws -> (change: TodoChange?, result: Result)
  ) async throws -> Result {
    try await dependencies.database.write(todoID: todoID, request: request, decide: decide, context: self)
  }
}
