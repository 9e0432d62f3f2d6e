import Foundation
import OrderedCollections

/// The state as JSON, for the audit log (``AuditLog``) and the inspector (Examples/Inspector): the to-dos as an
/// array in creation order, and the sequence number.
extension TodoState: Codable {
  private enum CodingKeys: String, CodingKey {
    case todos
    case sequence
  }

  /// Decodes what ``encode(to:)`` writes.
  ///
  /// - Throws: `DecodingError` for a missing field, or for two to-dos with one id.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    let todos = try container.decode([Todo].self, forKey: .todos)
    var byID = OrderedDictionary<UUID, Todo>()
    for todo in todos {
      guard byID.updateValue(todo, forKey: todo.id) == nil else {
        throw DecodingError.dataCorruptedError(
          forKey: .todos, in: container, debugDescription: "Two to-dos have the id \(todo.id).")
      }
    }
    self.init()
    self.todos = byID
    self.sequence = try container.decode(Int64.self, forKey: .sequence)
  }

  /// Encodes the to-dos as an array, in creation order, and the sequence number.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(Array(todos.values), forKey: .todos)
    try container.encode(sequence, forKey: .sequence)
  }
}
