import Katana

// Katana 6 README, section "Side Effects", the returning side effect and its helper protocol, after stage
// 2: `async throws`, `context.typed(_:_:)` instead of a cast and `fatalError`, `try await` instead of
// `Hydra.await`.

extension Stage2 {
  // MIGRATION-SNIPPET-BEGIN: stage2-returning-side-effect
  struct PurchaseProduct: ReturningSideEffect {
    let productID: ProductID

    func sideEffect(_ context: any AnySideEffectContext) async throws -> Result<PurchaseResult, PurchaseError> {

      // 0. Get the typed version of the context (throws StoreError.wrongContextType in another store)
      let context = try context.typed(CounterState.self, AppDependencies.self)

      // 1. purchase the product via storekit
      let storekitResult = await context.dependencies.monetization.purchase(self.productID)
      if case .failure(let error) = storekitResult {
        return .failure(.storekitRejected(error))
      }

      // 2. get the receipt
      let receipt = await context.dependencies.monetization.getReceipt()

      // 3. validate the receipt
      let validationResult = try await context.dispatch(Monetization.Validate(receipt))

      // 4. map error
      return
        validationResult
        .map { .init(validation: $0) }
        .mapError { .validationRejected($0) }
    }
  }
  // MIGRATION-SNIPPET-END: stage2-returning-side-effect

  // MIGRATION-SNIPPET-BEGIN: stage2-app-returning-side-effect
  protocol AppReturningSideEffect: ReturningSideEffect {
    func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) async throws -> ReturnValue
  }

  // MIGRATION-SNIPPET-END: stage2-app-returning-side-effect
}

// MIGRATION-SNIPPET-BEGIN: stage2-app-returning-side-effect-extension
extension Stage2.AppReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) async throws -> ReturnValue {
    try await self.sideEffect(context.typed(Stage2.CounterState.self, Stage2.AppDependencies.self))
  }
}
// MIGRATION-SNIPPET-END: stage2-app-returning-side-effect-extension

extension Stage2 {
  /// A returning side effect written with the helper protocol.
  struct ReadCounter: AppReturningSideEffect {
    typealias ReturnValue = Int

    func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) async throws -> Int {
      context.getState().counter
    }
  }

  typealias ProductID = String

  struct Receipt: Sendable, Equatable {
    let productID: ProductID
  }

  struct Validation: Sendable, Equatable {
    let receipt: Receipt
  }

  struct PurchaseResult: Sendable, Equatable {
    let validation: Validation
  }

  struct StoreKitError: Error, Equatable {
    let reason: String
  }

  struct ValidationError: Error, Equatable {
    let reason: String
  }

  enum PurchaseError: Error, Equatable {
    case storekitRejected(StoreKitError)
    case validationRejected(ValidationError)
  }

  enum Monetization {
    /// Validates a receipt with the monetization dependency.
    struct Validate: ReturningSideEffect {
      let receipt: Receipt

      init(_ receipt: Receipt) {
        self.receipt = receipt
      }

      func sideEffect(_ context: any AnySideEffectContext) async throws -> Result<Validation, ValidationError> {
        let context = try context.typed(CounterState.self, AppDependencies.self)
        return try await context.dependencies.monetization.validate(receipt)
      }
    }
  }
}
