import Cart
import Foundation

/// A value guarded by a lock, for what the test doubles record from the store's tasks.
final class Locked<Value>: @unchecked Sendable {
  // Sendable: `value` is only touched while holding `lock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) {
    self.value = value
  }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }

  var current: Value {
    withLock { $0 }
  }
}

let sencha = CartItem(sku: "TEA-SENCHA", name: "Sencha green tea", unitPriceInCents: 650)
let whisk = CartItem(sku: "KIT-WHISK", name: "Bamboo matcha whisk", unitPriceInCents: 1_500)

/// Why the test doubles fail.
struct StubFailure: Error, Equatable, CustomStringConvertible {
  let description: String
}

/// A stock of a few SKUs, recording the reservations it grants.
final class StubInventory: Inventory {
  private let stock: Locked<[String: Int]>
  private let granted = Locked<[String]>([])

  init(_ stock: [String: Int]) {
    self.stock = Locked(stock)
  }

  func reserve(_ quantity: Int, of sku: String) async throws {
    try stock.withLock { stock in
      let available = stock[sku] ?? 0
      guard available >= quantity else { throw InventoryError.insufficientStock(available: available) }
      stock[sku] = available - quantity
    }
    granted.withLock { $0.append("\(quantity) x \(sku)") }
  }

  /// The reservations granted, in order ("2 x TEA-SENCHA").
  var reservations: [String] { granted.current }
}

/// An order service that confirms (or fails) every order, after `delay` on `clock`, and records the orders.
final class StubOrders: OrderPlacing {
  private let failure: StubFailure?
  private let delay: Duration
  private let clock: any Clock<Duration>
  private let placed = Locked<[[CartLine]]>([])

  init(failure: StubFailure? = nil, delay: Duration = .zero, clock: any Clock<Duration> = ContinuousClock()) {
    self.failure = failure
    self.delay = delay
    self.clock = clock
  }

  func placeOrder(_ lines: [CartLine]) async throws -> OrderConfirmation {
    if delay > .zero {
      try await clock.sleep(for: delay)
    }
    if let failure { throw failure }
    placed.withLock { $0.append(lines) }
    return OrderConfirmation(number: "T-1", totalInCents: lines.reduce(0) { $0 + $1.totalInCents })
  }

  /// The orders placed, in order.
  var orders: [[CartLine]] { placed.current }
}
