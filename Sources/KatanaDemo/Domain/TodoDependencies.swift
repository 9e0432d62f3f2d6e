import Katana

/// What the service's side effects may use: the remote API. The store builds it once and hands the same
/// instance to every side effect; each step of the tour injects its own fake.
final class TodoDependencies: SideEffectDependencyContainer {
  let api: FakeRemoteAPI

  init(api: FakeRemoteAPI) {
    self.api = api
  }

  init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
    api = FakeRemoteAPI()
  }
}

typealias TodoStore = Store<TodoState, TodoDependencies>

/// A store of the demo's service on `api`, starting empty, with the given interceptors and clock.
func makeTodoStore(
  api: FakeRemoteAPI, interceptors: [StoreInterceptor] = [], clock: any Clock<Duration> = ContinuousClock()
) -> TodoStore {
  TodoStore(
    interceptors: interceptors,
    stateInitializer: { TodoState() },
    dependenciesInitializer: { _, _ in TodoDependencies(api: api) },
    configuration: StoreConfiguration(clock: clock))
}
