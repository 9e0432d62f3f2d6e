import Katana

/// A to-do of the demo's service.
struct Todo: Sendable, Equatable, Codable, CustomStringConvertible {
  let id: Int
  var title: String
  var isDone = false

  var description: String {
    "#\(id) \(title)\(isDone ? " (done)" : "")"
  }
}

/// The service's whole state: one value, changed only by the state updaters in `StateUpdaters.swift`. Codable, so
/// that a recording of a session can be written as a log (the recording step).
struct TodoState: State, Equatable, Codable {
  var todos: [Todo] = []
  var isSyncing = false
  /// What the user typed in the search field.
  var query = ""
  /// The titles the last completed search found.
  var searchResults: [String] = []
}
