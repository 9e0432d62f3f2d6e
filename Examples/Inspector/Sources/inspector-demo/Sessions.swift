import Foundation
import Katana

/// The browser test's session: seven commits (one through the editor's scope, one caused by a side effect) and two
/// side effects, one of which fails.
func runScriptedSession(_ store: DemoStore) async throws {
  let editor = store.scope(\.editor, dependencies: \.self)
  try await store.dispatch(Increment())
  try await store.dispatch(AddTodo(title: "milk"))
  try await store.dispatch(AddTodo(title: "bread"))
  try await editor.dispatch(EditDraft(text: "hello"))
  try await store.dispatch(LoadTodos(titles: ["eggs"]))
  try await store.dispatch(ToggleTodo(index: 0))
  try await store.dispatch(Increment())
  do {
    try await store.dispatch(SyncTodos())
  } catch is SyncFailed {
    // Expected: the timeline shows it.
  }
}

/// Prints `{"event":"ready",...}`, then a line for each state the store moves to, with whether it is away from
/// live: what the browser test reads to check that a click moved the store.
func reportStates(_ store: DemoStore, recorder: StoreRecorder<DemoState>, url: String) async throws {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys]
  report("{\"event\":\"ready\",\"url\":\"\(url)\"}")
  for await state in store.states(buffering: .bufferingNewest(16)) {
    let json = String(decoding: try encoder.encode(state), as: UTF8.self)
    report("{\"event\":\"state\",\"awayFromLive\":\(recorder.isAwayFromLive),\"state\":\(json)}")
  }
}

/// Writes `line` to standard output at once (a reader waits for it).
func report(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// A session that goes on until the process stops: to-dos come and go, the editor drafts and saves, a side effect
/// loads to-dos now and then and a sync fails. While the inspector holds the store away from live, the session
/// waits.
func runLoopingSession(_ store: DemoStore, recorder: StoreRecorder<DemoState>, commitsPerSecond: Double) async {
  let editor = store.scope(\.editor, dependencies: \.self)
  // Above 100 commits a second, several steps run between two pauses of 10 ms (a sleep is not finer than that).
  let stepsPerPause = max(1, Int(commitsPerSecond / 100))
  let pause = stepsPerPause > 1 ? Duration.milliseconds(10) : Duration.seconds(1 / commitsPerSecond)
  let words = ["milk", "bread", "eggs", "tea", "rice", "apples", "soap", "coffee"]
  var step = 0
  while true {
    step += 1
    do {
      // The list stays short (at most about 40 to-dos), as an app's would: a session at tens of thousands of commits
      // a second would otherwise grow it by thousands a second, and every state the page shows with it.
      let count = store.state.todos.count
      switch step % 12 {
      case 0 where count < 40:
        try await store.dispatch(LoadTodos(titles: [words[step % words.count], words[(step + 3) % words.count]]))
      case 1 where count < 40, 5 where count < 40: try await store.dispatch(AddTodo(title: words[step % words.count]))
      case 0, 1, 2, 5, 7: try await store.dispatch(ToggleTodo(index: step % max(1, count)))
      case 3: try await editor.dispatch(EditDraft(text: "note \(step)"))
      case 4: try await editor.dispatch(SaveDraft())
      case 9: try await store.dispatch(SyncTodos())
      case 11: try await store.dispatch(ClearDone())
      default: try await store.dispatch(Increment())
      }
    } catch is SyncFailed {
      // Scripted: the timeline shows the failure.
    } catch is TimeTravelError {
      // Time travel refuses dispatches until the page goes back to live (a side effect's dispatches too).
      try? await Task.sleep(for: .milliseconds(250))
      continue
    } catch {
      if recorder.isAwayFromLive { continue }
      report("The demo session stopped: \(error)")
      return
    }
    if step % stepsPerPause == 0 {
      try? await Task.sleep(for: pause)
    }
  }
}
