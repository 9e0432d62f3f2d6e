import Katana
import Testing

// The Swift blocks of the "Dependencies" section of the "Side effects" article
// (Sources/Katana/Katana.docc/SideEffects.md), compiled and run: .ci/check-article-snippets keeps them identical
// to the code between the markers here, and compiles this file with its tests nonisolated and `@MainActor`.
// The store's `dependenciesInitializer` is a `sending` parameter: before it was, the second block did not
// compile from the main actor ("sending value of non-Sendable type ... risks causing data races").

@Suite("Side effects article: dependencies", .timeLimit(.minutes(3)))
struct SideEffectsArticle {
  @Test func aContainerBuiltBeforehand() async throws {
    // ARTICLE-SNIPPET-BEGIN: container-built-beforehand
    let store = Store(initialState: AppState(), dependencies: AppDependencies(api: FakeTodoAPI()))
    // ARTICLE-SNIPPET-END: container-built-beforehand
    try await store.dispatch(LoadTodos())
    #expect(store.state.todos == ["milk"])
  }

  @MainActor @Test func aContainerThatDispatches_fromTheMainActor() async throws {
    // ARTICLE-SNIPPET-BEGIN: dependencies-initializer
    let store = Store<AppState, AppDependencies>(
      stateInitializer: { AppState() },
      dependenciesInitializer: { dispatch, _ in AppDependencies(api: FakeTodoAPI(), dispatch: dispatch) })
    // ARTICLE-SNIPPET-END: dependencies-initializer
    try await store.dependencies.reload()
    #expect(store.state.todos == ["milk"])
  }

  @Test func aContainerThatDispatches_nonisolated() async throws {
    let store = Store<AppState, AppDependencies>(
      stateInitializer: { AppState() },
      dependenciesInitializer: { dispatch, _ in AppDependencies(api: FakeTodoAPI(), dispatch: dispatch) })
    try await store.dependencies.reload()
    #expect(store.state.todos == ["milk"])
  }

  @Test func aDependenciesInitializer_mayStillMutateWhatItCaptures() async throws {
    // Katana 6 code captures and sets local variables in it (a `@Sendable` closure could not).
    var built = 0
    let store = Store<AppState, AppDependencies>(
      stateInitializer: { AppState() },
      dependenciesInitializer: { dispatch, _ in
        built += 1
        return AppDependencies(api: FakeTodoAPI(), dispatch: dispatch)
      })
    #expect(built == 1)
    try await store.waitUntilReady()
  }
}

extension SideEffectsArticle {
  struct AppState: State, Equatable {
    var todos: [String] = []
  }

  protocol TodoAPI: Sendable {
    func fetchTodos() async throws -> [String]
  }

  struct FakeTodoAPI: TodoAPI {
    func fetchTodos() async throws -> [String] { ["milk"] }
  }

  struct SetTodos: StateUpdater {
    let todos: [String]
    func updateState(_ state: inout AppState) { state.todos = todos }
  }

  struct LoadTodos: SideEffect {
    func sideEffect(_ context: SideEffectContext<AppState, AppDependencies>) async throws {
      try await context.dispatch(SetTodos(todos: try await context.dependencies.api.fetchTodos()))
    }
  }

  final class AppDependencies: SideEffectDependencyContainer {
    let api: any TodoAPI
    private let dispatch: AnyDispatch?

    init(api: any TodoAPI, dispatch: AnyDispatch? = nil) {
      self.api = api
      self.dispatch = dispatch
    }

    convenience init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
      self.init(api: FakeTodoAPI(), dispatch: dispatch)
    }

    /// Reloads through the store's `dispatch`, as a container that reacts to outside events does.
    func reload() async throws {
      _ = try await dispatch?(LoadTodos())
    }
  }
}
