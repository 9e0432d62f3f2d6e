import Catalog
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

let matcha = Product(id: "TEA-MATCHA", name: "Ceremonial matcha", priceInCents: 2_400)
let whisk = Product(id: "KIT-WHISK", name: "Bamboo matcha whisk", priceInCents: 1_500)

/// Why the test doubles fail, in the words the catalog shows.
struct StubFailure: Error, Equatable, CustomStringConvertible {
  let description: String
}

/// A product search that answers from a table, records what it was asked, and fails for the texts it is told
/// to.
final class StubProducts: ProductSearching {
  private let answers: [String: [Product]]
  private let failures: [String: StubFailure]
  private let asked = Locked<[String]>([])

  init(_ answers: [String: [Product]] = [:], failures: [String: StubFailure] = [:]) {
    self.answers = answers
    self.failures = failures
  }

  func search(_ text: String) async throws -> [Product] {
    asked.withLock { $0.append(text) }
    if let failure = failures[text] { throw failure }
    return answers[text] ?? []
  }

  /// The texts searched, in order.
  var searches: [String] { asked.current }
}
