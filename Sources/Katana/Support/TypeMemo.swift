/// What is known about some types, remembered so that it is not worked out again: a direct-mapped table of 16 type
/// identities, each with a value, which forgets a type when another one takes its slot (it is then worked out once
/// more).
///
/// Its uses, each to spare a cast on every commit (a conformance lookup in the runtime's caches, which cost more than
/// the rest of a commit on a store with an undo history):
/// - the item types an undo history has seen to be plain updaters (`TypeMemo<Void>`);
/// - how the items of each type are applied: inverting, by the store whose history wants inverses
///   (``InvertingApplier``, nil for a type that is not invertible), and by an undo history's replays and folds
///   (``PlainApplier``). Conformances are static, so what a type's first item shows holds for every later one.
///
/// It never answers for a type it was not told about: a slot holds a whole type identity, compared in full. Its plain
/// twin is a `Dictionary` (``TypeMemoTests``).
@usableFromInline
struct TypeMemo<Value> {
  @usableFromInline var slots: ContiguousArray<(type: ObjectIdentifier, value: Value)?> = []

  @inlinable init() {}

  @inlinable
  static func slot(of type: ObjectIdentifier) -> Int {
    // Type metadata is at least 8-byte aligned: mix the bits above that.
    let bits = UInt(bitPattern: type)
    return Int(truncatingIfNeeded: ((bits >> 4) ^ (bits >> 9)) & 15)
  }

  /// The value remembered for `type`, or nil if it was not remembered (or was forgotten since).
  @inlinable
  func value(for type: ObjectIdentifier) -> Value? {
    guard !slots.isEmpty, let slot = slots[Self.slot(of: type)], slot.type == type else { return nil }
    return slot.value
  }

  /// Whether `type` was remembered (and not forgotten since).
  @inlinable
  func contains(_ type: ObjectIdentifier) -> Bool {
    slots.isEmpty ? false : slots[Self.slot(of: type)]?.type == type
  }

  /// The value remembered for `type`; if there is none, `make()`'s, remembered first.
  @inlinable
  mutating func value(for type: ObjectIdentifier, orMaking make: () -> Value) -> Value {
    if let known = value(for: type) { return known }
    let made = make()
    insert(type, value: made)
    return made
  }

  /// Remembers `value` for `type`, in place of the type in its slot.
  @inlinable
  mutating func insert(_ type: ObjectIdentifier, value: Value) {
    if slots.isEmpty { slots = ContiguousArray(repeating: nil, count: 16) }
    slots[Self.slot(of: type)] = (type, value)
  }
}

extension TypeMemo where Value == Void {
  /// Remembers `type`, in place of the type in its slot.
  @inlinable
  mutating func insert(_ type: ObjectIdentifier) {
    insert(type, value: ())
  }
}
