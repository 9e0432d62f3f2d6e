import Katana

/// The catalog's state: the search field, its results, and the products on their way to the cart.
///
/// The app keeps it at a field of its own state and mounts the feature there; the catalog never sees the rest.
/// It is `Equatable`, so that observers of the catalog's scope are not called for changes elsewhere (the cart's).
public struct CatalogState: State, Equatable {
  /// What the user typed in the search field.
  public var query = ""
  /// The products the latest completed search found.
  public var results: [Product] = []
  /// The search text `results` belong to ("" before any search, and after the field is cleared).
  public var resultsQuery = ""
  /// Whether a search is running (the quiet period is over, the backend has not answered yet).
  public var isSearching = false
  /// Products being added to the cart, with the number of adds in flight for each: their buttons show
  /// progress. Tapping twice adds two.
  public var adding: [Product.ID: Int] = [:]
  /// What the catalog tells the user last: a product added to the cart, or what went wrong.
  public var notice: CatalogNotice?

  /// An empty catalog: nothing searched yet.
  public init() {}

  /// A catalog showing `results` for `query`, as a completed search leaves it.
  public init(query: String, results: [Product]) {
    self.query = query
    self.resultsQuery = query
    self.results = results
  }
}

/// What the catalog tells the user, under the search field.
public enum CatalogNotice: Sendable, Equatable, CustomStringConvertible {
  /// The product is in the cart now.
  case added(productName: String)
  /// The product could not be added; `reason` says why (out of stock, for example).
  case couldNotAdd(productName: String, reason: String)
  /// The search for `query` failed.
  case searchFailed(query: String, reason: String)

  /// The message shown to the user.
  public var description: String {
    switch self {
    case .added(let name): "\(name) is in your cart."
    case .couldNotAdd(let name, let reason): "\(name) could not be added: \(reason)."
    case .searchFailed(let query, let reason): "The search for \"\(query)\" failed: \(reason)."
    }
  }
}
