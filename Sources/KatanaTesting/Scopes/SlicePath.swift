import Katana

/// How a scope of a test store reaches its slice inside the root state: to read the slice of a recorded state,
/// and to apply the test's expected mutation, written against the slice, to the whole state.
///
/// It follows the key paths the scope was mounted at, as the store's own scopes do (an element by its id, an
/// optional child while it is there), and throws the store's `ScopeError` where the slice is missing.
struct SlicePath<Root, Slice>: @unchecked Sendable {
  // Sendable: the closures only capture key paths (immutable), ids made from Sendable values, and other paths.

  /// Runs `body` on the slice inside `root`.
  ///
  /// - Throws: `ScopeError` if the slice is missing (`body` does not run and nothing changes).
  let modify: (inout Root, (inout Slice) throws -> Void) throws -> Void
  /// The slice inside `root`, or nil if it is missing.
  let read: (Root) -> Slice?

  /// The whole state.
  static func identity() -> SlicePath<Root, Root> {
    SlicePath<Root, Root>(modify: { root, body in try body(&root) }, read: { $0 })
  }

  /// The field at `keyPath` of this path's slice.
  func appending<Child>(_ keyPath: WritableKeyPath<Slice, Child>) -> SlicePath<Root, Child> {
    let modify = self.modify
    let read = self.read
    return SlicePath<Root, Child>(
      modify: { root, body in try modify(&root) { slice in try body(&slice[keyPath: keyPath]) } },
      read: { root in read(root).map { $0[keyPath: keyPath] } })
  }

  /// The value of the optional child at `keyPath` of this path's slice; `scope` names it in the error.
  func appending<Child>(optional keyPath: WritableKeyPath<Slice, Child?>, scope: ScopeID) -> SlicePath<Root, Child> {
    let modify = self.modify
    let read = self.read
    return SlicePath<Root, Child>(
      modify: { root, body in
        try modify(&root) { slice in
          guard slice[keyPath: keyPath] != nil else { throw ScopeError.missingChild(scope) }
          try body(&slice[keyPath: keyPath]!)
        }
      },
      read: { root in read(root).flatMap { $0[keyPath: keyPath] } })
  }

  /// The element with identifier `id` of the collection at `keyPath` of this path's slice; `scope` names it in
  /// the error.
  func appending<Elements: MutableCollection & RandomAccessCollection>(
    _ keyPath: WritableKeyPath<Slice, Elements>, id: Elements.Element.ID, scope: ScopeID
  ) -> SlicePath<Root, Elements.Element> where Elements.Element: Identifiable, Elements.Element.ID: Sendable {
    let modify = self.modify
    let read = self.read
    return SlicePath<Root, Elements.Element>(
      modify: { root, body in
        try modify(&root) { slice in
          guard let index = slice[keyPath: keyPath].firstIndex(where: { $0.id == id }) else {
            throw ScopeError.missingElement(scope)
          }
          try body(&slice[keyPath: keyPath][index])
        }
      },
      read: { root in read(root).flatMap { slice in slice[keyPath: keyPath].first { $0.id == id } } })
  }
}
