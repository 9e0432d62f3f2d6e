import KatanaTesting

let cancellationStep = Step(title: "Cancellation by id, on a test clock") { trace in
  let clock = TestClock()
  let api = FakeRemoteAPI(
    todos: [Todo(id: 1, title: "Buy milk"), Todo(id: 2, title: "Buy eggs")], clock: clock, searchLatency: .seconds(1))
  let store = makeTodoStore(api: api, clock: clock)
  trace.say("SearchTodos runs its search under SearchID() with cancelInFlight: true; the fake API answers")
  trace.say("a search after 1 s on the store's TestClock, which moves only when the tour advances it")

  let milk = store.send(SearchTodos(query: "milk"))
  try await clock.waitForSleepers(count: 1)
  trace.say("send(SearchTodos(\"milk\"))   -> in flight")

  let eggs = store.send(SearchTodos(query: "eggs"))
  try trace.expectCancelled(await milk.result, "the search for \"milk\"")
  trace.say("send(SearchTodos(\"eggs\"))   -> the search for \"milk\" throws CancellationError")

  try await clock.waitForSleepers(count: 1)
  store.cancel(id: SearchID())
  try trace.expectCancelled(await eggs.result, "the search for \"eggs\"")
  trace.say("store.cancel(id: SearchID()) -> the search for \"eggs\" throws CancellationError")
  try trace.expect(store.state.searchResults, [], "search results after two cancelled searches")

  let buy = store.send(SearchTodos(query: "buy"))
  try await clock.waitForSleepers(count: 1)
  await clock.advance(by: .seconds(1))
  try await buy.value
  trace.say("send(SearchTodos(\"buy\")), clock.advance(by: .seconds(1)) -> results \(store.state.searchResults)")
  try trace.expect(store.state.searchResults, ["Buy milk", "Buy eggs"], "search results")
  try trace.expect(api.searchesStarted, ["milk", "eggs", "buy"], "searches started")
  try trace.expect(api.searchesCompleted, ["buy"], "searches completed")
  trace.say("the API saw searches \(api.searchesStarted); only \(api.searchesCompleted) completed")
  trace.proves(
    "work run under an id is cancelled by a newer run with cancelInFlight or by store.cancel(id:), its "
      + "caller gets CancellationError and no stale result is committed; time on a TestClock passes without "
      + "real waiting")
}
