import CKatana

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Remembers which thread is running user code (a state updater) while holding the store's lock.
///
/// A state updater runs under the store's lock (so that the state is mutated in place, see SPEC 4.5). If
/// that updater calls back into the store on the same thread (reads `store.state`, calls `send`), taking the
/// lock again would deadlock. Callers check ``isCurrentThread`` first and answer with a defined value or a
/// typed error instead.
///
/// The word is read with a relaxed atomic load: a thread can only ever observe its own identifier there if
/// it stored that identifier itself and has not cleared it yet, so no stronger ordering is needed.
@usableFromInline
final class ThreadOwner: @unchecked Sendable {  // Sendable: the word is only accessed atomically.
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

  /// Whether the calling thread is the one currently marked as owner.
  @inlinable
  var isCurrentThread: Bool {
    ckatana_load_relaxed(word) == Self.currentThreadID
  }

  /// Marks the calling thread as owner until the matching ``clear()``.
  @inlinable @inline(__always)
  func markCurrentThread() {
    ckatana_store_relaxed(word, Self.currentThreadID)
  }

  @inlinable @inline(__always)
  func clear() {
    ckatana_store_relaxed(word, 0)
  }

  @inlinable @inline(__always)
  static var currentThreadID: UInt {
    #if canImport(Darwin)
      UInt(bitPattern: pthread_self())
    #else
      UInt(pthread_self())
    #endif
  }
}
