import Foundation
import Katana
import OrderedCollections
import Tracing

/// The server's whole state: every to-do, by id, in creation order, as of one point of the database's history.
///
/// It is kept by the store (``TodoStore``), restored at start-up from the database, and changed only by
/// ``CommitChanges``, which applies the database's changes in their sequence order.
public struct TodoState: State, Equatable {
  /// The to-dos, in creation order.
  public var todos: OrderedDictionary<UUID, Todo> = [:]
  /// The sequence number of the last change applied (0 for an empty database): the state is the database as it
  /// was right after that change committed.
  public var sequence: Int64 = 0

  /// The empty state: no to-dos, no change applied.
  public init() {}

  /// A state holding `todos` (in this order), as of the change numbered `sequence`.
  public init(todos: [Todo], sequence: Int64) {
    self.todos = OrderedDictionary(uniqueKeysWithValues: todos.map { ($0.id, $0) })
    self.sequence = sequence
  }

  /// Applies `change` if it is the next one, and says what happened.
  ///
  /// This is the only way the state changes, on every engine: a change the state already has (an equal or
  /// lower sequence number) is skipped, so applying a change twice is harmless; a change that would skip one
  /// is refused, so the state never gets ahead of a change it has not seen.
  @discardableResult
  public mutating func apply(_ change: SequencedChange) -> ApplyOutcome {
    if change.sequence <= sequence { return .alreadyApplied }
    guard change.sequence == sequence + 1 else { return .gap(expected: sequence + 1) }
    change.change.apply(to: &self)
    sequence = change.sequence
    return .applied
  }

  /// What ``apply(_:)`` did with a change.
  public enum ApplyOutcome: Equatable, Sendable {
    /// The change was the next one: the state now includes it.
    case applied
    /// The state already included the change: nothing was done.
    case alreadyApplied
    /// The change comes after one the state has not seen (numbered `expected`): nothing was done.
    case gap(expected: Int64)
  }
}

/// One change to the to-dos: what the database records and what the store applies.
public enum TodoChange: Codable, Equatable, Sendable {
  /// A to-do was created.
  case created(todo: Todo)
  /// A to-do was marked done.
  case completed(id: UUID)
  /// A to-do was deleted.
  case deleted(id: UUID)

  /// The id of the to-do the change is about.
  public var todoID: UUID {
    switch self {
    case .created(let todo): todo.id
    case .completed(let id), .deleted(let id): id
    }
  }

  /// Applies the change to `state`'s to-dos (not to its sequence number: see ``TodoState/apply(_:)``).
  ///
  /// A change to a to-do that does not exist does nothing: the database refuses such changes, and keeping
  /// `apply` total means applying the database's history never fails.
  func apply(to state: inout TodoState) {
    switch self {
    case .created(let todo): state.todos[todo.id] = todo
    case .completed(let id): state.todos[id]?.completed = true
    case .deleted(let id): state.todos.removeValue(forKey: id)
    }
  }
}

/// A change with the sequence number the database gave it when it committed. Numbers start at 1 and have no
/// gaps: change `n + 1` committed after change `n`.
public struct SequencedChange: Codable, Equatable, Sendable {
  /// The change's number in the database's history.
  public let sequence: Int64
  /// What changed.
  public let change: TodoChange

  /// Creates a sequenced change.
  public init(sequence: Int64, change: TodoChange) {
    self.sequence = sequence
    self.change = change
  }
}

/// The server's only state updater: applies changes that the database has committed, in sequence order.
///
/// Each change is applied at most once (see ``TodoState/apply(_:)``); the code that dispatches this updater
/// checks the resulting ``TodoState/sequence`` to see how far it got.
///
/// It is `Codable` for the audit log (``AuditLog``), which writes its changes and not its trace context.
struct CommitChanges: StateUpdater, CarriesTraceContext, Codable {
  let changes: [SequencedChange]
  /// The trace of the request that made the change, when the updater is sent from outside that request's
  /// task (the SQLite writer sends it): see ``TodoInstrumentation``.
  let traceContext: ServiceContext?
  /// The HTTP request that made the change (`"POST /todos #12"`), when the updater is sent from its write (the
  /// SQLite writer sends it); nil for the changes a feed reads (PostgreSQL), which may come from any instance.
  /// Written in the audit log and shown by the inspector.
  let request: String?

  init(_ changes: [SequencedChange], traceContext: ServiceContext? = nil, request: String? = nil) {
    self.changes = changes
    self.traceContext = traceContext
    self.request = request
  }

  private enum CodingKeys: String, CodingKey {
    case changes, request
  }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    self.init(
      try container.decode([SequencedChange].self, forKey: .changes),
      request: try container.decodeIfPresent(String.self, forKey: .request))
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(changes, forKey: .changes)
    try container.encodeIfPresent(request, forKey: .request)
  }

  func updateState(_ state: inout TodoState) {
    for change in changes {
      if case .gap = state.apply(change) { return }
    }
  }
}
