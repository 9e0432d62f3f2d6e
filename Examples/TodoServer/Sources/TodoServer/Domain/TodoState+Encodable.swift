import OrderedCollections

/// The state as JSON, for the inspector (Examples/Inspector): the to-dos in order, and the sequence number.
extension TodoState: Encodable {
  private enum CodingKeys: String, CodingKey {
    case todos
    case sequence
  }

  /// Encodes the to-dos as an array, in creation order, and the sequence number.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(Array(todos.values), forKey: .todos)
    try container.encode(sequence, forKey: .sequence)
  }
}
