import Catalog
import Foundation
import Katana
import ShopApp

/// A value guarded by a lock, for what listeners record from the committing threads.
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

/// The demo backend's product with this SKU.
func product(_ sku: String) -> Product {
  ShopBackend.demoListings.first { $0.product.id == sku }!.product
}

let matcha = product("TEA-MATCHA")
let whisk = product("KIT-WHISK")
let sencha = product("TEA-SENCHA")

/// An app whose catalog shows the results of a search for "mat" (the matcha and the whisk).
func shopShowingMatcha(backend: ShopBackend = ShopBackend(), clock: any Clock<Duration> = ContinuousClock())
  async throws
  -> Shop
{
  let shop = Shop(
    initialState: AppState(catalog: CatalogState(query: "mat", results: [matcha, whisk])), backend: backend,
    clock: clock)
  try await shop.store.waitUntilReady()
  return shop
}
