import KatanaTesting

/// Milliseconds since the test clock's zero, for the trace.
private func timestamp(_ clock: TestClock) -> String {
  let (seconds, attoseconds) = clock.now.offset.components
  return "t=\(seconds * 1_000 + attoseconds / 1_000_000_000_000_000) ms"
}

let debounceStep = Step(title: "Debounce on a test clock") { trace in
  let clock = TestClock()
  let api = FakeRemoteAPI(todos: [Todo(id: 1, title: "Buy milk"), Todo(id: 2, title: "Bake bread")], clock: clock)
  let store = makeTodoStore(api: api, clock: clock)
  trace.say(
    "each keystroke sends SetQuery (the text, at once) and SearchAfterTyping (the search, debounced by 300 ms on "
      + "the store's clock, for the text in the state when it runs)")

  var pending: DispatchHandle<Void>?
  for text in ["b", "ba", "bak"] {
    store.send(SetQuery(query: text))
    let handle = store.send(SearchAfterTyping())
    if let previous = pending {
      // The newer call cancels the older one, which then throws CancellationError.
      try trace.expectCancelled(await previous.result, "the debounced search superseded by \"\(text)\"")
    }
    try await clock.waitForSleepers(count: 1)
    trace.say("\(timestamp(clock)): typed \"\(text)\"\(pending == nil ? "" : " (the pending search is cancelled)")")
    try trace.expect(store.state.query, text, "the query in the state")
    pending = handle
    if text != "bak" {
      await clock.advance(by: .milliseconds(100))
    }
  }

  await clock.advance(by: .milliseconds(299))
  trace.say("\(timestamp(clock)): no search yet")
  try trace.expect(api.searchesStarted, [], "searches 299 ms after the last keystroke")
  try trace.expect(clock.sleeperCount, 1, "debounced calls still waiting")

  await clock.advance(by: .milliseconds(1))
  try await pending?.value
  trace.say("\(timestamp(clock)): the search for \"bak\" ran: results \(store.state.searchResults)")
  try trace.expect(api.searchesStarted, ["bak"], "searches")
  try trace.expect(store.state.searchResults, ["Bake bread"], "search results")
  trace.proves(
    "debounce runs only the last call, once the store's clock has been quiet for the period; a TestClock "
      + "makes that deterministic and instant")
}
