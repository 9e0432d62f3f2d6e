import Foundation

/// A to-do, as the state keeps it, the journal stores it and the API returns it.
public struct Todo: Codable, Equatable, Identifiable, Sendable {
  /// The to-do's id, chosen by the server: ids never repeat, across restarts too.
  public let id: UUID
  /// What to do: 1 to ``maximumTitleLength`` characters, no control characters, trimmed.
  public var title: String
  /// Whether the to-do is done.
  public var completed: Bool

  /// Creates a to-do.
  public init(id: UUID, title: String, completed: Bool) {
    self.id = id
    self.title = title
    self.completed = completed
  }
}

extension Todo {
  /// The most characters a title may have.
  public static let maximumTitleLength = 200

  /// Returns `title` without surrounding white space, if that is a valid title.
  ///
  /// - Throws: ``TodoError/invalidTitle(_:)`` saying what is wrong.
  static func validatedTitle(_ title: String) throws(TodoError) -> String {
    let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !trimmed.isEmpty else {
      throw .invalidTitle("The title must not be empty.")
    }
    guard trimmed.count <= maximumTitleLength else {
      throw .invalidTitle("The title has \(trimmed.count) characters; at most \(maximumTitleLength) are allowed.")
    }
    guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
      throw .invalidTitle("The title must not contain control characters (such as line breaks or tabs).")
    }
    return trimmed
  }
}
