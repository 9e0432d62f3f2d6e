import Dispatch
import KatanaPromises

// Katana 6 README, section "Dependencies": the dependency container, with the `APIManager` and
// `monetization` dependencies the side effects above use.
//
// Stage-1 steps applied:
// - `import Katana`/`import Hydra` -> `import KatanaPromises`;
// - the README's `PromisableStoreDispatch` (a name Katana 6 no longer had) -> `AnyDispatch`, Katana 6's and
//   this package's name;
// - the container is `Sendable`: a `final class` of `let` properties of `Sendable` types, so the dependency
//   protocols refine `Sendable`;
// - the container keeps the store's `dispatch` as a `PromiseDispatch`, made with `promiseDispatch(dispatch)`
//   (Katana 6 kept the `AnyDispatch` closure, which returned a promise; `AnyDispatch` is `async` now).
// The memberwise initializer is the one tests use with the store's `dependenciesInitializer` (Katana 6.1).

extension Stage1 {
  /// What the README's `APIManager` does: an API client that returns promises.
  protocol RandomNumberAPI: Sendable {
    func getRandomNumber() -> Promise<Int>
  }

  /// The README's `monetization` dependency: StoreKit and receipt validation.
  protocol MonetizationManager: Sendable {
    func purchase(_ productID: ProductID) -> Result<Void, StoreKitError>
    func getReceipt() -> Receipt
    func validate(_ receipt: Receipt) -> Promise<Result<Validation, ValidationError>>
  }

  // MIGRATION-SNIPPET-BEGIN: stage1-dependencies
  final class AppDependencies: SideEffectDependencyContainer {
    // swift-format-ignore: AlwaysUseLowerCamelCase
    let APIManager: any RandomNumberAPI
    let monetization: any MonetizationManager
    let dispatch: PromiseDispatch

    // swift-format-ignore: AlwaysUseLowerCamelCase
    init(APIManager: any RandomNumberAPI, monetization: any MonetizationManager, dispatch: @escaping AnyDispatch) {
      self.APIManager = APIManager
      self.monetization = monetization
      self.dispatch = promiseDispatch(dispatch)
    }

    required init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
      // initialize your dependencies here
      self.APIManager = LiveAPIManager()
      self.monetization = LiveMonetization()
      self.dispatch = promiseDispatch(dispatch)
    }
  }
  // MIGRATION-SNIPPET-END: stage1-dependencies

  /// A test's store: fakes through the dependencies initializer.
  static func storeWithFakes() -> Store<CounterState, AppDependencies> {
    // MIGRATION-SNIPPET-BEGIN: stage1-dependencies-initializer
    let store = Store<CounterState, AppDependencies>(
      interceptors: [],
      stateInitializer: { CounterState() },
      dependenciesInitializer: { dispatch, _ in
        AppDependencies(APIManager: FakeAPI(number: 42), monetization: FakeMonetization(), dispatch: dispatch)
      },
      configuration: .katana6)
    // MIGRATION-SNIPPET-END: stage1-dependencies-initializer
    return store
  }

  /// Stands in for a network client: answers on a background queue.
  struct LiveAPIManager: RandomNumberAPI {
    func getRandomNumber() -> Promise<Int> {
      Promise(in: .background) { resolve, _, _ in resolve(Int.random(in: 1...100)) }
    }
  }

  /// Stands in for StoreKit: every purchase succeeds, every receipt is valid.
  struct LiveMonetization: MonetizationManager {
    func purchase(_ productID: ProductID) -> Result<Void, StoreKitError> { .success(()) }
    func getReceipt() -> Receipt { Receipt(productID: "unknown") }
    func validate(_ receipt: Receipt) -> Promise<Result<Validation, ValidationError>> {
      Promise(resolved: .success(Validation(receipt: receipt)))
    }
  }
}
