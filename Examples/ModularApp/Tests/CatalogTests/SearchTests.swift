import KatanaTesting
import Testing

@testable import Catalog

/// A test store of the catalog alone, on `clock`, with `products`. A search must emit no output: the test store
/// records every output, and the end of an exhaustive test reports any that no test asserted.
private func makeStore(
  _ state: CatalogState = CatalogState(), products: StubProducts, clock: TestClock
) -> TestStore<CatalogState, CatalogDependencies> {
  var configuration = TestStoreConfiguration()
  configuration.clock = clock
  return TestStore(
    initialState: state,
    dependencies: CatalogDependencies(products: products, searchDelay: .milliseconds(300)),
    configuration: configuration)
}

@Suite("Catalog: searching as the user types", .timeLimit(.minutes(1)))
struct SearchTests {
  @Test func typing_searchesOnce_whenTypingPausesForTheSearchDelay() async throws {
    let clock = TestClock()
    let products = StubProducts(["ma": [matcha, whisk]])
    let store = makeStore(products: products, clock: clock)

    store.send(SetQuery(query: "m")) { $0.query = "m" }
    let first = store.send(SearchAfterTyping())
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .milliseconds(200))

    store.send(SetQuery(query: "ma")) { $0.query = "ma" }
    let second = store.send(SearchAfterTyping())
    // The newer keystroke restarted the quiet period: the first one's search never runs.
    await #expect(throws: CancellationError.self) { try await first.value }
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .milliseconds(299))
    #expect(products.searches == [])

    await clock.advance(by: .milliseconds(1))
    await store.receive(StartSearch()) { $0.isSearching = true }
    await store.receive(ShowResults(query: "ma", products: [matcha, whisk])) {
      $0.isSearching = false
      $0.resultsQuery = "ma"
      $0.results = [matcha, whisk]
    }
    try await second.value
    #expect(products.searches == ["ma"])
    await store.finish()
  }

  /// Side effects sent one after the other may run in any order, so the search must not carry its keystroke's
  /// text: the one that runs searches what the field shows then.
  @Test func search_isForTheFieldsTextWhenItStarts_notWhenItWasSent() async throws {
    let clock = TestClock()
    let products = StubProducts(["mat": [matcha]])
    let store = makeStore(products: products, clock: clock)

    store.send(SetQuery(query: "m")) { $0.query = "m" }
    let search = store.send(SearchAfterTyping())
    try await clock.waitForSleepers(count: 1)
    try await store.dispatch(SetQuery(query: "mat")) { $0.query = "mat" }
    await clock.advance(by: .milliseconds(300))
    await store.receive(StartSearch()) { $0.isSearching = true }
    await store.receive(ShowResults(query: "mat", products: [matcha])) {
      $0.isSearching = false
      $0.resultsQuery = "mat"
      $0.results = [matcha]
    }
    try await search.value
    #expect(products.searches == ["mat"])
    await store.finish()
  }

  @Test func clearingTheField_cancelsThePendingSearch_andClearsTheResults() async throws {
    let clock = TestClock()
    let products = StubProducts()
    let store = makeStore(CatalogState(query: "ma", results: [matcha, whisk]), products: products, clock: clock)

    store.send(SetQuery(query: "mat")) { $0.query = "mat" }
    let typing = store.send(SearchAfterTyping())
    try await clock.waitForSleepers(count: 1)

    try await store.dispatch(SetQuery(query: "  ")) { $0.query = "  " }
    try await store.dispatch(SearchAfterTyping())
    await store.receive(ClearResults()) {
      $0.resultsQuery = ""
      $0.results = []
    }
    await #expect(throws: CancellationError.self) { try await typing.value }
    #expect(clock.sleeperCount == 0)
    #expect(products.searches == [])
    await store.finish()
  }

  @Test func failingSearch_keepsThePreviousResults_andShowsANotice_untilASearchAnswers() async throws {
    let clock = TestClock()
    let products = StubProducts(
      ["ma": [matcha, whisk]], failures: ["mat": StubFailure(description: "the backend is down")])
    let store = makeStore(CatalogState(query: "ma", results: [matcha]), products: products, clock: clock)

    store.send(SetQuery(query: "mat")) { $0.query = "mat" }
    let typing = store.send(SearchAfterTyping())
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .milliseconds(300))
    await store.receive(StartSearch()) { $0.isSearching = true }
    await store.receive(FailSearch(query: "mat", reason: "the backend is down")) {
      $0.isSearching = false
      $0.notice = .searchFailed(query: "mat", reason: "the backend is down")
    }
    // A failing backend is shown, not thrown: the search that the UI sent and forgot succeeds.
    try await typing.value
    #expect(store.state.results == [matcha])

    // The next search that answers takes the notice away.
    store.send(SetQuery(query: "ma")) { $0.query = "ma" }
    let retyping = store.send(SearchAfterTyping())
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .milliseconds(300))
    await store.receive(StartSearch()) { $0.isSearching = true }
    await store.receive(ShowResults(query: "ma", products: [matcha, whisk])) {
      $0.isSearching = false
      $0.results = [matcha, whisk]
      $0.notice = nil
    }
    try await retyping.value
    await store.finish()
  }

  @Test func search_isForTheTrimmedText() async throws {
    let clock = TestClock()
    let products = StubProducts(["whisk": [whisk]])
    let store = makeStore(products: products, clock: clock)

    store.send(SetQuery(query: " whisk ")) { $0.query = " whisk " }
    let typing = store.send(SearchAfterTyping())
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .milliseconds(300))
    await store.receive(StartSearch()) { $0.isSearching = true }
    await store.receive(ShowResults(query: "whisk", products: [whisk])) {
      $0.isSearching = false
      $0.resultsQuery = "whisk"
      $0.results = [whisk]
    }
    try await typing.value
    #expect(products.searches == ["whisk"])
    await store.finish()
  }
}
