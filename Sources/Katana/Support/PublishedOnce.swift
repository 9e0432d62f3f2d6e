import CKatana

/// A value published once, by the first of its writers, and read without a lock; with a part fixed when it is made.
/// One allocation: the state word that orders the two is tail-allocated with them.
///
/// The state word goes `unclaimed -> claimed -> published` (with a value, or with none), and never back:
/// - ``publish(_:)`` claims the slot with a compare-and-exchange, writes the value, then stores the published state
///   with release ordering; a writer that finds the slot claimed or published publishes nothing;
/// - readers load the word with acquire ordering, and read the value only once it says published: so they see the
///   value whole, written before.
///
/// An ``UndoCommand`` keeps in one the way it computes its value (fixed) and the value its first commit set: each
/// command used a ``Locked`` box before, whose mutex took four calls to make, one to destroy and three lock pairs to
/// use, about 60 ns of an undo.
@usableFromInline
struct PublishedOnce<Fixed: Sendable, Value: Sendable>: @unchecked Sendable {
  // Sendable: `fixed` never changes; `value` is written once, by the writer that claimed the slot, before the state
  // word says it is published (release), and read only after an acquire load of the word has seen that.
  @usableFromInline let buffer: PublishedOnceBuffer<Fixed, Value>

  /// Where the slot stands.
  @usableFromInline
  enum State: UInt {
    /// Nothing published, and no writer at it.
    case unclaimed = 0
    /// A writer is publishing.
    case claimed = 1
    /// Published: a value.
    case value = 2
    /// Published: no value.
    case nothing = 3
  }

  /// Makes one, published already if `published` is not nil (with its value, which may be none).
  @inlinable
  init(fixed: Fixed, published: Value?? = nil) {
    let state: State =
      switch published {
      case .none: .unclaimed
      case .some(.none): .nothing
      case .some(.some): .value
      }
    let buffer = PublishedOnceBuffer<Fixed, Value>.create(minimumCapacity: 1) { _ in
      PublishedOnceSlots(fixed: fixed, value: published ?? nil)
    }
    buffer.withUnsafeMutablePointerToElements { $0.initialize(to: state.rawValue) }
    // Internal invariant: `create` called on a class returns an instance of that class.
    self.buffer = unsafeDowncast(buffer, to: PublishedOnceBuffer<Fixed, Value>.self)
  }

  /// Where the slot stands (acquire: once it says published, the value written before is visible).
  @inlinable
  var state: State {
    let word = buffer.withUnsafeMutablePointerToElements { ckatana_load_acquire($0) }
    // Internal invariant: the word only ever holds a state's raw value.
    return State(rawValue: word) ?? .claimed
  }

  /// Hands `body` the fixed part, read where it lies.
  @inlinable
  func withFixed<Result>(_ body: (borrowing Fixed) throws -> Result) rethrows -> Result {
    try buffer.withUnsafeMutablePointerToHeader { try body($0.pointee.fixed) }
  }

  /// What was published: nil if nothing has been yet, `.some(nil)` if it was published with no value.
  @inlinable
  var published: Value?? {
    switch state {
    case .unclaimed, .claimed: nil
    case .nothing: .some(nil)
    case .value: .some(buffer.withUnsafeMutablePointerToHeader { $0.pointee.value })
    }
  }

  /// Publishes `value` (nil: published with no value), unless a writer has already claimed the slot; returns whether
  /// this call published.
  @inlinable
  @discardableResult
  func publish(_ value: consuming Value?) -> Bool {
    let state = value == nil ? State.nothing : State.value
    return buffer.withUnsafeMutablePointers { slots, word in
      guard ckatana_compare_exchange(word, State.unclaimed.rawValue, State.claimed.rawValue) else { return false }
      slots.pointee.value = value.take()  // moved in, not copied
      ckatana_store_release(word, state.rawValue)
      return true
    }
  }
}

/// The one allocation of a ``PublishedOnce``: its slots, then its state word.
@usableFromInline
final class PublishedOnceBuffer<Fixed, Value>: ManagedBuffer<PublishedOnceSlots<Fixed, Value>, UInt> {}

/// What a ``PublishedOnce`` holds besides its state word.
@usableFromInline
struct PublishedOnceSlots<Fixed, Value> {
  /// Fixed when it is made.
  @usableFromInline let fixed: Fixed
  /// The value published, once the state word says so.
  @usableFromInline var value: Value?

  @inlinable init(fixed: Fixed, value: Value?) {
    self.fixed = fixed
    self.value = value
  }
}
