import KatanaTesting
import Testing

/// A search API double that answers from a table and remembers what it was asked.
actor StubSearchAPI: SearchAPI {
  let answers: [String: [String]]
  private(set) var queries: [String] = []

  init(_ answers: [String: [String]]) {
    self.answers = answers
  }

  func search(_ query: String) async throws -> [String] {
    queries.append(query)
    return answers[query] ?? []
  }
}

/// A search API double that always fails.
struct OfflineSearchAPI: SearchAPI {
  struct Offline: Error {}
  func search(_ query: String) async throws -> [String] { throw Offline() }
}

/// The example feature tested end to end, the way an app's tests would use the test store: a `TestClock`
/// drives the debounce, API doubles replace the backend, and every state change and dispatched item is
/// asserted.
@Suite("Example: search feature", .timeLimit(.minutes(3)))
struct SearchFeatureTests {
  let clock = TestClock()

  func makeStore(api: any SearchAPI, initialState: SearchState = SearchState()) -> TestStore<
    SearchState, SearchDependencies
  > {
    var configuration = TestStoreConfiguration()
    configuration.clock = clock  // side effects sleep on `context.clock`: the test moves its time
    return TestStore(
      initialState: initialState, dependencies: SearchDependencies(api: api), configuration: configuration)
  }

  @Test func typing_searchesOnceTypingPauses_andShowsTheResults() async throws {
    let api = StubSearchAPI(["kat": ["katana", "katana-swift"]])
    let store = makeStore(api: api)

    store.send(QueryChanged(query: "kat"))
    await store.receive(SetQuery(query: "kat")) { $0.query = "kat" }
    await store.receive(Search(query: "kat"))

    await clock.advance(by: Search.debounce)  // lets the debounce reach its sleep first, then wakes it
    await store.receive(SearchStarted.self) { $0.isSearching = true }
    await store.receive(SearchSucceeded.self) {
      $0.isSearching = false
      $0.results = ["katana", "katana-swift"]
    }
    await store.finish()
    #expect(await api.queries == ["kat"])
  }

  @Test func typingQuickly_searchesOnlyTheLastQuery() async throws {
    let api = StubSearchAPI(["ka": ["katana"]])
    let store = makeStore(api: api)

    let first = store.send(QueryChanged(query: "k"))
    await store.receive(SetQuery(query: "k")) { $0.query = "k" }
    await store.receive(Search(query: "k"))
    await clock.advance(by: .milliseconds(100))

    store.send(QueryChanged(query: "ka"))
    await store.receive(SetQuery(query: "ka")) { $0.query = "ka" }
    await store.receive(Search(query: "ka"))
    await first.finish()  // the newer search cancelled the older one, which ends without a result
    await clock.advance(by: Search.debounce)

    await store.receive(SearchStarted.self) { $0.isSearching = true }
    await store.receive(SearchSucceeded(results: ["katana"])) {
      $0.isSearching = false
      $0.results = ["katana"]
    }
    await store.finish()
    #expect(await api.queries == ["ka"])
  }

  @Test func failingAPI_showsTheError() async throws {
    let store = makeStore(api: OfflineSearchAPI())

    store.send(QueryChanged(query: "kat"))
    await store.receive(SetQuery(query: "kat")) { $0.query = "kat" }
    await store.receive(Search(query: "kat"))
    await clock.advance(by: Search.debounce)
    await store.receive(SearchStarted.self) { $0.isSearching = true }
    await store.receive(SearchFailed.self) {
      $0.isSearching = false
      $0.errorMessage = "Search failed: Offline()"
    }
    await store.finish()
  }

  @Test func clearingTheQuery_clearsTheResults_withoutSearching() async throws {
    let api = StubSearchAPI([:])
    let store = makeStore(api: api, initialState: SearchState(query: "kat", results: ["katana"]))

    try await store.dispatch(QueryChanged(query: ""))
    await store.receive(SetQuery(query: "")) { $0.query = "" }
    await store.receive(ClearResults()) { $0.results = [] }
    await store.finish()
    #expect(await api.queries.isEmpty)
  }

  @Test func countResults_returnsItsValueToTheTest() async throws {
    let store = makeStore(api: StubSearchAPI([:]), initialState: SearchState(results: ["a", "b"]))
    let count = try await store.dispatch(CountResults())
    #expect(count == 2)
    await store.finish()
  }

  @Test func nonExhaustive_assertsOnlyTheOutcome() async throws {
    let store = makeStore(api: StubSearchAPI(["kat": ["katana"]]))
    store.exhaustivity = .off

    store.send(QueryChanged(query: "kat"))
    await clock.advance(by: Search.debounce)
    await store.receive(SearchSucceeded.self) { $0.results = ["katana"] }
    await store.finish()
  }
}
