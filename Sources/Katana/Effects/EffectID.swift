/// The identifier of effects run under an id in one store: any `Hashable & Sendable` value, compared like
/// `AnyHashable` (by type and value).
struct EffectID: Hashable, @unchecked Sendable {
  // Sendable: `AnyHashable` is not marked Sendable, but this one is only ever built from a Sendable value.
  let base: AnyHashable

  init(_ id: some Hashable & Sendable) {
    base = AnyHashable(id)
  }
}
