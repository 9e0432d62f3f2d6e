// modular-app: a scripted session on a tea shop built from two feature modules, Catalog and Cart, mounted on
// one Katana store by the app module, ShopApp. It prints what the user does and what each feature shows, then
// what the root store's interceptor saw of the one interaction that crosses the features (adding a product
// from the catalog to the cart). It checks what it prints and exits non-zero on any deviation.

import Cart
import Catalog
import Foundation
import Katana
import ShopApp

/// Counts calls from the store's listeners, which run on the committing thread.
final class Counter: @unchecked Sendable {
  // Sendable: `count` is only touched while holding `lock`.
  private let lock = NSLock()
  private var count = 0

  func increment() {
    lock.lock()
    defer { lock.unlock() }
    count += 1
  }

  var value: Int {
    lock.lock()
    defer { lock.unlock() }
    return count
  }
}

extension Result {
  /// Whether this is a failure with `CancellationError`.
  var isCancelled: Bool {
    if case .failure(let error) = self { return error is CancellationError }
    return false
  }
}

func say(_ line: String) {
  print("   \(line)")
}

func step(_ title: String) {
  print("\n> \(title)")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
  guard !condition else { return }
  fflush(nil)  // every stream: the session so far, before the failure
  FileHandle.standardError.write(Data("\nmodular-app FAILED: \(message())\n".utf8))
  exit(1)
}

func money(_ cents: Int) -> String {
  let remainder = cents % 100
  return "\(cents / 100).\(remainder < 10 ? "0" : "")\(remainder)"
}

func showCart(_ cart: CartState) {
  if cart.lines.isEmpty {
    say("cart: empty")
  }
  for line in cart.lines {
    say("cart: \(line.quantity) x \(line.name)  \(money(line.totalInCents))")
  }
  if !cart.lines.isEmpty {
    say("cart: total \(money(cart.totalInCents))")
  }
}

print("modular-app: a tea shop on one Katana store, built from two feature modules (Catalog and Cart)")

let backend = ShopBackend(latency: .milliseconds(20))
let shop = Shop(backend: backend, searchDelay: .milliseconds(300))

// Two screens, each observing its own feature: a listener on a scope is only called when its slice changes.
let catalogRenders = Counter()
let cartRenders = Counter()
let stopCatalog = shop.catalog.addListener { _, _ in catalogRenders.increment() }
let stopCart = shop.cart.addListener { _, _ in cartRenders.increment() }

step("type \"m\", \"ma\", \"mat\" in the search field, faster than the catalog's 300 ms quiet period")
let keystrokes = ["m", "ma", "mat"].map { shop.catalog.searchFieldChanged($0) }
var outcomes: [Result<Void, any Error>] = []
for keystroke in keystrokes {
  outcomes.append(await keystroke.result)
}
// Each keystroke restarted the quiet period: one search ran (for the field's text then), two were superseded.
check(outcomes.filter(\.isCancelled).count == 2, "keystrokes' searches: \(outcomes)")
let results = shop.catalog.state.results
say("the backend ran one search: \(backend.searches)")
for product in results {
  say("catalog: \(product.name)  \(money(product.priceInCents))")
}
check(backend.searches == ["mat"], "searches: \(backend.searches)")
check(results.map(\.id) == ["TEA-MATCHA", "KIT-WHISK"], "results: \(results.map(\.id))")

step("tap \"Add to cart\" on Bamboo matcha whisk: the catalog hands it to the app, which adds it through the cart")
shop.activity.clear()
try await shop.catalog.dispatch(AddProductToCart(productID: "KIT-WHISK"))
say("catalog: \(shop.catalog.state.notice.map { "\($0)" } ?? "no notice")")
showCart(shop.cart.state)
let crossing = shop.activity.all
check(shop.cart.state.line("KIT-WHISK")?.quantity == 1, "the whisk is not in the cart")
check(shop.catalog.state.adding.isEmpty, "the catalog still shows an add in progress")

step("tap \"Add to cart\" on Ceremonial matcha, which is out of stock")
do {
  try await shop.catalog.dispatch(AddProductToCart(productID: "TEA-MATCHA"))
  check(false, "adding an out-of-stock product succeeded")
} catch let error as CartError {
  say("the catalog's dispatch threw the cart's own error, back through the app: CartError \"\(error)\"")
  check(error == .outOfStock(name: "Ceremonial matcha", available: 0), "error: \(error)")
}
say("catalog: \(shop.catalog.state.notice.map { "\($0)" } ?? "no notice")")
showCart(shop.cart.state)
check(shop.cart.state.itemCount == 1, "the cart changed: \(shop.cart.state.lines)")

step("search \"sencha\", then tap \"Add to cart\" twice")
try await shop.catalog.searchFieldChanged("sencha").value
let taps = [
  shop.catalog.send(AddProductToCart(productID: "TEA-SENCHA")),
  shop.catalog.send(AddProductToCart(productID: "TEA-SENCHA")),
]
for tap in taps {
  try await tap.value
}
showCart(shop.cart.state)
check(shop.cart.state.line("TEA-SENCHA")?.quantity == 2, "sencha in the cart: \(shop.cart.state.lines)")

step("check out")
try await shop.cart.dispatch(Checkout())
if case .placed(let order) = shop.cart.state.checkout {
  say("order \(order.number) placed: \(money(order.totalInCents))")
}
showCart(shop.cart.state)
check(backend.orders == [OrderConfirmation(number: "A-1001", totalInCents: 2_800)], "orders: \(backend.orders)")

print("\nWhat the root store's interceptor saw of the first \"Add to cart\", in order:")
for entry in crossing {
  print("   \(shop.feature(of: entry.scope).padding(toLength: 8, withPad: " ", startingAt: 0)) \(entry.item)")
}
check(
  crossing.map { "\(shop.feature(of: $0.scope)) \($0.type)" } == [
    "catalog AddProductToCart", "catalog StartAdding", "app AddCatalogProductToCart", "cart AddItem",
    "cart InsertItem", "catalog FinishAdding",
  ], "the crossing: \(crossing)")

stopCatalog()
stopCart()
print(
  "\nThe cart's listener ran \(cartRenders.value) times and the catalog's \(catalogRenders.value) times: each "
    + "only for commits that changed its own feature.")
check(cartRenders.value == 5, "cart renders: \(cartRenders.value)")
await shop.store.shutdown()
