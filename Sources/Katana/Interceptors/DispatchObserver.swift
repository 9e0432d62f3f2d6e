/// Sees every item a store handles, before and after, without taking part: the non-suspending form of an
/// interceptor, for code that only observes (logs, measures, counts).
///
/// ```swift
/// let store = Store<AppState, AppDependencies>(
///   configuration: StoreConfiguration(dispatchObservers: [
///     DispatchObserver(didHandle: { item, outcome in
///       if case .failed(let error) = outcome { print("\(item.debugDescription) failed: \(error)") }
///     }),
///     DispatchInstrumentation.observer { event in print(event.typeName, event.duration) },
///   ]))
/// ```
///
/// An observer is two plain synchronous functions, so it costs a few nanoseconds per dispatch where a
/// pass-through ``StoreInterceptor`` costs an async call and keeps the item's state updater holding the
/// store's turn while it runs (see <doc:Performance>). It cannot change, delay or reject an item: for that,
/// write an interceptor.
///
/// When they are called:
/// - `willHandle` when the item enters the store: in the dispatching task for `dispatch`, on the sending
///   thread for `send`, before any interceptor sees it;
/// - `didHandle` once the item has been handled, with how handling ended: for `dispatch`, in the dispatching
///   task right before the dispatch returns or throws; for `send`, wherever the item's handle settles (the
///   sending thread if the store applied the updater at once, otherwise the task that finished the item).
///   A sent item withdrawn before its turn, or failed at shutdown, ends with that error. A `send` from inside a
///   state updater, which the store refuses, is not observed (the updater holds the store's lock).
///
/// Each item gets exactly one `willHandle` and then exactly one `didHandle`, observers in array order. An item
/// dispatched through a scope is observed as the feature dispatched it (interceptors see it wrapped in a
/// ``ScopedDispatchable``); an item an interceptor substitutes with one of the other kind is observed again,
/// as the new item it becomes.
///
/// - Important: Observers run outside the store's lock and outside any updater's turn, concurrently for
///   concurrent dispatches, and are not ordered with commits: two tasks' updaters may be reported in an order
///   other than the one the store applied them in. They must be thread-safe and quick. To see updaters one at
///   a time in commit order, use a listener (the state) or an interceptor (the items).
public struct DispatchObserver: Sendable {
  /// How handling an item ended.
  public typealias Outcome = DispatchInstrumentation.Event.Outcome

  @usableFromInline let willHandle: (@Sendable (_ item: any Dispatchable) -> Void)?
  @usableFromInline let didHandle: (@Sendable (_ item: any Dispatchable, _ outcome: Outcome) -> Void)?
  /// Set by ``measuring(_:)``: the store reads the clock before and after handling the item.
  @usableFromInline let measured: (@Sendable (_ event: DispatchInstrumentation.Event) -> Void)?

  /// Creates an observer from functions called before and after each item is handled.
  ///
  /// - Parameters:
  ///   - willHandle: Called with each item as it enters the store.
  ///   - didHandle: Called with each item once it has been handled, and how handling ended.
  public init(
    willHandle: (@Sendable (_ item: any Dispatchable) -> Void)? = nil,
    didHandle: (@Sendable (_ item: any Dispatchable, _ outcome: Outcome) -> Void)? = nil
  ) {
    self.willHandle = willHandle
    self.didHandle = didHandle
    self.measured = nil
  }

  /// Returns an observer that reports each handled item with when it entered the store and how long it took
  /// until it had been handled (``DispatchInstrumentation/Event``).
  ///
  /// The store reads a monotonic clock before and after each item when at least one of its observers measures
  /// (two readings per item, shared by every measuring observer). The duration includes the time a state
  /// updater waited for its turn in the mailbox.
  public static func measuring(_ report: @escaping @Sendable (_ event: DispatchInstrumentation.Event) -> Void)
    -> DispatchObserver
  {
    DispatchObserver(measured: report)
  }

  private init(measured: @escaping @Sendable (DispatchInstrumentation.Event) -> Void) {
    self.willHandle = nil
    self.didHandle = nil
    self.measured = measured
  }
}

