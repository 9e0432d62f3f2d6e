/// The buffer between a store (producer) and one stream consumer: bounded, single-consumer, with
/// cancellation.
///
/// The store pushes while holding its turn but outside its lock; the consumer pops from its own task. The
/// two only share this buffer's lock, so a slow consumer never slows dispatch down. The consumer waits with
/// the package's waiter primitive (``Waiters``); elements the buffer drops are released after unlocking.
@usableFromInline
final class StreamBuffer<Element: Sendable>: @unchecked Sendable {  // Sendable: `state` is behind its lock.
  @usableFromInline typealias Waiter = UnsafeContinuation<Element?, any Error>

  @usableFromInline
  struct State {
    @usableFromInline var elements = RingBuffer<Element>()
    @usableFromInline var waiters = Waiters<Waiter>()
    /// The consumer's waiter, while it waits for an element.
    @usableFromInline var waiting: UInt64?
    @usableFromInline var isFinished = false
    var onTermination: (@Sendable () -> Void)?

    @inlinable
    init() {}

    /// Ends the consumer's wait, if it waits, with `element`.
    @inlinable
    mutating func wake(with element: Element?) -> Resumption<Waiter>? {
      guard let id = waiting else { return nil }
      waiting = nil
      return waiters.resolve(id, with: .success(element))
    }
  }

  @usableFromInline
  enum Next {
    case element(Element?)
    case wait(UInt64)
  }

  @usableFromInline let policy: StreamBuffering
  @usableFromInline let state = Locked(State())

  @inlinable
  init(policy: StreamBuffering) {
    self.policy = policy
  }

  /// Registers what to do when the consumer goes away (cancelled or iterator released).
  @usableFromInline func setOnTermination(_ handler: @escaping @Sendable () -> Void) {
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
    let (resumption, dropped) = state.withLock { state -> (Resumption<Waiter>?, Element?) in
      guard !state.isFinished else { return (nil, nil) }
      if state.waiting != nil { return (state.wake(with: element), nil) }
      if state.elements.count < policy.limit {
        state.elements.append(element)
        return (nil, nil)
      }
      guard case .bufferingNewest = policy else { return (nil, nil) }
      let dropped = state.elements.removeFirst()
      state.elements.append(element)
      return (nil, dropped)
    }
    resumption?.perform()
    withExtendedLifetime(dropped) {}
  }

  /// Ends the stream from the producer side: buffered elements are still delivered, then `nil`.
  @usableFromInline func finish() {
    let (resumption, onTermination) = state.withLock { state in
      state.isFinished = true
      defer { state.onTermination = nil }
      return (state.wake(with: nil), state.onTermination)
    }
    resumption?.perform()
    withExtendedLifetime(onTermination) {}
  }

  /// Ends the stream from the consumer side: drops buffered elements and runs the termination handler.
  @usableFromInline func cancel() {
    let (resumption, dropped, onTermination) = state.withLock { state in
      state.isFinished = true
      defer { state.onTermination = nil }
      return (state.wake(with: nil), state.elements.removeAll(), state.onTermination)
    }
    resumption?.perform()
    withExtendedLifetime(dropped) {}
    onTermination?()
  }

  /// The next element, or nil once the stream has finished or the consuming task is cancelled.
  @inlinable
  func next() async -> Element? {
    if Task.isCancelled {
      cancel()
      return nil
    }
    let next = state.withLock { state -> Next in
      if let element = state.elements.removeFirst() { return .element(element) }
      if state.isFinished { return .element(nil) }
      let id = state.waiters.add()
      state.waiting = id
      return .wait(id)
    }
    guard case .wait(let id) = next else {
      if case .element(let element) = next { return element }
      return nil
    }
    let element: Element?
    do {
      element = try await state.suspend(
        install: { state, continuation in state.waiters.suspend(id, on: continuation) },
        cancel: { state in state.waiting == id ? state.wake(with: nil)?.afterUnlock : nil })
    } catch {
      // Internal invariant: the outcomes above are never errors.
      element = nil
    }
    if element == nil, Task.isCancelled {
      cancel()
    }
    return element
  }

  /// The number of buffered elements (tests check the bound).
  var bufferedCount: Int {
    state.withLock { $0.elements.count }
  }

  /// Whether the buffer is finished and empty: nothing will ever come out of it (the subscription was made after
  /// the store shut down, or everything it held was taken).
  var isExhausted: Bool {
    state.withLock { $0.isFinished && $0.elements.isEmpty }
  }
}

extension Locked: WaiterLock {
  @usableFromInline package typealias Protected = Value
}
