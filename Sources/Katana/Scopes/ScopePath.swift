/// The steps a scope takes from a value to one of its parts, in place: a field, the value of an optional
/// field, an element of an identified collection.
///
/// Each step hands the part to its body as an `inout` access into the value, so a mutation through a scope
/// touches the part where it lives: nothing is copied, neither the part nor the rest of the value. A stored
/// property with a fixed place in its parent (``MemoryLayout/offset(of:)`` is not nil) is reached through a
/// pointer to that place, which the standard library documents as equivalent to the key path; any other key
/// path is applied as a key path. Mutations compose them into ``ScopeRoutes`` (one ``ScopeStepping`` value per
/// level, made in code specialised for the parent's and the child's types); reads into ``ScopePath``.
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

/// How a scope reads its slice in a root state, through the steps it was mounted at (see ``ScopeStep``).
/// Mutations go through the scope's ``ScopeRoutes`` instead.
struct ScopePath<Root, Slice>: @unchecked Sendable {
  // Sendable: the closure only captures key paths (immutable), offsets, and identifiers made from Sendable
  // values.

  /// The slice inside `root`, or nil if it is missing.
  let read: (Root) -> Slice?

  /// The whole state.
  static func identity() -> ScopePath<Root, Root> {
    ScopePath<Root, Root>(read: { $0 })
  }

  /// The field at `keyPath` of this path's slice.
  func appending<Child>(_ keyPath: KeyPath<Slice, Child>, offset: Int?) -> ScopePath<Root, Child> {
    let read = self.read
    return ScopePath<Root, Child>(read: { root in
      read(root).map { ScopeStep.field(of: $0, offset: offset, keyPath: keyPath) }
    })
  }

  /// The value of the optional child at `keyPath` of this path's slice.
  func appending<Child>(optional keyPath: KeyPath<Slice, Child?>, offset: Int?) -> ScopePath<Root, Child> {
    let read = self.read
    return ScopePath<Root, Child>(read: { root in
      read(root).flatMap { ScopeStep.field(of: $0, offset: offset, keyPath: keyPath) }
    })
  }

  /// The element with identifier `id` of the collection at `keyPath` of this path's slice.
  func appending<Elements: Collection>(_ keyPath: KeyPath<Slice, Elements>, offset: Int?, id: Elements.Element.ID)
    -> ScopePath<Root, Elements.Element>
  where Elements.Element: Identifiable {
    let read = self.read
    return ScopePath<Root, Elements.Element>(read: { root in
      read(root).flatMap { slice in ScopeStep.field(of: slice, offset: offset, keyPath: keyPath).first { $0.id == id } }
    })
  }
}

/// Applies a body to a scope's slice at once, if the root store can apply a state updater right now (it is
/// idle, has no interceptors, does not track activity, and the caller is not inside a state updater), and
/// returns true; returns false, without running the body, otherwise. The commit's observers are those of
/// `filter`'s location.
///
/// - Throws: ``ScopeError`` if the slice is missing; `CancellationError` if the calling task is cancelled.
@usableFromInline
typealias ScopeApplier<Slice> =
  @Sendable (_ filter: ScopeCommitFilter, _ body: (inout Slice) throws -> Void) throws -> Bool

/// Applies a body to the root store's state, given as a pointer to it, at once if the root store can apply a
/// state updater right now; see ``ScopeApplier``. What the routes of a slice at a fixed offset from the root
/// state use, however deep the slice: one call instead of one per level.
@usableFromInline
typealias RawScopeApplier =
  @Sendable (_ filter: ScopeCommitFilter, _ body: (UnsafeMutableRawPointer) throws -> Void) throws -> Bool

/// One step from a parent's slice to a child's, in place: a ``ScopeStep`` with its arguments bound. A value
/// of a concrete type, so that the routes made with it call the step directly (specialised and inlined).
@usableFromInline
protocol ScopeStepping<Parent, Child>: Sendable {
  associatedtype Parent
  associatedtype Child
  /// Runs `body` on the child inside `parent`, in place.
  func callAsFunction(_ parent: inout Parent, _ body: (inout Child) throws -> Void) throws
  /// Runs `body` on the child inside `parent`, in place, on the fast path of a commit made through `filter`'s
  /// scope: sets ``ScopeCommitFilter/widened`` if the change may reach places outside the scope's location (an
  /// element whose id the body changed).
  func callAsFunction(_ parent: inout Parent, widening filter: ScopeCommitFilter, _ body: (inout Child) throws -> Void)
    throws
  /// Where the child is in the parent's memory, when it always is at a fixed offset (a stored property, see
  /// `MemoryLayout.offset(of:)`); nil otherwise.
  var fixedOffset: Int? { get }
}