/// A store's observers, fixed at initialisation: what the dispatch paths call around each item.
///
/// The observers' functions are composed once, here, into one function per kind, each calling the next in
/// array order: a dispatch then makes one call per kind, reading immutable properties of this object, with
/// no copy of the observers (iterating over an array of them retained and released every closure context,
/// 56 ns per observer in the benchmarks).
@usableFromInline
final class DispatchObservers: Sendable {
  @usableFromInline let willHandle: (@Sendable (_ item: any Dispatchable) -> Void)?
  @usableFromInline let didHandle: (@Sendable (_ item: any Dispatchable, _ outcome: DispatchObserver.Outcome) -> Void)?
  @usableFromInline let measured: (@Sendable (_ event: DispatchInstrumentation.Event) -> Void)?
  /// The store's updater-thread marker: a `send` from inside a state updater, which the store refuses, runs under
  /// the store's lock, where no observer may run.
  @usableFromInline let owner: ThreadOwner

  /// The observers, or nil for none (the dispatch paths then test one nil and pay nothing else).
  static func make(_ observers: [DispatchObserver], owner: ThreadOwner) -> DispatchObservers? {
    observers.isEmpty ? nil : DispatchObservers(observers, owner: owner)
  }

  // Concrete loops rather than a generic helper or `compactMap`: functions passed through generic code (or kept in
  // an array) are re-abstracted, and each call then goes through thunks.
  private init(_ observers: [DispatchObserver], owner: ThreadOwner) {
    self.owner = owner
    var willHandle: (@Sendable (_ item: any Dispatchable) -> Void)?
    var didHandle: (@Sendable (_ item: any Dispatchable, _ outcome: DispatchObserver.Outcome) -> Void)?
    var measured: (@Sendable (_ event: DispatchInstrumentation.Event) -> Void)?
    for observer in observers {
      if let next = observer.willHandle {
        if let previous = willHandle {
          willHandle = { @Sendable item in
            previous(item)
            next(item)
          }
        } else {
          willHandle = next
        }
      }
      if let next = observer.didHandle {
        if let previous = didHandle {
          didHandle = { @Sendable item, outcome in
            previous(item, outcome)
            next(item, outcome)
          }
        } else {
          didHandle = next
        }
      }
      if let next = observer.measured {
        if let previous = measured {
          measured = { @Sendable event in
            previous(event)
            next(event)
          }
        } else {
          measured = next
        }
      }
    }
    self.willHandle = willHandle
    self.didHandle = didHandle
    self.measured = measured
  }

  /// Calls every `willHandle`, and returns when handling starts if an observer measures.
  @inlinable
  func willHandle(_ item: any Dispatchable) -> ContinuousClock.Instant? {
    willHandle?(item)
    return measured == nil ? nil : ContinuousClock.now
  }

  /// Calls every `didHandle` (and every measuring observer's report) with how handling ended.
  @inlinable
  func didHandle(_ item: any Dispatchable, start: ContinuousClock.Instant?, error: (any Error)?) {
    let outcome: DispatchObserver.Outcome = error.map { .failed($0) } ?? .completed
    didHandle?(item, outcome)
    if let measured, let start {
      measured(
        DispatchInstrumentation.Event(
          dispatchable: item, start: start, duration: start.duration(to: .now), outcome: outcome))
    }
  }

  /// Runs `body` between `willHandle` and `didHandle` for `item`, and returns or rethrows what it did.
  @inlinable
  nonisolated(nonsending) func observe<T>(
    _ item: any Dispatchable, _ body: nonisolated(nonsending) () async throws -> T
  )
    async throws -> T
  {
    let start = willHandle(item)
    do {
      let value = try await body()
      didHandle(item, start: start, error: nil)
      return value
    } catch {
      didHandle(item, start: start, error: error)
      throw error
    }
  }

  /// Calls `willHandle` now, and `didHandle` once `handle` settles; neither for a `send` from inside a state
  /// updater (the store refuses it, under its lock).
  @inlinable
  func observe<Value>(_ item: any Dispatchable, _ send: () -> DispatchHandle<Value>) -> DispatchHandle<Value> {
    guard !owner.isCurrentThread else { return send() }
    let start = willHandle(item)
    let handle = send()
    handle.whenComplete { [self] result in
      switch result {
      case .success: didHandle(item, start: start, error: nil)
      case .failure(let error): didHandle(item, start: start, error: error)
      }
    }
    return handle
  }
}
