import Foundation

/// What a to-do change can be refused for. The HTTP layer turns each case into a 4xx response.
public enum TodoError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The title is empty, too long or contains control characters; the message says which.
  case invalidTitle(String)
  /// No to-do has this id (it never existed, or it was deleted).
  case notFound(UUID)

  /// What went wrong, for the client.
  public var description: String {
    switch self {
    case .invalidTitle(let reason): reason
    case .notFound(let id): "No to-do has the id \(id)."
    }
  }
}
