import Katana
import Testing

/// The Store's documentation shows helpers in an extension of `Store`, marked `nonisolated` and
/// `nonisolated(nonsending)`; this compiles that pattern and checks that it behaves as the store's own API:
/// a synchronous helper is callable from synchronous code, an async one dispatches on its caller's executor.
@Suite("Store: helpers in extensions")
struct StoreExtensionHelpersTests {
  struct Account: State, Equatable {
    var user: String?
  }

  struct SignIn: StateUpdater {
    let name: String
    func updateState(_ state: inout Account) { state.user = name }
  }

  final class NoDependencies: SideEffectDependencyContainer {
    init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {}
  }

  /// Synchronous code: no `await`, no hop.
  static func greeting(of store: Store<Account, NoDependencies>) -> String {
    "Hello, \(store.userName ?? "guest")"
  }

  @Test @MainActor func nonisolatedHelpers_areCalledLikeTheStoresOwnAPI() async throws {
    let store = Store<Account, NoDependencies>(stateInitializer: { Account() })
    try await store.waitUntilReady()
    #expect(Self.greeting(of: store) == "Hello, guest")
    let name = try await store.signIn("ada")
    // A `nonisolated(nonsending)` helper runs on its caller's executor: still the main actor here.
    MainActor.assertIsolated()
    #expect(name == "ada")
    #expect(Self.greeting(of: store) == "Hello, ada")
    await store.shutdown()
  }
}

extension Store where S == StoreExtensionHelpersTests.Account, D == StoreExtensionHelpersTests.NoDependencies {
  nonisolated var userName: String? { state.user }

  nonisolated(nonsending) func signIn(_ name: String) async throws -> String? {
    try await dispatch(StoreExtensionHelpersTests.SignIn(name: name))
    return state.user
  }
}
