import Foundation
import Katana
import OrderedCollections

/// The server's whole state: every to-do, by id, in creation order.
///
/// It is kept by the store (``TodoStore``) and rebuilt at start-up from the journal (``TodoJournal``), by
/// applying the same ``TodoChange``s in the same order.
public struct TodoState: State, Equatable {
  /// The to-dos, in creation order.
  public var todos: OrderedDictionary<UUID, Todo> = [:]

  /// The empty state: no to-dos.
  public init() {}
}

/// One change to the to-dos: what the journal records (one per line) and what ``CommitChange`` applies.
///
/// The state and the journal apply the same changes with the same code (``apply(to:)``), in the same order:
/// that is what makes the state restored from the journal equal to the state the server had.
public enum TodoChange: Codable, Equatable, Sendable {
  /// A to-do was created (at start-up, compaction also writes every live to-do this way).
  case created(todo: Todo)
  /// A to-do was marked done.
  case completed(id: UUID)
  /// A to-do was deleted.
  case deleted(id: UUID)

  /// Applies the change to `state`.
  ///
  /// A change to a to-do that does not exist does nothing: the write path never produces one (it validates
  /// under the write lock), and keeping `apply` total means replay never fails on a valid line.
  public func apply(to state: inout TodoState) {
    switch self {
    case .created(let todo): state.todos[todo.id] = todo
    case .completed(let id): state.todos[id]?.completed = true
    case .deleted(let id): state.todos.removeValue(forKey: id)
    }
  }
}

/// The server's only state updater: commits a change that the journal already holds.
struct CommitChange: StateUpdater {
  let change: TodoChange

  func updateState(_ state: inout TodoState) {
    change.apply(to: &state)
  }
}
