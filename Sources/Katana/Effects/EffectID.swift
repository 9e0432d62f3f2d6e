/// The identifier of effects run under an id in one store: any `Hashable & Sendable` value, compared like
/// `AnyHashable` (by type and value).
///
/// The hash is computed once: comparing two `AnyHashable`s of a custom type looks up generic metadata
/// (measured: most of the registry's cost), so equality checks the cached hashes first and only compares
/// the values when they match.
struct EffectID: Hashable, @unchecked Sendable {
  // Sendable: `AnyHashable` is not marked Sendable, but this one is only ever built from a Sendable value.
  private let base: AnyHashable
  private let hash: Int

  init(_ id: some Hashable & Sendable) {
    base = AnyHashable(id)
    hash = base.hashValue
  }

  static func == (lhs: EffectID, rhs: EffectID) -> Bool {
    lhs.hash == rhs.hash && lhs.base == rhs.base
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(hash)
  }
}