extension ScopeStepping {
  @inlinable
  var fixedOffset: Int? { nil }

  @inlinable @inline(__always)
  func callAsFunction(_ parent: inout Parent, widening _: ScopeCommitFilter, _ body: (inout Child) throws -> Void)
    throws
  {
    try self(&parent, body)
  }
}

/// The field at a key path.
@usableFromInline
struct FieldStep<Parent, Child>: ScopeStepping, @unchecked Sendable {
  // Sendable: key paths are immutable.
  @usableFromInline let keyPath: WritableKeyPath<Parent, Child>
  @usableFromInline let offset: Int?

  @inlinable
  init(_ keyPath: WritableKeyPath<Parent, Child>) {
    self.keyPath = keyPath
    self.offset = MemoryLayout<Parent>.offset(of: keyPath)
  }

  @inlinable @inline(__always)
  func callAsFunction(_ parent: inout Parent, _ body: (inout Child) throws -> Void) throws {
    try ScopeStep.withField(of: &parent, offset: offset, keyPath: keyPath, body)
  }

  @inlinable
  var fixedOffset: Int? { offset }
}

/// The value of an optional field.
@usableFromInline
struct OptionalChildStep<Parent, Child>: ScopeStepping, @unchecked Sendable {
  // Sendable: key paths are immutable; `scope` is Sendable.
  @usableFromInline let keyPath: WritableKeyPath<Parent, Child?>
  @usableFromInline let offset: Int?
  @usableFromInline let scope: ScopeID

  @inlinable
  init(_ keyPath: WritableKeyPath<Parent, Child?>, scope: ScopeID) {
    self.keyPath = keyPath
    self.offset = MemoryLayout<Parent>.offset(of: keyPath)
    self.scope = scope
  }

  @inlinable @inline(__always)
  func callAsFunction(_ parent: inout Parent, _ body: (inout Child) throws -> Void) throws {
    try ScopeStep.withChild(of: &parent, offset: offset, keyPath: keyPath, scope: scope, body)
  }
}

/// The element with an identifier of an identified collection.
@usableFromInline
struct ElementStep<Parent, Elements: MutableCollection>: ScopeStepping, @unchecked Sendable
where Elements.Element: Identifiable, Elements.Element.ID: Sendable {
  // Sendable: key paths are immutable; `id` and `scope` are Sendable.
  @usableFromInline let keyPath: WritableKeyPath<Parent, Elements>
  @usableFromInline let offset: Int?
  @usableFromInline let id: Elements.Element.ID
  @usableFromInline let scope: ScopeID

  @inlinable
  init(_ keyPath: WritableKeyPath<Parent, Elements>, id: Elements.Element.ID, scope: ScopeID) {
    self.keyPath = keyPath
    self.offset = MemoryLayout<Parent>.offset(of: keyPath)
    self.id = id
    self.scope = scope
  }

  @inlinable @inline(__always)
  func callAsFunction(_ parent: inout Parent, _ body: (inout Elements.Element) throws -> Void) throws {
    try ScopeStep.withElement(of: &parent, offset: offset, keyPath: keyPath, id: id, scope: scope, body)
  }

  /// An element renamed through its own scope (a temporary id replaced by the server's) now stands where
  /// another id's scope looks: the commit must reach every observer, not only those of this element's place.
  @inlinable @inline(__always)
  func callAsFunction(
    _ parent: inout Parent, widening filter: ScopeCommitFilter, _ body: (inout Elements.Element) throws -> Void
  ) throws {
    try ScopeStep.withElement(of: &parent, offset: offset, keyPath: keyPath, id: id, scope: scope) { element in
      defer { if element.id != id { filter.widened = true } }
      try body(&element)
    }
  }
}

