import Katana
import Testing

/// README.md's example, verbatim between the markers (`.ci/check-readme-example` compares them), so that
/// the README cannot drift from code that compiles and runs.
@Suite("README example")
struct ReadmeExampleTests {
  @Test func readmeExample_compilesAndRuns() async throws {
    // README-EXAMPLE-BEGIN
    struct AppState: State { var todos: [String] = [] }

    struct AddTodo: StateUpdater {
      let title: String
      func updateState(_ state: inout AppState) { state.todos.append(title) }
    }

    let store = Store<AppState, EmptySideEffectDependencyContainer>()
    try await store.dispatch(AddTodo(title: "milk"))  // returns once the change is committed
    print(store.state.todos)  // ["milk"], read synchronously from anywhere
    // README-EXAMPLE-END
    #expect(store.state.todos == ["milk"])
  }
}
