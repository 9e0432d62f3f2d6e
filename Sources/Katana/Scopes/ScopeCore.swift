import CKatana

/// The engine behind ``ScopedStore`` and a feature's ``SideEffectContext``: where the feature's slice is in the
/// root state, and the root store's operations (``ScopeRoot``).
///
/// A scope reaches its slice from the root state's address with its *path*. When the path is a chain of
/// stored properties, that is an offset (``MemoryLayout/offset(of:)``), added up through nested scopes, so a
/// dispatch through any depth of such scopes costs one pointer addition; otherwise (elements of collections,
/// optional children, key paths with computed parts) it is a closure that looks the slice up in its
/// parent's, in place. Either way the slice is mutated where it lives: nothing is copied.
///
/// The path runs under the store's lock, as part of each state updater dispatched through the scope (and to
/// take an observer's first value): keep key paths with computed parts pure and short, as updaters are.
@usableFromInline
final class ScopeCore<S: State>: Sendable {
  @usableFromInline let root: ScopeRoot
  @usableFromInline let node: ScopeNode
  let id: ScopeID
  /// The slice's offset in the root state, when the path is a chain of stored properties.
  @usableFromInline let offset: Int?
  /// The path, as closures: used when ``offset`` is nil (and by routed items, which do not inline).
  @usableFromInline let path: Path
  /// `S`'s `==`, if `S` is `Equatable`: observers skip commits that leave the slice equal.
  let equality: (@Sendable (S, S) -> Bool)?

  @usableFromInline
  struct Path: Sendable {
    /// Runs `body` on the slice, in place, inside the root state at the given address.
    ///
    /// - Throws: ``ScopeError`` if the slice is missing (the body does not run).
    let modify: @Sendable (UnsafeMutableRawPointer, (inout S) throws -> Void) throws -> Void
    /// The slice inside the root state at the given address, or nil if it is missing.
    let read: @Sendable (UnsafeRawPointer) -> S?
  }

  init(root: ScopeRoot, location: ScopeLocation, description: String, offset: Int?, path: Path) {
    self.root = root
    self.node = ScopeNode(location: location, storeID: root.storeID)
    self.id = ScopeID(location: location, description: description)
    self.offset = offset
    self.path = path
    self.equality = Self.equality()
  }

  /// The root of a store's scopes: the whole state, at offset 0.
  @inlinable
  static func root<D: SideEffectDependencyContainer>(of core: StoreCore<S, D>) -> ScopeCore<S> {
    ScopeCore(
      root: ScopeRoot(core: core), location: .root, description: String(describing: S.self), offset: 0,
      path: Path(
        modify: { raw, body in try body(&raw.assumingMemoryBound(to: S.self).pointee) },
        read: { raw in raw.assumingMemoryBound(to: S.self).pointee }))
  }

  // MARK: - Reaching the slice

  /// Runs `body` on the slice inside the root state at `root`, in place.
  ///
  /// - Throws: ``ScopeError`` if the slice is missing (then `body` does not run and nothing changes).
  @inlinable @inline(__always)
  func modify(_ root: UnsafeMutableRawPointer, _ body: (inout S) throws -> Void) throws {
    if let offset {
      // The root state's memory is bound to its type, whose stored property at `offset` is an `S`.
      try body(&root.advanced(by: offset).assumingMemoryBound(to: S.self).pointee)
    } else {
      try path.modify(root, body)
    }
  }

  /// The slice inside the root state at `root`, or nil if it is missing.
  @inlinable
  func read(_ root: UnsafeRawPointer) -> S? {
    if let offset {
      return root.advanced(by: offset).assumingMemoryBound(to: S.self).pointee
    }
    return path.read(root)
  }

  /// The slice in the latest committed state, or nil if it is missing.
  var stateIfPresent: S? {
    var slice: S?
    if offset != nil {
      // A copy of the slice, under the lock: no code of the user's runs.
      guard root.readUnderLock({ slice = read($0) }) else { return reentrantRead() }
    } else {
      // The path may be user code (key paths with computed parts): read a copy of the state outside the lock.
      guard !root.owner.isCurrentThread else { return reentrantRead() }
      root.operations.copyState { slice = read($0) }
    }
    return slice
  }

  /// The slice in the latest committed state, or `S()` if it is missing.
  @usableFromInline var state: S {
    stateIfPresent ?? S()
  }

  func reentrantRead() -> S? {
    root.internals.runtimeWarning(
      "The state of scope \(id) was read from inside a StateUpdater; this returns \(String(reflecting: S.self))(). "
        + "Updaters must only use their inout parameter.")
    return S()
  }

  /// The error for a slice that is missing from the state.
  func missingElement() -> ScopeError { .missingElement(id) }

  // MARK: - Effect ids

  /// The registry identifier of work this scope runs under `id`.
  func effectID(for id: some Hashable & Sendable) -> EffectID {
    EffectID(ScopedEffectKey(location: node.location, id: AnyHashable(id)))
  }

  // MARK: - Equality

  static func equality() -> (@Sendable (S, S) -> Bool)? {
    guard let equatable = S.self as? any Equatable.Type else { return nil }
    return makeEquality(equatable)
  }

  private static func makeEquality<E: Equatable>(_: E.Type) -> @Sendable (S, S) -> Bool {
    // `E` is `S` (opened from `S.self`): the casts reinterpret a value as its own type.
    { a, b in unsafeBitCast(a, to: E.self) == unsafeBitCast(b, to: E.self) }
  }
}

// MARK: - Child scopes

