import Katana

// A search field: typing stores the query; once typing pauses (a debounce on the store's clock), a search
// calls the API from the dependency container and shows the results or the error.

struct SearchState: State, Equatable {
  var query = ""
  var results: [String] = []
  var isSearching = false
  var errorMessage: String?
}

/// The search backend. The app's container holds the live one; tests put a double in.
protocol SearchAPI: Sendable {
  func search(_ query: String) async throws -> [String]
}

final class SearchDependencies: SideEffectDependencyContainer {
  let api: any SearchAPI

  init(api: any SearchAPI) {
    self.api = api
  }

  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    self.api = UnconfiguredSearchAPI()
  }
}

/// What a container built without an API gets: every search fails.
struct UnconfiguredSearchAPI: SearchAPI {
  struct NotConfigured: Error {}
  func search(_ query: String) async throws -> [String] { throw NotConfigured() }
}

// MARK: - State updaters

struct SetQuery: StateUpdater, Equatable {
  let query: String
  func updateState(_ state: inout SearchState) { state.query = query }
}

struct SearchStarted: StateUpdater, Equatable {
  func updateState(_ state: inout SearchState) {
    state.isSearching = true
    state.errorMessage = nil
  }
}

struct SearchSucceeded: StateUpdater, Equatable {
  let results: [String]
  func updateState(_ state: inout SearchState) {
    state.isSearching = false
    state.results = results
  }
}

struct SearchFailed: StateUpdater, Equatable {
  let message: String
  func updateState(_ state: inout SearchState) {
    state.isSearching = false
    state.results = []
    state.errorMessage = message
  }
}

struct ClearResults: StateUpdater, Equatable {
  func updateState(_ state: inout SearchState) {
    state.results = []
    state.errorMessage = nil
  }
}

// MARK: - Side effects

/// The user typed: store the query, then search once typing pauses.
struct QueryChanged: SideEffect {
  let query: String

  func sideEffect(_ context: SideEffectContext<SearchState, SearchDependencies>) async throws {
    try await context.dispatch(SetQuery(query: query))
    guard !query.isEmpty else {
      try await context.dispatch(ClearResults())
      return
    }
    try await context.dispatch(Search(query: query))
  }
}

/// Searches once typing pauses: a debounce on the store's clock, under one id, so that a newer search
/// cancels this one, while it waits or while it runs.
struct Search: SideEffect, Equatable {
  static let debounce = Duration.milliseconds(300)
  /// The id searches run under: one search at a time.
  struct ID: Hashable, Sendable {}
  let query: String

  func sideEffect(_ context: SideEffectContext<SearchState, SearchDependencies>) async throws {
    do {
      try await context.debounce(id: ID(), for: Self.debounce) {
        try await context.dispatch(SearchStarted())
        let results: [String]
        do {
          results = try await context.dependencies.api.search(query)
        } catch is CancellationError {
          throw CancellationError()
        } catch {
          try await context.dispatch(SearchFailed(message: "Search failed: \(error)"))
          return
        }
        try await context.dispatch(SearchSucceeded(results: results))
      }
    } catch is CancellationError {
      // A newer search superseded this one: nothing to show.
    }
  }
}

/// How many results are shown: a returning side effect, for callers that need a value back.
struct CountResults: ReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) async throws -> Int {
    try context.typed(SearchState.self, SearchDependencies.self).getState().results.count
  }
}
