import KatanaPromises
import KatanaTestSupport

extension Stage1 {
  /// An `APIManager` that answers `number`.
  struct FakeAPI: RandomNumberAPI {
    let number: Int

    func getRandomNumber() -> Promise<Int> {
      Promise(in: .background) { resolve, _, _ in resolve(number) }
    }
  }

  /// A monetization dependency whose purchase and validation outcomes the test chooses.
  struct FakeMonetization: MonetizationManager {
    var purchaseError: StoreKitError?
    var validationError: ValidationError?

    func purchase(_ productID: ProductID) -> Result<Void, StoreKitError> {
      purchaseError.map { .failure($0) } ?? .success(())
    }

    func getReceipt() -> Receipt {
      Receipt(productID: "pro")
    }

    func validate(_ receipt: Receipt) -> Promise<Result<Validation, ValidationError>> {
      Promise(in: .background) { resolve, _, _ in
        resolve(validationError.map { .failure($0) } ?? .success(Validation(receipt: receipt)))
      }
    }
  }

  /// Records tracked events.
  final class RecordingTracker: Tracker {
    let events = LockedValue<[String]>([])

    func track(_ event: String) {
      events.withLock { $0.append(event) }
    }
  }

  /// A Katana 6 test's store: fakes through the dependencies initializer, Katana 6's configuration.
  static func testStore(
    number: Int = 42, monetization: FakeMonetization = FakeMonetization(), interceptors: [StoreInterceptor] = []
  ) -> Store<CounterState, AppDependencies> {
    Store<CounterState, AppDependencies>(
      interceptors: interceptors,
      stateInitializer: { CounterState() },
      dependenciesInitializer: { dispatch, _ in
        AppDependencies(APIManager: FakeAPI(number: number), monetization: monetization, dispatch: dispatch)
      },
      configuration: .katana6)
  }
}

extension Stage2 {
  /// An `APIManager` that answers `number`.
  struct FakeAPI: RandomNumberAPI {
    let number: Int

    func getRandomNumber() async throws -> Int { number }
  }

  /// A monetization dependency whose purchase and validation outcomes the test chooses.
  struct FakeMonetization: MonetizationManager {
    var purchaseError: StoreKitError?
    var validationError: ValidationError?

    func purchase(_ productID: ProductID) async -> Result<Void, StoreKitError> {
      purchaseError.map { .failure($0) } ?? .success(())
    }

    func getReceipt() async -> Receipt {
      Receipt(productID: "pro")
    }

    func validate(_ receipt: Receipt) async throws -> Result<Validation, ValidationError> {
      validationError.map { .failure($0) } ?? .success(Validation(receipt: receipt))
    }
  }

  /// Records tracked events.
  final class RecordingTracker: Tracker {
    let events = LockedValue<[String]>([])

    func track(_ event: String) {
      events.withLock { $0.append(event) }
    }
  }

  /// A store with fakes, through the dependencies initializer.
  static func testStore(
    number: Int = 42, monetization: FakeMonetization = FakeMonetization(), interceptors: [StoreInterceptor] = []
  ) -> Store<CounterState, AppDependencies> {
    Store<CounterState, AppDependencies>(
      interceptors: interceptors,
      stateInitializer: { CounterState() },
      dependenciesInitializer: { dispatch, _ in
        AppDependencies(APIManager: FakeAPI(number: number), monetization: monetization, dispatch: dispatch)
      })
  }
}
