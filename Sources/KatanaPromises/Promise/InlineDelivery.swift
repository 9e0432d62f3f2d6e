#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Notifies observers without unbounded recursion.
///
/// Outcomes that an operator does not handle (a rejection reaching a `then`, a value reaching a `catch`)
/// pass to the next promise at once, on the settling thread, without a queue hop. A rejection at the head of
/// a long chain (a `reduce` over 10,000 items builds one) would then recurse once per promise and could
/// overflow a thread's stack. Instead, the first notification on a thread drains a per-thread list, and
/// notifications that happen while it drains are appended to that list: the stack stays flat.
@usableFromInline
enum InlineDelivery {
  /// The notifications waiting on one thread.
  @usableFromInline
  final class PendingList {
    @usableFromInline var jobs: [() -> Void] = []
    @usableFromInline var isDraining = false

    init() {}
  }

  /// Notifies `observers` of `outcome` now, or after the notification this thread is already running.
  @inlinable
  static func notify<Value>(_ observers: ObserverList<Value>, of outcome: PromiseOutcome<Value>) {
    if case .none = observers { return }
    let list = currentList
    if list.isDraining {
      list.jobs.append { observers.notify(outcome) }
      return
    }
    list.isDraining = true
    observers.notify(outcome)
    var index = 0
    while index < list.jobs.count {
      let job = list.jobs[index]
      index += 1
      job()
    }
    list.jobs.removeAll(keepingCapacity: list.jobs.count <= 64)
    list.isDraining = false
  }

  /// This thread's list, created on first use and released when the thread exits.
  @usableFromInline
  static var currentList: PendingList {
    if let pointer = pthread_getspecific(listKey) {
      return Unmanaged<PendingList>.fromOpaque(pointer).takeUnretainedValue()
    }
    let list = PendingList()
    pthread_setspecific(listKey, Unmanaged.passRetained(list).toOpaque())
    return list
  }

  private static let listKey: pthread_key_t = {
    var key = pthread_key_t()
    #if canImport(Darwin)
      let result = pthread_key_create(&key) { Unmanaged<PendingList>.fromOpaque($0).release() }
    #else
      let result = pthread_key_create(&key) { pointer in
        guard let pointer else { return }
        Unmanaged<PendingList>.fromOpaque(pointer).release()
      }
    #endif
    // Internal invariant: a process has room for hundreds of keys; this module creates two.
    precondition(result == 0, "pthread_key_create failed: \(result)")
    return key
  }()
}
