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
