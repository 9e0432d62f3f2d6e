import Foundation
import Katana

/// The user typed in the search field: the text shows at once, and the catalog searches once typing pauses
/// for ``CatalogDependencies/searchDelay``.
///
/// Every keystroke restarts the quiet period under ``CatalogEffectID/search``, and cancels a search already
/// running: results of an older text never replace newer ones, because a cancelled search's updaters are
/// withdrawn instead of applied. Clearing the field cancels the search and clears the results.
///
/// - Throws: `CancellationError` when a newer keystroke (or a cleared field) supersedes this one: send it
///   and forget it from the UI. A failing backend does not throw: the catalog shows a notice instead.
public struct SearchQueryChanged: SideEffect, Equatable {
  /// The field's new text.
  public let query: String

  /// Creates the item.
  public init(query: String) {
    self.query = query
  }

  /// Shows the text, then searches after the quiet period.
  public func sideEffect(_ context: SideEffectContext<CatalogState, CatalogDependencies>) async throws {
    try await context.dispatch(SetQuery(query: query))
    let text = query.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !text.isEmpty else {
      context.cancel(id: CatalogEffectID.search)
      try await context.dispatch(ClearResults())
      return
    }
    try await context.debounce(id: CatalogEffectID.search, for: context.dependencies.searchDelay) {
      try await context.dispatch(StartSearch())
      let products: [Product]
      do {
        products = try await context.dependencies.products.search(text)
      } catch  where !(error is CancellationError) {
        try await context.dispatch(FailSearch(query: text, reason: "\(error)"))
        return
      }
      try await context.dispatch(ShowResults(query: text, products: products))
    }
  }
}
