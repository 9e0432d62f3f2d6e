import KatanaPromises

// Katana 6 README, section "Side Effects", the returning side effect `PurchaseProduct` and the helper
// protocol that hides its context cast.
//
// Stage-1 steps applied:
// - `import Katana`/`import Hydra` -> `import KatanaPromises`;
// - `AnySideEffectContext` -> `any AnySideEffectContext` (needed only with the `ExistentialAny` upcoming
//   feature, which this package turns on; without it the bare name still compiles in Swift 6 mode).
//
// Fixed, because the README's code did not compile in Katana 6 either:
// - `return .storekitRejected(error)` -> `return .failure(.storekitRejected(error))` (the return type is a
//   `Result`);
// - the README's helper protocol could only return `Void` and called `self.sideEffect(context)` without
//   `try`; `AppReturningSideEffect` below returns `ReturnValue`.
// The README leaves `ProductID`, `PurchaseResult`, `PurchaseError`, `Monetization.Validate` and the
// monetization dependency undefined; they are defined here, in Katana 6 style.

extension Stage1 {
  // MIGRATION-SNIPPET-BEGIN: stage1-returning-side-effect
  struct PurchaseProduct: ReturningSideEffect {
    let productID: ProductID

    func sideEffect(_ context: any AnySideEffectContext) throws -> Result<PurchaseResult, PurchaseError> {

      // 0. Get the typed version of the context
      guard let context = context as? SideEffectContext<CounterState, AppDependencies> else {
        fatalError("Invalid context type")
      }

      // 1. purchase the product via storekit
      let storekitResult = context.dependencies.monetization.purchase(self.productID)
      if case .failure(let error) = storekitResult {
        return .failure(.storekitRejected(error))
      }

      // 2. get the receipt
      let receipt = context.dependencies.monetization.getReceipt()

      // 3. validate the receipt
      let validationResult = try Hydra.await(context.dispatch(Monetization.Validate(receipt)))

      // 4. map error
      return
        validationResult
        .map { .init(validation: $0) }
        .mapError { .validationRejected($0) }
    }
  }
  // MIGRATION-SNIPPET-END: stage1-returning-side-effect

  // MIGRATION-SNIPPET-BEGIN: stage1-app-returning-side-effect
  protocol AppReturningSideEffect: ReturningSideEffect {
    func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) throws -> ReturnValue
  }

  // MIGRATION-SNIPPET-END: stage1-app-returning-side-effect
}

// MIGRATION-SNIPPET-BEGIN: stage1-app-returning-side-effect-extension
extension Stage1.AppReturningSideEffect {
  func sideEffect(_ context: any AnySideEffectContext) throws -> ReturnValue {
    guard let context = context as? SideEffectContext<Stage1.CounterState, Stage1.AppDependencies> else {
      fatalError("Invalid context type")
    }

    return try self.sideEffect(context)
  }
}
// MIGRATION-SNIPPET-END: stage1-app-returning-side-effect-extension

extension Stage1 {
  /// A returning side effect written with the helper protocol.
  struct ReadCounter: AppReturningSideEffect {
    typealias ReturnValue = Int

    func sideEffect(_ context: SideEffectContext<CounterState, AppDependencies>) throws -> Int {
      context.getState().counter
    }
  }

  // Supporting types the README does not define.

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
    /// Validates a receipt with the monetization dependency: a Katana 6 returning side effect that blocks in
    /// `Hydra.await`.
    struct Validate: ReturningSideEffect {
      let receipt: Receipt

      init(_ receipt: Receipt) {
        self.receipt = receipt
      }

      func sideEffect(_ context: any AnySideEffectContext) throws -> Result<Validation, ValidationError> {
        guard let context = context as? SideEffectContext<CounterState, AppDependencies> else {
          fatalError("Invalid context type")
        }
        return try Hydra.await(context.dependencies.monetization.validate(receipt))
      }
    }
  }
}
