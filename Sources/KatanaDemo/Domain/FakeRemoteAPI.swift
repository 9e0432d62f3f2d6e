import Katana

/// The error the remote API answers bad input with.
enum RemoteAPIError: Error, Equatable {
  case invalidTitle(String)
}

/// The service's dependency: a remote to-do API, faked in memory so that the tour runs anywhere, at once,
/// with the same output every time.
///
/// Searches take `searchLatency` on the clock it is given; the tour gives it the store's `TestClock`, so
/// that latency passes when the tour advances the clock, never in real time.
final class FakeRemoteAPI: Sendable {
  private struct Records {
    var todos: [Todo]
    var nextID: Int
    var fetchCount = 0
    var searchesStarted: [String] = []
    var searchesCompleted: [String] = []
  }

  private let records: Protected<Records>
  private let clock: any Clock<Duration>
  private let searchLatency: Duration

  init(todos: [Todo] = [], clock: any Clock<Duration> = ContinuousClock(), searchLatency: Duration = .zero) {
    records = Protected(Records(todos: todos, nextID: (todos.map(\.id).max() ?? 0) + 1))
    self.clock = clock
    self.searchLatency = searchLatency
  }

  /// Every to-do the server has.
  func fetchTodos() async throws -> [Todo] {
    records.withLock { records in
      records.fetchCount += 1
      return records.todos
    }
  }

  /// Creates a to-do; the server chooses its id and refuses an empty title.
  func create(title: String) async throws -> Todo {
    guard !title.allSatisfy(\.isWhitespace) else { throw RemoteAPIError.invalidTitle(title) }
    return records.withLock { records in
      let todo = Todo(id: records.nextID, title: title)
      records.nextID += 1
      records.todos.append(todo)
      return todo
    }
  }

  /// The titles of the server's to-dos that contain `query`, after `searchLatency` on the clock.
  func search(_ query: String) async throws -> [String] {
    records.withLock { $0.searchesStarted.append(query) }
    if searchLatency > .zero {
      try await clock.sleep(for: searchLatency)
    }
    return records.withLock { records in
      records.searchesCompleted.append(query)
      return records.todos.map(\.title).filter { $0.lowercased().contains(query.lowercased()) }
    }
  }

  var fetchCount: Int { records.withLock { $0.fetchCount } }
  var searchesStarted: [String] { records.withLock { $0.searchesStarted } }
  var searchesCompleted: [String] { records.withLock { $0.searchesCompleted } }
}