/// How a state updater dispatched or sent through a scope reaches the root store, with the root store's types
/// erased: a feature's code knows its own state, not the app's.
///
/// The root scope's routes call the store's core; a child scope's call its parent's with one more step. Each
/// level is made where both the parent's and the child's types are known (inlined into the app's code), so
/// the whole chain runs specialised.
@usableFromInline
struct ScopeRoutes<Slice>: Sendable {
  /// The fast path: applies at once if the store can (see ``ScopeApplier``).
  @usableFromInline let applyIfIdle: ScopeApplier<Slice>
  /// Dispatches `apply` (the feature's item `base`, through the scope with id `scope`) when its turn comes,
  /// through the root store's interceptors, and returns once it is committed.
  @usableFromInline let dispatch:
    @Sendable (_ base: any Dispatchable, _ scope: ScopeID, _ apply: @escaping @Sendable (inout Slice) throws -> Void)
      async throws -> Void
  /// Enqueues `apply` in the root store's mailbox.
  @usableFromInline let enqueue:
    @Sendable (_ base: any Dispatchable, _ scope: ScopeID, _ apply: @escaping @Sendable (inout Slice) throws -> Void)
      -> DispatchHandle<Void>
  /// The root store's fast path on a pointer to its state, and where this slice is from there, when every step
  /// from the root is a stored property at a fixed offset: a deeper slice then still applies with one call.
  @usableFromInline let fixedPlace: (applyToRoot: RawScopeApplier, offset: Int)?

  @inlinable
  init(
    applyIfIdle: @escaping ScopeApplier<Slice>,
    dispatch:
      @escaping @Sendable (any Dispatchable, ScopeID, @escaping @Sendable (inout Slice) throws -> Void)
      async throws -> Void,
    enqueue:
      @escaping @Sendable (any Dispatchable, ScopeID, @escaping @Sendable (inout Slice) throws -> Void)
      -> DispatchHandle<Void>,
    fixedPlace: (applyToRoot: RawScopeApplier, offset: Int)? = nil
  ) {
    self.applyIfIdle = applyIfIdle
    self.dispatch = dispatch
    self.enqueue = enqueue
    self.fixedPlace = fixedPlace
  }

  /// The routes of a child slice, one `step` further.
  @inlinable
  func appending<Step: ScopeStepping>(_ step: Step) -> ScopeRoutes<Step.Child> where Step.Parent == Slice {
    let (applyIfIdle, dispatch, enqueue) = (self.applyIfIdle, self.dispatch, self.enqueue)
    let dispatchChild:
      @Sendable (any Dispatchable, ScopeID, @escaping @Sendable (inout Step.Child) throws -> Void) async throws ->
        Void = { base, scope, apply in try await dispatch(base, scope) { slice in try step(&slice, apply) } }
    let enqueueChild:
      @Sendable (any Dispatchable, ScopeID, @escaping @Sendable (inout Step.Child) throws -> Void) ->
        DispatchHandle<Void> = { base, scope, apply in enqueue(base, scope) { slice in try step(&slice, apply) } }
    // A stored property of a slice at a fixed offset from the root state is at a fixed offset too: its fast path
    // goes straight from the root's state to it. (The same memory the steps would reach, one level at a time.)
    if let (applyToRoot, parentOffset) = fixedPlace, let stepOffset = step.fixedOffset {
      let offset = parentOffset + stepOffset
      return ScopeRoutes<Step.Child>(
        applyIfIdle: { filter, body in
          try applyToRoot(filter) { root in try body(&(root + offset).assumingMemoryBound(to: Step.Child.self).pointee)
          }
        },
        dispatch: dispatchChild, enqueue: enqueueChild, fixedPlace: (applyToRoot, offset))
    }
    return ScopeRoutes<Step.Child>(
      applyIfIdle: { filter, body in try applyIfIdle(filter) { slice in try step(&slice, widening: filter, body) } },
      dispatch: dispatchChild, enqueue: enqueueChild)
  }
}

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
  /// Set by a commit whose change may reach beyond this scope's location (an element renamed through its own
  /// scope): that commit goes to every observer. Cleared before each commit through the filter.
  @usableFromInline @exclusivity(unchecked) var widened = false

  init(location: ScopeLocation) {
    self.location = location
  }

  /// Whether a subscriber at `location` (nil: the whole state) may see a change from this scope's commit.
  func concerns(_ location: ScopeLocation?) -> Bool {
    guard let location else { return true }
    return self.location.mayOverlap(location)
  }
}
