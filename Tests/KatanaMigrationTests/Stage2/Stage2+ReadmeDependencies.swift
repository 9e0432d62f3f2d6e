import Katana

// Katana 6 README, section "Dependencies", after stage 2: the dependencies are `async`, and the container
// keeps the store's `dispatch` as it receives it (`AnyDispatch`, an async function) instead of wrapping it
// in `promiseDispatch`.

extension Stage2 {
  protocol RandomNumberAPI: Sendable {
    func getRandomNumber() async throws -> Int
  }

  protocol MonetizationManager: Sendable {
    func purchase(_ productID: ProductID) async -> Result<Void, StoreKitError>
    func getReceipt() async -> Receipt
    func validate(_ receipt: Receipt) async throws -> Result<Validation, ValidationError>
  }

  // MIGRATION-SNIPPET-BEGIN: stage2-dependencies
  final class AppDependencies: SideEffectDependencyContainer {
    // swift-format-ignore: AlwaysUseLowerCamelCase
    let APIManager: any RandomNumberAPI
    let monetization: any MonetizationManager
    let dispatch: AnyDispatch

    // swift-format-ignore: AlwaysUseLowerCamelCase
    init(APIManager: any RandomNumberAPI, monetization: any MonetizationManager, dispatch: @escaping AnyDispatch) {
      self.APIManager = APIManager
      self.monetization = monetization
      self.dispatch = dispatch
    }

    required init(dispatch: @escaping AnyDispatch, getState: @escaping GetState) {
      // initialize your dependencies here
      self.APIManager = LiveAPIManager()
      self.monetization = LiveMonetization()
      self.dispatch = dispatch
    }
  }
  // MIGRATION-SNIPPET-END: stage2-dependencies

  /// Stands in for a network client.
  struct LiveAPIManager: RandomNumberAPI {
    func getRandomNumber() async throws -> Int {
      Int.random(in: 1...100)
    }
  }

  /// Stands in for StoreKit: every purchase succeeds, every receipt is valid.
  struct LiveMonetization: MonetizationManager {
    func purchase(_ productID: ProductID) async -> Result<Void, StoreKitError> { .success(()) }
    func getReceipt() async -> Receipt { Receipt(productID: "unknown") }
    func validate(_ receipt: Receipt) async throws -> Result<Validation, ValidationError> {
      .success(Validation(receipt: receipt))
    }
  }
}
