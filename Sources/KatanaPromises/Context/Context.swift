import Dispatch

/// Where a promise runs your code: the main queue, a global queue of some quality of service, or a queue
/// of yours.
///
/// Every operator that calls one of your closures takes an `in context:` argument; when you leave it out,
/// each operator uses Hydra's default (``Promise/then(in:_:)-(Context?,(Value)->N)`` and
/// ``Promise/catch(in:_:)`` run on ``main``, ``Promise/always(in:body:)`` and most others on
/// ``background``). Promise bodies run on ``background`` unless you say otherwise.
///
/// - Important: Code on ``main`` runs only while something services the main queue: an app's run loop,
///   `dispatchMain()`, a `@MainActor` program, an XCTest wait, or ``Hydra/await(in:_:)-(Context?,Promise<T>)``
///   called on the main thread. In a command-line tool or a server that never does, pass another context.
public enum Context: Sendable {
  /// The main queue.
  case main
  /// The global queue for work the user is interacting with.
  case userInteractive
  /// The global queue for work the user started and waits for.
  case userInitiated
  /// The global queue for long-running work the user is not waiting for.
  case utility
  /// The global queue for background work.
  case background
  /// A queue of yours.
  case custom(queue: DispatchQueue)

  /// The dispatch queue behind this context.
  public var queue: DispatchQueue {
    switch self {
    case .main: .main
    case .userInteractive: .global(qos: .userInteractive)
    case .userInitiated: .global(qos: .userInitiated)
    case .utility: .global(qos: .utility)
    case .background: .global(qos: .background)
    case .custom(let queue): queue
    }
  }

  /// Whether this context is the main queue (``main``, or ``custom(queue:)`` with the main queue).
  @usableFromInline
  var isMain: Bool {
    switch self {
    case .main: true
    case .custom(let queue): MainQueueJobs.isMainQueue(queue)
    default: false
    }
  }

  /// Runs `job` asynchronously on this context.
  ///
  /// Jobs for the main queue go through ``MainQueueJobs``, so that a blocking wait on the main thread can
  /// run them itself instead of deadlocking.
  @usableFromInline
  func schedule(_ job: @escaping @Sendable () -> Void) {
    if isMain {
      MainQueueJobs.enqueue(job)
    } else {
      queue.async(execute: job)
    }
  }

  /// Runs `job` on this context after `seconds` (never, for delays of more than 30 years).
  @usableFromInline
  func schedule(after seconds: Double, _ job: @escaping @Sendable () -> Void) {
    guard let deadline = Self.deadline(after: seconds) else { return }
    if isMain {
      DispatchQueue.global(qos: .userInteractive).asyncAfter(deadline: deadline) { MainQueueJobs.enqueue(job) }
    } else {
      queue.asyncAfter(deadline: deadline, execute: job)
    }
  }

  /// `now + seconds`, or nil for "never" (about 31 years or more: `DispatchTime + Double` traps on huge or
  /// infinite values, and `asyncAfter` does not take `.distantFuture`).
  static func deadline(after seconds: Double) -> DispatchTime? {
    guard seconds > 0 else { return .now() }
    guard seconds < 1e9 else { return nil }
    return .now() + seconds
  }
}
