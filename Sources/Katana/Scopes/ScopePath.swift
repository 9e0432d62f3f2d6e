/// The steps a scope takes from a value to one of its parts, in place: a field, the value of an optional
/// field, an element of an identified collection.
///
/// Each step hands the part to its body as an `inout` access into the value, so a mutation through a scope
/// touches the part where it lives: nothing is copied, neither the part nor the rest of the value. A stored
/// property with a fixed place in its parent (``MemoryLayout/offset(of:)`` is not nil) is reached through a
/// pointer to that place, which the standard library documents as equivalent to the key path; any other key
/// path is applied as a key path. The scope machinery composes these steps twice: into ``ScopePath`` (from
/// the root state, for the paths that know the root's type) and into a ``ScopeApplier`` (from the parent
/// scope's slice, made in code specialised for the feature's types).
@usableFromInline
enum ScopeStep {
  /// Runs `body` on the field at `keyPath` of `parent`, in place; `offset` is the field's
  /// `MemoryLayout<Parent>.offset(of: keyPath)`.
  @inlinable @inline(__always)
  static func withField<Parent, Child, Result>(
    of parent: inout Parent, offset: Int?, keyPath: WritableKeyPath<Parent, Child>,
    _ body: (inout Child) throws -> Result
  ) rethrows -> Result {
    if let offset {
      return try withUnsafeMutablePointer(to: &parent) { pointer in
        try body(&UnsafeMutableRawPointer(pointer).advanced(by: offset).assumingMemoryBound(to: Child.self).pointee)
      }
    }
    return try body(&parent[keyPath: keyPath])
  }

  /// The field at `keyPath` of `parent`; `offset` as for ``withField(of:offset:keyPath:_:)``.
  @inlinable @inline(__always)
  static func field<Parent, Child>(of parent: Parent, offset: Int?, keyPath: KeyPath<Parent, Child>) -> Child {
    if let offset {
      return withUnsafePointer(to: parent) { pointer in
        UnsafeRawPointer(pointer).advanced(by: offset).assumingMemoryBound(to: Child.self).pointee
      }
    }
    return parent[keyPath: keyPath]
  }

  /// Runs `body` on the value of the optional field at `keyPath` of `parent`, in place.
  ///
  /// - Throws: ``ScopeError/missingChild(_:)`` (with `scope`) if the field is nil; `body` then does not run.
  @inlinable @inline(__always)
  static func withChild<Parent, Child, Result>(
    of parent: inout Parent, offset: Int?, keyPath: WritableKeyPath<Parent, Child?>, scope: ScopeID,
    _ body: (inout Child) throws -> Result
  ) throws -> Result {
    try withField(of: &parent, offset: offset, keyPath: keyPath) { child in
      guard child != nil else { throw ScopeError.missingChild(scope) }
      return try body(&child!)
    }
  }

  /// Runs `body` on the element with identifier `id` of the collection at `keyPath` of `parent`, in place.
  /// The element is looked up by a linear search.
  ///
  /// - Throws: ``ScopeError/missingElement(_:)`` (with `scope`) if there is no such element; `body` then
  ///   does not run.
  @inlinable @inline(__always)
  static func withElement<Parent, Elements: MutableCollection, Result>(
    of parent: inout Parent, offset: Int?, keyPath: WritableKeyPath<Parent, Elements>, id: Elements.Element.ID,
    scope: ScopeID, _ body: (inout Elements.Element) throws -> Result
  ) throws -> Result where Elements.Element: Identifiable {
    try withField(of: &parent, offset: offset, keyPath: keyPath) { elements in
      guard let index = elements.firstIndex(where: { $0.id == id }) else {
        throw ScopeError.missingElement(scope)
      }
      return try body(&elements[index])
    }
  }
}

