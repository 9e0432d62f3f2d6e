/// Reports each dispatch a store handles (its kind, type, start, duration and outcome), on every platform,
/// so that an application or a server can feed its metrics (for tracing spans, see <doc:Interceptors>).
///
/// ```swift
/// let store = Store<AppState, AppDependencies>(interceptors: [
///   DispatchInstrumentation.interceptor { event in
///     if event.duration > .milliseconds(100) {
///       print("slow \(event.kind): \(event.typeName) took \(event.duration)")
///     }
///   }
/// ])
/// ```
///
/// Instrumentation comes in two forms. ``observer(_:)``, a ``DispatchObserver`` in the store's configuration,
/// costs a few nanoseconds, two reads of a monotonic clock and the report per item, and measures each item from
/// when it entered the store. ``interceptor(_:)`` costs an async call per dispatch (see <doc:Performance>),
/// measures only the handling after it in the chain, and reports state updaters one at a time in the order the
/// store applied them. A store with neither pays nothing.
///
/// - Important: With the interceptor, `report` runs in the dispatching task, once the item has been handled. For a state updater
///   that is while the updater still holds the store's turn: keep `report` short (hand the event to your
///   metrics system and return); state updaters are reported one at a time, in the order the store applied
///   them. Side effects are reported concurrently: `report` must be thread-safe.
public enum DispatchInstrumentation {
  /// One handled dispatch.
  public struct Event: Sendable {
    /// Whether an item is a state updater or a side effect.
    public enum Kind: Sendable, Hashable {
      /// A ``StateUpdater`` or ``AnyStateUpdater``.
      case stateUpdater
      /// A ``SideEffect``, ``ReturningSideEffect`` or ``AnySideEffect``.
      case sideEffect
    }

    /// How handling the item ended.
    public enum Outcome: Sendable {
      /// Handling returned normally (this includes an item that a later interceptor dropped without
      /// throwing).
      case completed
      /// Handling threw this error: the side effect's, an interceptor's, or a ``StoreError``.
      case failed(any Error)
    }

    /// The item, as the instrumentation interceptor received it.
    public let dispatchable: any Dispatchable
    /// When the interceptor handed the item on.
    public let start: ContinuousClock.Instant
    /// How long handling the item took, from `start` until it was handled. For a state updater this is
    /// measured while it holds its turn: the time it waited in the mailbox is not included.
    public let duration: Duration
    /// How handling the item ended.
    public let outcome: Outcome

    /// Creates an event (for example to test the code that receives events).
    public init(dispatchable: any Dispatchable, start: ContinuousClock.Instant, duration: Duration, outcome: Outcome) {
      self.dispatchable = dispatchable
      self.start = start
      self.duration = duration
      self.outcome = outcome
    }

    /// Whether the item is a state updater or a side effect.
    ///
    /// Computed on each access (a dynamic cast, about 100 ns on the reference machine), so that the
    /// interceptor spends nothing on what the report does not read.
    public var kind: Kind {
      dispatchable is any AnySideEffect ? .sideEffect : .stateUpdater
    }

    /// The item's type.
    public var dispatchableType: any Dispatchable.Type {
      type(of: dispatchable)
    }

    /// The fully qualified name of the item's type, for example `MyApp.AddTodo`.
    ///
    /// Computed on each access, which takes a microsecond or two: to aggregate many events, key them by
    /// `ObjectIdentifier(event.dispatchableType)` and compute each name once.
    public var typeName: String {
      String(reflecting: dispatchableType)
    }

    /// Whether handling returned normally.
    public var succeeded: Bool {
      if case .completed = outcome { return true }
      return false
    }
  }

  /// Returns a dispatch observer that calls `report` once for each item the store handles, after it has been
  /// handled, whether handling succeeded or threw: the cheap form, a few nanoseconds and two clock readings
  /// per item where ``interceptor(_:)`` costs an async call (see <doc:Performance>).
  ///
  /// ```swift
  /// let store = Store<AppState, AppDependencies>(
  ///   configuration: StoreConfiguration(dispatchObservers: [
  ///     DispatchInstrumentation.observer { event in metrics.record(event.typeName, event.duration) }
  ///   ]))
  /// ```
  ///
  /// It differs from the interceptor in what it measures and where `report` runs (see ``DispatchObserver``):
  /// - it sees every item as it enters the store, before any interceptor, including items an interceptor then
  ///   rejects (reported as failed with the interceptor's error);
  /// - `start` is when the item entered the store: a state updater's duration includes the time it waited for
  ///   its turn in the mailbox, and a sent item's runs until its handle settled;
  /// - reports are not serialised with commits: updaters dispatched concurrently may be reported concurrently,
  ///   and in another order than the store applied them. `report` must be thread-safe.
  public static func observer(_ report: @escaping @Sendable (Event) -> Void) -> DispatchObserver {
    .measuring(report)
  }

  /// Returns an interceptor that calls `report` once for each item it hands on, after the item has been
  /// handled, whether handling succeeded or threw.
  ///
  /// Where it sits in the interceptor array decides what it measures: first, it times the whole chain and
  /// sees every dispatch; last, it times the store's own handling of exactly the items that reach the
  /// store.
  ///
  /// - Parameter report: Receives each event; see ``DispatchInstrumentation`` for where it runs.
  public static func interceptor(_ report: @escaping @Sendable (Event) -> Void) -> StoreInterceptor {
    { _ in
      { next in
        { dispatchable in
          let clock = ContinuousClock()
          let start = clock.now
          do {
            try await next(dispatchable)
          } catch {
            report(
              Event(
                dispatchable: dispatchable, start: start, duration: start.duration(to: clock.now),
                outcome: .failed(error)))
            throw error
          }
          report(
            Event(
              dispatchable: dispatchable, start: start, duration: start.duration(to: clock.now),
              outcome: .completed))
        }
      }
    }
  }
}
