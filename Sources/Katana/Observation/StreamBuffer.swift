/// The buffer between a store (producer) and one stream consumer: bounded, single-consumer, with
/// cancellation.
///
/// The store pushes while holding its turn but outside its lock; the consumer pops from its own task. The
/// two only share this buffer's lock, so a slow consumer never slows dispatch down.
@usableFromInline
final class StreamBuffer<Element: Sendable>: @unchecked Sendable {  // Sendable: `state` is behind its lock.
  @usableFromInline
  struct State {
    @usableFromInline var elements = RingBuffer<Element>()
    @usableFromInline var waiter: UnsafeContinuation<Element?, Never>?
    @usableFromInline var isFinished = false
    @usableFromInline var onTermination: (@Sendable () -> Void)?

    @inlinable
    init() {}
  }

  @usableFromInline let policy: StreamBuffering
  @usableFromInline let state = Locked(State())

  @inlinable
  init(policy: StreamBuffering) {
    self.policy = policy
  }

  /// Registers what to do when the consumer goes away (cancelled or iterator released).
  @inlinable
  func setOnTermination(_ handler: @escaping @Sendable () -> Void) {
    let runNow: Bool = state.withLock { state in
      if state.isFinished { return true }
      state.onTermination = handler
      return false
    }
    if runNow { handler() }
  }

  /// Delivers `element`, directly to a waiting consumer or into the buffer per the buffering policy.
  @inlinable
  func push(_ element: Element) {
    let waiter: UnsafeContinuation<Element?, Never>? = state.withLock { state in
      guard !state.isFinished else { return nil }
      if let waiter = state.waiter {
        state.waiter = nil
        return waiter
      }
      if state.elements.count < policy.limit {
        state.elements.append(element)
      } else if case .bufferingNewest = policy {
        state.elements.removeFirst()
        state.elements.append(element)
      }
      return nil
    }
    waiter?.resume(returning: element)
  }

  /// Ends the stream from the producer side: buffered elements are still delivered, then `nil`.
  @inlinable
  func finish() {
    let waiter: UnsafeContinuation<Element?, Never>? = state.withLock { state in
      state.isFinished = true
      state.onTermination = nil
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume(returning: nil)
  }

  /// Ends the stream from the consumer side: drops buffered elements and runs the termination handler.
  @inlinable
  func cancel() {
    let (waiter, onTermination) = state.withLock { state in
      state.isFinished = true
      _ = state.elements.removeAll()
      defer {
        state.waiter = nil
        state.onTermination = nil
      }
      return (state.waiter, state.onTermination)
    }
    waiter?.resume(returning: nil)
    onTermination?()
  }

  /// The next element, or nil once the stream has finished or the consuming task is cancelled.
  @inlinable
  func next() async -> Element? {
    await withTaskCancellationHandler {
      await withUnsafeContinuation { (continuation: UnsafeContinuation<Element?, Never>) in
        let immediate: Element?? = state.withLock { state in
          if let element = state.elements.removeFirst() { return .some(element) }
          if state.isFinished { return .some(nil) }
          state.waiter = continuation
          return .none
        }
        if let immediate {
          continuation.resume(returning: immediate)
        }
      }
    } onCancel: {
      cancel()
    }
  }

  /// The number of buffered elements (tests check the bound).
  @inlinable
  var bufferedCount: Int {
    state.withLock { $0.elements.count }
  }
}
