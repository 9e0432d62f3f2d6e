/// How a scope reaches its slice inside the root state: in place, through the key paths it was mounted at.
///
/// `modify` hands the slice to its body as an `inout` access into the root state, so a mutation through a
/// scope touches the slice where it lives: nothing is copied, neither the slice nor the rest of the state.
/// A step that may find nothing (an element of a collection, an optional child) throws ``ScopeError``
/// before running the body.
struct ScopePath<Root, Slice>: @unchecked Sendable {
  // Sendable: the closures only capture key paths (immutable) and identifiers made from Sendable values.

  /// Runs `body` on the slice inside `root`, in place.
  ///
  /// - Throws: ``ScopeError`` if the slice is missing (`body` does not run and nothing changes).
  let modify: (inout Root, (inout Slice) throws -> Void) throws -> Void
  /// The slice inside `root`, or nil if it is missing.
  let read: (Root) -> Slice?

  /// The whole state.
  static func identity() -> ScopePath<Root, Root> {
    ScopePath<Root, Root>(modify: { root, body in try body(&root) }, read: { $0 })
  }

  /// The field at `keyPath` of this path's slice.
  func appending<Child>(_ keyPath: WritableKeyPath<Slice, Child>) -> ScopePath<Root, Child> {
    let modify = self.modify
    let read = self.read
    return ScopePath<Root, Child>(
      modify: { root, body in try modify(&root) { slice in try body(&slice[keyPath: keyPath]) } },
      read: { root in read(root).map { $0[keyPath: keyPath] } })
  }

  /// The value of the optional child at `keyPath` of this path's slice.
  func appending<Child>(optional keyPath: WritableKeyPath<Slice, Child?>, scope: ScopeID) -> ScopePath<Root, Child> {
    let modify = self.modify
    let read = self.read
    return ScopePath<Root, Child>(
      modify: { root, body in
        try modify(&root) { slice in
          guard slice[keyPath: keyPath] != nil else { throw ScopeError.missingChild(scope) }
          try body(&slice[keyPath: keyPath]!)
        }
      },
      read: { root in read(root).flatMap { $0[keyPath: keyPath] } })
  }

  /// The element with identifier `id` of the collection at `keyPath` of this path's slice.
  func appending<Elements: MutableCollection & RandomAccessCollection>(
    _ keyPath: WritableKeyPath<Slice, Elements>, id: Elements.Element.ID, scope: ScopeID
  ) -> ScopePath<Root, Elements.Element> where Elements.Element: Identifiable {
    let modify = self.modify
    let read = self.read
    return ScopePath<Root, Elements.Element>(
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
