import Cart
import Catalog

/// The shop's backend, in memory: its products, its stock and its orders.
///
/// It stands in for the network services of a real app, so that the example runs anywhere, at once, and the
/// same way every time. It implements both features' ports (``Catalog/ProductSearching`` for the catalog,
/// ``Cart/Inventory`` and ``Cart/OrderPlacing`` for the cart): the app is where the features' needs meet the
/// services that answer them. Each call takes `latency` on the clock it is given (the store's, so that tests
/// control it).
public final class ShopBackend: ProductSearching, Inventory, OrderPlacing {
  /// A product on sale and how many units are in stock.
  public struct Listing: Sendable {
    /// The product.
    public let product: Product
    /// Units in stock.
    public let stock: Int

    /// Creates a listing.
    public init(_ product: Product, stock: Int) {
      self.product = product
      self.stock = stock
    }
  }

  private struct Records {
    var stock: [String: Int]
    var searches: [String] = []
    var reservations: [String] = []
    var orders: [OrderConfirmation] = []
  }

  private let listings: [Listing]
  private let records: Locked<Records>
  private let latency: Duration
  private let clock: any Clock<Duration>

  /// Creates a backend selling `listings`.
  ///
  /// - Parameters:
  ///   - listings: What the shop sells; ``demoListings`` by default.
  ///   - latency: How long each call takes, on `clock`.
  ///   - clock: The clock calls take their latency on: give it the store's.
  public init(
    listings: [Listing] = ShopBackend.demoListings, latency: Duration = .zero,
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.listings = listings
    self.records = Locked(
      Records(stock: Dictionary(listings.map { ($0.product.id, $0.stock) }, uniquingKeysWith: +)))
    self.latency = latency
    self.clock = clock
  }

  /// A tea shop.
  public static let demoListings: [Listing] = [
    Listing(Product(id: "TEA-SENCHA", name: "Sencha green tea", priceInCents: 650), stock: 10),
    Listing(Product(id: "TEA-GENMAI", name: "Genmaicha", priceInCents: 550), stock: 5),
    Listing(Product(id: "TEA-MATCHA", name: "Ceremonial matcha", priceInCents: 2_400), stock: 0),
    Listing(Product(id: "TEA-EARLGREY", name: "Earl Grey", priceInCents: 500), stock: 8),
    Listing(Product(id: "KIT-KYUSU", name: "Kyusu teapot", priceInCents: 3_800), stock: 2),
    Listing(Product(id: "KIT-WHISK", name: "Bamboo matcha whisk", priceInCents: 1_500), stock: 3),
  ]

  // MARK: - ProductSearching

  /// The products whose name contains `text`, ignoring case.
  public func search(_ text: String) async throws -> [Product] {
    records.withLock { $0.searches.append(text) }
    try await wait()
    let needle = text.lowercased()
    return listings.map(\.product).filter { $0.name.lowercased().contains(needle) }
  }

  // MARK: - Inventory

  /// Takes `quantity` units of `sku` out of the stock, or throws if fewer are left.
  public func reserve(_ quantity: Int, of sku: String) async throws {
    try await wait()
    try records.withLock { records in
      let available = records.stock[sku] ?? 0
      guard available >= quantity else { throw InventoryError.insufficientStock(available: available) }
      records.stock[sku] = available - quantity
      records.reservations.append("\(quantity) x \(sku)")
    }
  }

  // MARK: - OrderPlacing

  /// Places an order for units the cart reserved; numbers orders from A-1001.
  public func placeOrder(_ lines: [CartLine]) async throws -> OrderConfirmation {
    try await wait()
    return records.withLock { records in
      let order = OrderConfirmation(
        number: "A-\(1_001 + records.orders.count)", totalInCents: lines.reduce(0) { $0 + $1.totalInCents })
      records.orders.append(order)
      return order
    }
  }

  // MARK: - What happened

  /// The searches the backend ran, in order.
  public var searches: [String] { records.withLock { $0.searches } }
  /// The reservations it granted, in order ("1 x TEA-SENCHA").
  public var reservations: [String] { records.withLock { $0.reservations } }
  /// The orders it placed, in order.
  public var orders: [OrderConfirmation] { records.withLock { $0.orders } }
  /// Units of `sku` left in stock.
  public func stock(of sku: String) -> Int { records.withLock { $0.stock[sku] ?? 0 } }

  private func wait() async throws {
    if latency > .zero {
      try await clock.sleep(for: latency)
    }
  }
}
