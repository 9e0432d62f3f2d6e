import CKatana

/// A flag read without a lock on hot paths (acquire) and written with release ordering, so that what was
/// written before setting it is visible to a reader that sees it set.
@usableFromInline
final class AtomicFlag: @unchecked Sendable {  // Sendable: the word is only accessed atomically.
  @usableFromInline let word: UnsafeMutablePointer<UInt>

  @inlinable
  init(_ value: Bool = false) {
    word = .allocate(capacity: 1)
    word.initialize(to: value ? 1 : 0)
  }

  @inlinable
  deinit {
    word.deallocate()
  }

  @inlinable
  var isSet: Bool {
    ckatana_load_acquire(word) != 0
  }

  @inlinable
  func set(_ value: Bool) {
    ckatana_store_release(word, value ? 1 : 0)
  }
}

/// A count written under a lock (one writer at a time, so an increment is a load and a store) and read without it:
/// what a store counts for readers that do not take its lock.
@usableFromInline
final class AtomicCount: @unchecked Sendable {  // Sendable: the word is only accessed atomically.
  @usableFromInline let word: UnsafeMutablePointer<UInt>

  @inlinable
  init() {
    word = .allocate(capacity: 1)
    word.initialize(to: 0)
  }

  @inlinable
  deinit {
    word.deallocate()
  }

  /// The count (at most `Int.max`).
  @inlinable
  var value: Int {
    Int(clamping: ckatana_load_acquire(word))
  }

  /// Adds one; the caller holds the lock that serialises the writers.
  @inlinable
  func increment() {
    ckatana_store_release(word, ckatana_load_relaxed(word) &+ 1)
  }

  /// Sets the count to zero; the caller holds the lock that serialises the writers.
  @inlinable
  func reset() {
    ckatana_store_release(word, 0)
  }
}