extension ScopeCore {
  /// A description of `keyPath` relative to this scope's, for example `.cart`.
  func describe(_ keyPath: AnyKeyPath) -> String {
    var text = String(describing: keyPath)
    if text.hasPrefix("\\") { text.removeFirst() }
    let prefix = String(describing: S.self)
    if text.hasPrefix(prefix) { text.removeFirst(prefix.count) }
    if !text.hasPrefix(".") && !text.hasPrefix("[") { text = "." + text }
    return id.description + text
  }

  /// The scope of the field at `keyPath`, with the location and description for it.
  func field<F>(_ keyPath: WritableKeyPath<S, F>) -> (offset: Int?, location: ScopeLocation) {
    if let relative = MemoryLayout<S>.offset(of: keyPath) {
      return (offset.map { $0 + relative }, node.location.appendingBytes(offset: relative, size: MemoryLayout<F>.size))
    }
    return (nil, node.location.appending(.computed(hash: keyPath.hashValue, path: keyPath)))
  }

  /// Runs `body` on the field at `keyPath` of the slice inside the root state at `root`, in place.
  func modifyField<F>(
    _ root: UnsafeMutableRawPointer, _ keyPath: WritableKeyPath<S, F>, _ body: (inout F) throws -> Void
  ) throws {
    try modify(root) { slice in try body(&slice[keyPath: keyPath]) }
  }

  /// A scope of the stored or computed property at `keyPath` of this scope's slice.
  @usableFromInline
  func child<C: State>(_ keyPath: WritableKeyPath<S, C>) -> ScopeCore<C> {
    let (childOffset, location) = field(keyPath)
    return ScopeCore<C>(
      root: root, location: location, description: describe(keyPath), offset: childOffset,
      path: ScopeCore<C>.Path(
        modify: { [self] raw, body in try modifyField(raw, keyPath, body) },
        read: { [self] raw in read(raw)?[keyPath: keyPath] }))
  }

  /// A scope of the optional child at `keyPath` of this scope's slice.
  @usableFromInline
  func child<C: State>(optional keyPath: WritableKeyPath<S, C?>) -> ScopeCore<C> {
    let location = field(keyPath).location.appending(.some)
    let description = describe(keyPath) + "?"
    let id = ScopeID(location: location, description: description)
    return ScopeCore<C>(
      root: root, location: location, description: description, offset: nil,
      path: ScopeCore<C>.Path(
        modify: { [self] raw, body in
          try modifyField(raw, keyPath) { child in
            guard child != nil else { throw ScopeError.missingChild(id) }
            try body(&child!)
          }
        },
        read: { [self] raw in read(raw)?[keyPath: keyPath] ?? nil }))
  }

  /// A scope of the element with identifier `elementID` of the collection at `keyPath` of this scope's slice.
  @usableFromInline
  func element<C: MutableCollection & RandomAccessCollection>(
    _ keyPath: WritableKeyPath<S, C>, id elementID: C.Element.ID
  ) -> ScopeCore<C.Element> where C.Element: State & Identifiable, C.Element.ID: Sendable {
    let location = field(keyPath).location.appending(.element(hash: elementID.hashValue, id: AnyHashable(elementID)))
    let description = describe(keyPath) + "[id: \(elementID)]"
    let id = ScopeID(location: location, description: description)
    let finder = ElementFinder<C>(id: elementID)
    return ScopeCore<C.Element>(
      root: root, location: location, description: description, offset: nil,
      path: ScopeCore<C.Element>.Path(
        modify: { [self] raw, body in
          try modifyField(raw, keyPath) { collection in
            guard let index = finder.index(in: collection) else { throw ScopeError.missingElement(id) }
            try body(&collection[index])
          }
        },
        read: { [self] raw in
          guard let collection = read(raw)?[keyPath: keyPath], let index = finder.index(in: collection) else {
            return nil
          }
          return collection[index]
        }))
  }

  /// A scope of the value for `key` of the dictionary at `keyPath` of this scope's slice.
  @usableFromInline
  func element<Key: Hashable & Sendable, Value: State>(
    _ keyPath: WritableKeyPath<S, [Key: Value]>, key: Key
  ) -> ScopeCore<Value> {
    let location = field(keyPath).location.appending(.element(hash: key.hashValue, id: AnyHashable(key)))
    let description = describe(keyPath) + "[\(key)]"
    let id = ScopeID(location: location, description: description)
    return ScopeCore<Value>(
      root: root, location: location, description: description, offset: nil,
      path: ScopeCore<Value>.Path(
        modify: { [self] raw, body in
          try modifyField(raw, keyPath) { dictionary in
            guard let index = dictionary.index(forKey: key) else { throw ScopeError.missingElement(id) }
            try body(&dictionary.values[index])
          }
        },
        read: { [self] raw in read(raw)?[keyPath: keyPath][key] }))
  }
}

/// Finds an element by identifier, starting where it was found last: rows of a list are looked up once per
/// dispatch, so the search is a linear scan only when the collection has changed around the element.
final class ElementFinder<C: RandomAccessCollection>: @unchecked Sendable where C.Element: Identifiable {
  // Sendable: `hint` is one word accessed atomically (a stale value is only a worse guess).

  let id: C.Element.ID
  private let hint: UnsafeMutablePointer<UInt>

  init(id: C.Element.ID) {
    self.id = id
    hint = .allocate(capacity: 1)
    hint.initialize(to: 0)
  }

  deinit {
    hint.deallocate()
  }

  func index(in collection: C) -> C.Index? {
    let guess = Int(ckatana_load_relaxed(hint))
    if guess < collection.count {
      let index = collection.index(collection.startIndex, offsetBy: guess)
      if collection[index].id == id { return index }
    }
    guard let found = collection.firstIndex(where: { $0.id == id }) else { return nil }
    ckatana_store_relaxed(hint, UInt(collection.distance(from: collection.startIndex, to: found)))
    return found
  }
}
