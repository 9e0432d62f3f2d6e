import CKatana

/// One machine word accessed atomically, without Swift's `Synchronization` module (macOS 15 / iOS 18): the one
/// primitive behind the store's lock-free reads. ``AtomicFlag``, ``AtomicCount`` and ``ThreadOwner`` are its typed
/// forms; each adds only how it reads and writes the word.
@usableFromInline
class AtomicWord: @unchecked Sendable {  // Sendable: the word is only accessed atomically.
  @usableFromInline final let word: UnsafeMutablePointer<UInt>

  @inlinable
  init(word value: UInt) {
    word = .allocate(capacity: 1)
    word.initialize(to: value)
  }

  @inlinable
  deinit {
    word.deallocate()
  }

  /// The word, with acquire ordering: what was written before a release store of it is visible after.
  @inlinable final var acquired: UInt { ckatana_load_acquire(word) }

  /// The word, with relaxed ordering.
  @inlinable final var relaxed: UInt { ckatana_load_relaxed(word) }

  /// Stores `value` with release ordering.
  @inlinable final func storeReleasing(_ value: UInt) { ckatana_store_release(word, value) }

  /// Stores `value` with relaxed ordering.
  @inlinable final func storeRelaxed(_ value: UInt) { ckatana_store_relaxed(word, value) }
}

/// A flag read without a lock on hot paths (acquire) and written with release ordering, so that what was
/// written before setting it is visible to a reader that sees it set.
@usableFromInline
final class AtomicFlag: AtomicWord, @unchecked Sendable {
  @inlinable
  init(_ value: Bool = false) {
    super.init(word: value ? 1 : 0)
  }

  @inlinable
  var isSet: Bool {
    acquired != 0
  }

  @inlinable
  func set(_ value: Bool) {
    storeReleasing(value ? 1 : 0)
  }
}

/// A count written under a lock (one writer at a time, so an increment is a load and a store) and read without it:
/// what a store counts for readers that do not take its lock.
@usableFromInline
final class AtomicCount: AtomicWord, @unchecked Sendable {
  @inlinable
  init() {
    super.init(word: 0)
  }

  /// The count (at most `Int.max`).
  @inlinable
  var value: Int {
    Int(clamping: acquired)
  }

  /// Adds one; the caller holds the lock that serialises the writers.
  @inlinable
  func increment() {
    storeReleasing(relaxed &+ 1)
  }

  /// Sets the count to zero; the caller holds the lock that serialises the writers.
  @inlinable
  func reset() {
    storeReleasing(0)
  }
}
