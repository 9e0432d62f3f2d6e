/// Where a scope's slice lives inside the root state, in a form that tells whether a change at one place may
/// change another: what decides which observers a commit made through a scope is offered to (see
/// ``ScopeCommitFilter``). Not an identity: two different places may have the same location (fields of zero
/// size all sit at one offset), which only makes the decision more conservative; ``ScopeIdentity`` says which
/// feature a scope is.
///
/// A location is a list of segments from the root: byte ranges for stored properties (the ranges of one
/// chain of stored properties are merged into one, so `\.a.b` and `\.a` then `\.b` are the same location),
/// then steps the store cannot see through: an element of a collection, the value of an optional, a key
/// path with computed parts.
///
/// Comparing locations runs no user code (it is done under the store's lock): element ids are compared by
/// their hashes only, computed key paths not at all.
@usableFromInline
struct ScopeLocation: Sendable {
  @usableFromInline
  enum Segment: Sendable {
    /// A chain of stored properties: its bytes inside the value the previous segments lead to.
    case bytes(Range<Int>)
    /// One element of the collection the previous segments lead to, by the hash of its id (or key).
    case element(hash: Int)
    /// The value of the optional the previous segments lead to.
    case some
    /// A key path with computed parts: the store cannot tell where it leads.
    case computed
  }

  @usableFromInline private(set) var segments: [Segment] = []

  /// The whole state.
  static let root = ScopeLocation()

  /// This location followed by the stored properties at `offset` in its value, `size` bytes long.
  func appendingBytes(offset: Int, size: Int) -> ScopeLocation {
    var result = self
    if case .bytes(let range) = segments.last {
      let start = range.lowerBound + offset
      result.segments[segments.count - 1] = .bytes(start..<(start + size))
    } else {
      result.segments.append(.bytes(offset..<(offset + size)))
    }
    return result
  }

  func appending(_ segment: Segment) -> ScopeLocation {
    var result = self
    result.segments.append(segment)
    return result
  }

  /// Whether a change made at this location may change the value at `other`, or the other way round.
  ///
  /// False only when the two are provably apart: at the first segment where they differ, two byte ranges
  /// that do not overlap (different stored properties), or elements of one collection whose ids have different
  /// hashes (so the ids differ). A location that continues the other (a part of it, or the whole containing
  /// it), a key path with computed parts, or segments of different kinds may overlap. Sound because a scope
  /// mutates only its slice: the body of a state updater gets nothing else, and a stored property with
  /// observers (`didSet`), which could change its neighbours, has no fixed place and so is a computed segment.
  /// (An element renamed through its own scope is the one change that reaches another element's place: the
  /// scope's commit then goes to every observer, see ``ScopeCommitFilter/widened``.)
  func mayOverlap(_ other: ScopeLocation) -> Bool {
    for (mine, theirs) in zip(segments, other.segments) {
      switch (mine, theirs) {
      case (.bytes(let a), .bytes(let b)):
        if a == b { continue }
        return a.overlaps(b)
      case (.element(let a), .element(let b)):
        // Equal hashes: perhaps the same element; the next segments decide.
        if a == b { continue }
        return false
      case (.some, .some):
        continue
      default:
        return true
      }
    }
    return true
  }
}
