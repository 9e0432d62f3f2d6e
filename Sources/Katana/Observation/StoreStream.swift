/// An asynchronous sequence of values from a store: states, changes or projections.
///
/// Each iteration (each `for await` loop) is an independent subscriber with its own bounded buffer (see
/// ``StreamBuffering``), registered when the loop starts. The sequence finishes when the store shuts down
/// or is released; leaving the loop or cancelling the consuming task unregisters the subscriber.
///
/// ```swift
/// for await count in store.values(of: \.todos.count) {
///   render(count)
/// }
/// ```
public struct StoreStream<Element: Sendable>: AsyncSequence, Sendable {
  /// Store streams never throw.
  public typealias Failure = Never

  @usableFromInline let subscribe: @Sendable () -> StreamBuffer<Element>

  @inlinable
  init(subscribe: @escaping @Sendable () -> StreamBuffer<Element>) {
    self.subscribe = subscribe
  }

  /// Subscribes to the store and returns the iterator of this new subscription.
  public func makeAsyncIterator() -> Iterator {
    Iterator(subscription: Subscription(buffer: subscribe()))
  }

  /// Iterates one subscription. Releasing the last copy of the iterator unregisters the subscriber.
  public struct Iterator: AsyncIteratorProtocol {
    fileprivate let subscription: Subscription

    /// The next element, or nil when the store has shut down or the consuming task is cancelled.
    public mutating func next() async -> Element? {
      await subscription.buffer.next()
    }

    /// The number of elements the subscription holds, not yet consumed (tests read it).
    var bufferedCount: Int {
      subscription.buffer.bufferedCount
    }
  }

  /// Ends the subscription when the last iterator copy goes away.
  fileprivate final class Subscription: Sendable {
    let buffer: StreamBuffer<Element>

    init(buffer: StreamBuffer<Element>) {
      self.buffer = buffer
    }

    deinit {
      buffer.cancel()
    }
  }
}

@available(*, unavailable)
extension StoreStream.Iterator: Sendable {}