/// How a scope reaches its slice inside the root state: in place, through the steps it was mounted at (see
/// ``ScopeStep``).
///
/// A step that may find nothing (an element of a collection, an optional child) throws ``ScopeError``
/// before running the body.
struct ScopePath<Root, Slice>: @unchecked Sendable {
  // Sendable: the closures only capture key paths (immutable), offsets, and identifiers made from Sendable
  // values.

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
    let (modify, read) = (self.modify, self.read)
    let offset = MemoryLayout<Slice>.offset(of: keyPath)
    return ScopePath<Root, Child>(
      modify: { root, body in
        try modify(&root) { slice in try ScopeStep.withField(of: &slice, offset: offset, keyPath: keyPath, body) }
      },
      read: { root in read(root).map { ScopeStep.field(of: $0, offset: offset, keyPath: keyPath) } })
  }

  /// The value of the optional child at `keyPath` of this path's slice.
  func appending<Child>(optional keyPath: WritableKeyPath<Slice, Child?>, scope: ScopeID) -> ScopePath<Root, Child> {
    let (modify, read) = (self.modify, self.read)
    let offset = MemoryLayout<Slice>.offset(of: keyPath)
    return ScopePath<Root, Child>(
      modify: { root, body in
        try modify(&root) { slice in
          try ScopeStep.withChild(of: &slice, offset: offset, keyPath: keyPath, scope: scope, body)
        }
      },
      read: { root in read(root).flatMap { ScopeStep.field(of: $0, offset: offset, keyPath: keyPath) } })
  }

  /// The element with identifier `id` of the collection at `keyPath` of this path's slice.
  func appending<Elements: MutableCollection>(
    _ keyPath: WritableKeyPath<Slice, Elements>, id: Elements.Element.ID, scope: ScopeID
  ) -> ScopePath<Root, Elements.Element> where Elements.Element: Identifiable {
    let (modify, read) = (self.modify, self.read)
    let offset = MemoryLayout<Slice>.offset(of: keyPath)
    return ScopePath<Root, Elements.Element>(
      modify: { root, body in
        try modify(&root) { slice in
          try ScopeStep.withElement(of: &slice, offset: offset, keyPath: keyPath, id: id, scope: scope, body)
        }
      },
      read: { root in
        read(root).flatMap { slice in
          ScopeStep.field(of: slice, offset: offset, keyPath: keyPath).first { $0.id == id }
        }
      })
  }
}

/// Applies a body to a scope's slice at once, if the root store can apply a state updater right now (it is
/// idle, has no interceptors, does not track activity, and the caller is not inside a state updater), and
/// returns true; returns false, without running the body, otherwise. The commit's observers are those of
/// `filter`'s location.
///
/// The fast path of a state updater dispatched or sent through a scope. A scope's applier calls its
/// parent's with one more ``ScopeStep``; the root scope's calls the store's core. Each is made where both
/// the parent's and the child's types are known (inlined into the app's code), so the whole chain runs
/// specialised even though a feature does not know the app's state type.
///
/// - Throws: ``ScopeError`` if the slice is missing; `CancellationError` if the calling task is cancelled.
@usableFromInline
typealias ScopeApplier<Slice> =
  @Sendable (_ filter: ScopeCommitFilter, _ body: (inout Slice) throws -> Void) throws -> Bool

/// Which stream subscribers a commit made through one scope may concern: those whose location may overlap
/// the scope's (see ``ScopeLocation/mayOverlap(_:)``); the others are not called.
///
/// The answer is cached per version of the store's observers, as positions in its list of subscribers. Only
/// touched under the root store's lock.
@usableFromInline
final class ScopeCommitFilter: @unchecked Sendable {
  // Sendable: the cache is only read and written under the root store's lock; `location` is immutable.
  let location: ScopeLocation
  /// The observers' version the cache was computed for (none yet: no store's observers have this version).
  @usableFromInline @exclusivity(unchecked) var version: UInt64 = .max
  /// The positions of the concerned subscribers in the store's list.
  @usableFromInline @exclusivity(unchecked) var concerned: [Int] = []
  /// Whether one of them needs the state before the change.
  @usableFromInline @exclusivity(unchecked) var needsOldState = false

  init(location: ScopeLocation) {
    self.location = location
  }

  /// Whether a subscriber at `location` (nil: the whole state) may see a change from this scope's commit.
  func concerns(_ location: ScopeLocation?) -> Bool {
    guard let location else { return true }
    return self.location.mayOverlap(location)
  }
}
