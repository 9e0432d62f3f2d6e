import Foundation
import Katana

/// Searches for the text in the search field once typing pauses for ``CatalogDependencies/searchDelay``.
///
/// The UI sends it after each keystroke's ``SetQuery``. Every call restarts the quiet period under
/// ``CatalogEffectID/search`` and cancels a search already running; the search that finally runs reads the
/// field's text when it starts, so it is for the latest keystroke whichever call it came from. (Side effects
/// sent one after the other start in that order but run concurrently, so nothing here relies on their
/// order.) Results of an older text never replace newer ones: a cancelled search's updaters are withdrawn
/// instead of applied. An empty field cancels the search and clears the results at once.
///
/// - Throws: `CancellationError` when a newer call supersedes this one: send it and forget it from the UI. A
///   failing backend does not throw: the catalog shows a notice instead.
public struct SearchAfterTyping: SideEffect, Equatable {
  /// Creates the item.
  public init() {}

  /// Waits for the quiet period, then searches for the field's text.
  public func sideEffect(_ context: SideEffectContext<CatalogState, CatalogDependencies>) async throws {
    guard !context.getState().searchText.isEmpty else {
      context.cancel(id: CatalogEffectID.search)
      try await context.dispatch(ClearResults())
      return
    }
    try await context.debounce(id: CatalogEffectID.search, for: context.dependencies.searchDelay) {
      let text = context.getState().searchText
      guard !text.isEmpty else {
        try await context.dispatch(ClearResults())
        return
      }
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

extension CatalogState {
  /// The text to search for: the field's, trimmed.
  var searchText: String {
    query.trimmingCharacters(in: .whitespacesAndNewlines)
  }
}

extension ScopedStore where S == CatalogState, D == CatalogDependencies {
  /// The search field changed: sends ``SetQuery`` (the field shows the text) and ``SearchAfterTyping`` (the
  /// search runs once typing pauses), in that order. Call it from the UI for each keystroke, without `await`.
  ///
  /// - Returns: The search's handle: it fails with `CancellationError` if a newer keystroke supersedes it.
  @discardableResult
  public func searchFieldChanged(_ text: String) -> DispatchHandle<Void> {
    send(SetQuery(query: text))
    return send(SearchAfterTyping())
  }
}
