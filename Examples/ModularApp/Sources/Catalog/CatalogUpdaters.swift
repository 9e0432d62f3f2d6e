import Katana

// The only ways the catalog's state changes: pure, synchronous, in place. The side effects dispatch the
// internal ones; the app's UI sends `SetQuery` and `DismissCatalogNotice`.

/// The search field's text changed: shows it. Send it from the UI for each keystroke, then
/// ``SearchAfterTyping`` (or call `searchFieldChanged(_:)` on the catalog's scope, which sends both).
///
/// The text is a state updater, not part of a side effect, because updaters sent one after the other apply in
/// that order: the field always ends with the last keystroke's text.
public struct SetQuery: StateUpdater, Equatable {
  /// The field's new text.
  public let query: String

  /// Creates the item.
  public init(query: String) {
    self.query = query
  }

  /// Shows the text.
  public func updateState(_ state: inout CatalogState) {
    state.query = query
  }
}

/// The quiet period is over: the search starts.
struct StartSearch: StateUpdater, Equatable {
  func updateState(_ state: inout CatalogState) {
    state.isSearching = true
  }
}

/// The search for `query` answered; a notice that an earlier search failed goes away.
struct ShowResults: StateUpdater, Equatable {
  let query: String
  let products: [Product]
  func updateState(_ state: inout CatalogState) {
    state.isSearching = false
    state.resultsQuery = query
    state.results = products
    if case .searchFailed = state.notice {
      state.notice = nil
    }
  }
}

/// The search for `query` failed: the previous results stay, with a notice.
struct FailSearch: StateUpdater, Equatable {
  let query: String
  let reason: String
  func updateState(_ state: inout CatalogState) {
    state.isSearching = false
    state.notice = .searchFailed(query: query, reason: reason)
  }
}

/// The field was cleared: no search, no results.
struct ClearResults: StateUpdater, Equatable {
  func updateState(_ state: inout CatalogState) {
    state.isSearching = false
    state.resultsQuery = ""
    state.results = []
  }
}

/// One more add of `productID` is in flight.
struct StartAdding: StateUpdater, Equatable {
  let productID: Product.ID
  func updateState(_ state: inout CatalogState) {
    state.adding[productID, default: 0] += 1
  }
}

/// An add of `product` ended: `failure` is nil if the product is in the cart, or the reason it is not.
struct FinishAdding: StateUpdater, Equatable {
  let product: Product
  let failure: String?
  func updateState(_ state: inout CatalogState) {
    let remaining = (state.adding[product.id] ?? 1) - 1
    state.adding[product.id] = remaining > 0 ? remaining : nil
    if let failure {
      state.notice = .couldNotAdd(productName: product.name, reason: failure)
    } else {
      state.notice = .added(productName: product.name)
    }
  }
}

/// The user dismissed the notice.
public struct DismissCatalogNotice: StateUpdater, Equatable {
  /// Creates the item.
  public init() {}

  /// Removes the notice.
  public func updateState(_ state: inout CatalogState) {
    state.notice = nil
  }
}
