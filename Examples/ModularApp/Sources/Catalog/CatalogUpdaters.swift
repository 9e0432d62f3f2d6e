import Katana

// The only ways the catalog's state changes: pure, synchronous, in place. The side effects dispatch all but
// the last; the app's UI may dispatch `DismissCatalogNotice`.

/// Shows what the user typed.
struct SetQuery: StateUpdater, Equatable {
  let query: String
  func updateState(_ state: inout CatalogState) {
    state.query = query
  }
}

/// The quiet period is over: the search starts.
struct StartSearch: StateUpdater, Equatable {
  func updateState(_ state: inout CatalogState) {
    state.isSearching = true
  }
}

/// The search for `query` answered.
struct ShowResults: StateUpdater, Equatable {
  let query: String
  let products: [Product]
  func updateState(_ state: inout CatalogState) {
    state.isSearching = false
    state.resultsQuery = query
    state.results = products
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
