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
final class ThreadOwner: AtomicWord, @unchecked Sendable {
  @inlinable
  init() {
    super.init(word: 0)
  }

  /// Whether the calling thread is the one currently marked as owner.
  @inlinable
  var isCurrentThread: Bool {
    relaxed == Self.currentThreadID
  }

  /// Marks the calling thread as owner until the matching ``clear()``.
  @inlinable @inline(__always)
  func markCurrentThread() {
    storeRelaxed(Self.currentThreadID)
  }

  @inlinable @inline(__always)
  func clear() {
    storeRelaxed(0)
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
