/// Where a scope's slice lives inside the root state, in a form two scopes can compare.
///
/// A location is a list of segments from the root: byte ranges for stored properties (the ranges of one
/// chain of stored properties are merged into one, so `\.a.b` and `\.a` then `\.b` are the same location),
/// then steps the store cannot see through: an element of a collection, the value of an optional, a key
/// path with computed parts.
///
/// Two scopes share an id (``ScopeID``) and an effect-id namespace when their locations are equal.
///
/// A stored property is located by its byte range (``MemoryLayout/offset(of:)``): a child that is its
/// parent's only stored property, with the same size, gets its parent's location.
@usableFromInline
struct ScopeLocation: Hashable, @unchecked Sendable {
  // Sendable: segments hold ids and key paths that the scope functions only accept as Sendable values; they
  // are immutable.

  @usableFromInline
  enum Segment: Hashable {
    /// A chain of stored properties: its bytes inside the value the previous segments lead to.
    case bytes(Range<Int>)
    /// One element of the collection the previous segments lead to, by id (or key), with the id's hash.
    case element(hash: Int, id: AnyHashable)
    /// The value of the optional the previous segments lead to.
    case some
    /// A key path with computed parts: the store cannot tell where it leads.
    case computed(hash: Int, path: AnyKeyPath)
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
  /// that do not overlap (different stored properties), or two different elements of one collection. A
  /// location that continues the other (a part of it, or the whole containing it), a key path with computed
  /// parts, or segments of different kinds may overlap. Sound because a scope mutates only its slice: the
  /// body of a state updater gets nothing else, and a stored property with observers (`didSet`), which
  /// could change its neighbours, has no fixed place and so is a computed segment.
  func mayOverlap(_ other: ScopeLocation) -> Bool {
    for (mine, theirs) in zip(segments, other.segments) {
      switch (mine, theirs) {
      case (.bytes(let a), .bytes(let b)):
        if a == b { continue }
        return a.overlaps(b)
      case (.element(let a, let idA), .element(let b, let idB)):
        if a == b && idA == idB { continue }
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
