/// Types known to fail a conformance cast, remembered so that the cast is not tried again: a direct-mapped table of
/// 16 type identities, which forgets a type when another one takes its slot (the cast is then tried once more).
///
/// A cast to a protocol existential (`item as? any InvertibleStateUpdater`) that fails looks the conformance up in the
/// runtime's caches on every call, which cost more than the rest of a commit on a store with an undo history; a type
/// that does not conform never will (conformances are static), so a failure is safe to remember. It never answers
/// that a type failed when it did not: a slot holds a whole type identity, compared in full. Its plain twin is a
/// `Set` (``TypeMemoTests``).
@usableFromInline
struct TypeMemo {
  @usableFromInline var slots: ContiguousArray<ObjectIdentifier?> = []

  @inlinable init() {}

  @inlinable
  static func slot(of type: ObjectIdentifier) -> Int {
    // Type metadata is at least 8-byte aligned: mix the bits above that.
    let bits = UInt(bitPattern: type)
    return Int(truncatingIfNeeded: ((bits >> 4) ^ (bits >> 9)) & 15)
  }

  /// Whether `type` was remembered (and not forgotten since).
  @inlinable
  func contains(_ type: ObjectIdentifier) -> Bool {
    slots.isEmpty ? false : slots[Self.slot(of: type)] == type
  }

  /// Remembers `type`, in place of the type in its slot.
  @inlinable
  mutating func insert(_ type: ObjectIdentifier) {
    if slots.isEmpty { slots = ContiguousArray(repeating: nil, count: 16) }
    slots[Self.slot(of: type)] = type
  }
}
