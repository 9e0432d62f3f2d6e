/// The ids the catalog runs work under.
///
/// They are the catalog's own: the store namespaces effect ids by scope, so another feature (or the app)
/// using an equal value never cancels the catalog's search, and the catalog never reaches theirs.
public enum CatalogEffectID: Hashable, Sendable {
  /// The debounced search: a newer keystroke restarts it, clearing the field cancels it.
  case search
}
