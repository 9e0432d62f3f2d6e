#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The platform's cheapest mutual-exclusion primitive: `os_unfair_lock` on Apple platforms, an adaptive
/// (briefly spinning) `pthread_mutex_t` on glibc, a plain one elsewhere.
///
/// The `Synchronization` module's `Mutex` would do, but it raises the Apple floor to macOS 15 / iOS 18.
/// Memory is owned by the caller (see ``LockedBuffer``) so that the primitive never moves.
@usableFromInline
package enum LockPrimitive {
  #if canImport(Darwin)
    @usableFromInline package typealias Storage = os_unfair_lock
  #else
    @usableFromInline package typealias Storage = pthread_mutex_t
  #endif

  @inlinable
  static func initialize(_ lock: UnsafeMutablePointer<Storage>) {
    #if canImport(Darwin)
      lock.initialize(to: os_unfair_lock())
    #else
      var attributes = pthread_mutexattr_t()
      pthread_mutexattr_init(&attributes)
      #if canImport(Glibc)
        // Spinning briefly before sleeping keeps throughput up when several tasks dispatch at once: the
        // critical sections are a few nanoseconds long, far shorter than a futex sleep and wake-up.
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
      #endif
      let result = pthread_mutex_init(lock, &attributes)
      pthread_mutexattr_destroy(&attributes)
      // Internal invariant: initialising a mutex in memory we own cannot fail short of memory corruption.
      precondition(result == 0, "pthread_mutex_init failed: \(result)")
    #endif
  }

  @inlinable
  static func deinitialize(_ lock: UnsafeMutablePointer<Storage>) {
    #if !canImport(Darwin)
      pthread_mutex_destroy(lock)
    #endif
    lock.deinitialize(count: 1)
  }

  @inlinable @inline(__always)
  static func lock(_ lock: UnsafeMutablePointer<Storage>) {
    #if canImport(Darwin)
      os_unfair_lock_lock(lock)
    #else
      pthread_mutex_lock(lock)
    #endif
  }

  #if KATANA_CONTENTION_COUNTERS
    /// Takes the lock if it is free, without waiting; returns whether it did. Only in the contention gate's build.
    @inlinable @inline(__always)
    static func tryLock(_ lock: UnsafeMutablePointer<Storage>) -> Bool {
      #if canImport(Darwin)
        os_unfair_lock_trylock(lock)
      #else
        pthread_mutex_trylock(lock) == 0
      #endif
    }
  #endif

  @inlinable @inline(__always)
  static func unlock(_ lock: UnsafeMutablePointer<Storage>) {
    #if canImport(Darwin)
      os_unfair_lock_unlock(lock)
    #else
      pthread_mutex_unlock(lock)
    #endif
  }
}

/// A value guarded by a lock, stored with the lock in one allocation. Package-visible: KatanaPromises uses it too.
///
/// Access goes through raw pointers, so the hot path pays for neither a second allocation nor Swift's
/// dynamic exclusivity checks on class properties. Never call code that can re-enter the store from inside
/// `withLock`.
///
/// Not final, so that a type that needs more than a value and a lock (a dispatch handle's storage) can be
/// one allocation too, by subclassing it; its members are final.
@usableFromInline
package class LockedBuffer<Value>: ManagedBuffer<Value, LockPrimitive.Storage> {
  /// Creates a buffer (of the class it is called on) holding `value`.
  @inlinable
  package static func make(_ value: Value) -> Self {
    let buffer = create(minimumCapacity: 1) { _ in value }
    buffer.withUnsafeMutablePointerToElements { LockPrimitive.initialize($0) }
    // Internal invariant: `create` called on a class returns an instance of that class.
    return unsafeDowncast(buffer, to: Self.self)
  }

  @inlinable
  deinit {
    // ManagedBuffer destroys the header (the value) itself; the lock, stored as the element, is ours.
    withUnsafeMutablePointerToElements { LockPrimitive.deinitialize($0) }
  }

  /// Runs `body` with exclusive access to the value.
  @inlinable @inline(__always)
  package final func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try withUnsafeMutablePointers { value, lock in
      LockPrimitive.lock(lock)
      defer { LockPrimitive.unlock(lock) }
      return try body(&value.pointee)
    }
  }

  #if KATANA_CONTENTION_COUNTERS
    /// ``withLock(_:)`` that also tells `body` whether the lock was taken when it asked (it then waited): the
    /// contention gate's build counts the contended path with it.
    @inlinable @inline(__always)
    package final func withLockNotingContention<Result>(_ body: (inout Value, _ contended: Bool) throws -> Result)
      rethrows -> Result
    {
      try withUnsafeMutablePointers { value, lock in
        let contended = !LockPrimitive.tryLock(lock)
        if contended { LockPrimitive.lock(lock) }
        defer { LockPrimitive.unlock(lock) }
        return try body(&value.pointee, contended)
      }
    }
  #endif
}

/// A `Sendable` wrapper around ``LockedBuffer`` for values that are only ever touched under the lock.
@usableFromInline
package struct Locked<Value>: @unchecked Sendable {  // Sendable: every access to `Value` holds the lock.
  @usableFromInline let buffer: LockedBuffer<Value>

  @inlinable
  package init(_ value: Value) {
    buffer = LockedBuffer.make(value)
  }

  @inlinable @inline(__always)
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try buffer.withLock(body)
  }
}
