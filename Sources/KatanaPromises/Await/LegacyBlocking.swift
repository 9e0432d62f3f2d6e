import Dispatch

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Marks threads and queues on which ``Hydra/await(in:_:)-(Context?,Promise<T>)`` may block even inside a
/// Swift task: the dedicated threads that run Katana 6's synchronous side effects.
///
/// Outside any task, blocking waits are always allowed (as in Hydra). Inside a task they throw
/// ``PromiseError/invalidContext``, because a blocked cooperative thread can starve the whole pool. Code
/// that runs tasks' work on threads of its own (a custom executor, a thread per legacy side effect) marks
/// them with these functions, so that legacy code blocking there keeps working.
package enum LegacyBlocking {
  /// Runs `body` with the calling thread marked as allowed to block.
  package static func allowingBlocking<Result>(_ body: () throws -> Result) rethrows -> Result {
    let previous = pthread_getspecific(threadKey)
    pthread_setspecific(threadKey, marker)
    defer { pthread_setspecific(threadKey, previous) }
    return try body()
  }

  /// Marks the calling thread as allowed to block, until it exits: for threads you create and own.
  package static func allowBlockingOnCurrentThread() {
    pthread_setspecific(threadKey, marker)
  }

  /// Marks `queue` (and the queues that target it) as allowed to block: every block it runs may wait.
  package static func allowBlocking(on queue: DispatchQueue) {
    queue.setSpecific(key: queueKey.key, value: ())
  }

  /// Whether the calling thread, or the queue it is running, was marked as allowed to block.
  package static var isBlockingAllowed: Bool {
    pthread_getspecific(threadKey) != nil || DispatchQueue.getSpecific(key: queueKey.key) != nil
  }

  /// Any non-nil value: the key's presence is the mark.
  private static var marker: UnsafeRawPointer? { UnsafeRawPointer(bitPattern: 1) }

  private static let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    let result = pthread_key_create(&key, nil)
    // Internal invariant: a process has room for hundreds of keys; this module creates two.
    precondition(result == 0, "pthread_key_create failed: \(result)")
    return key
  }()

  private static let queueKey = SpecificKey()
}

/// A dispatch-specific key, shared between threads. `DispatchSpecificKey` has no state of its own: only its
/// identity is used.
struct SpecificKey: @unchecked Sendable {
  let key = DispatchSpecificKey<Void>()
}
