/// Logs every item a store handled successfully: Katana 6's logger, with a pluggable output.
///
/// ```swift
/// let store = Store<AppState, AppDependencies>(interceptors: [
///   DispatchableLogger.interceptor(blackList: [Tick.self])
/// ])
/// try await store.dispatch(AddTodo(title: "milk"))  // prints "[Dispatchable]: MyApp.AddTodo"
/// ```
///
/// The interceptor hands each item on, and once the item has been handled without an error, passes it to
/// the sink, unless the item's exact type is in the black list. The default sink prints
/// ``message(for:)`` to standard output; pass your own to route the log to swift-log, `os.Logger` or a
/// test recorder (<doc:Interceptors> shows a swift-log bridge).
///
/// What it logs, precisely:
/// - an item whose handling threw (a failing side effect, an interceptor after the logger that threw):
///   nothing;
/// - an item that an interceptor **before** the logger rejected or swallowed: nothing, the logger never
///   sees it;
/// - an item that an interceptor **after** the logger swallowed (returned without calling `next` and
///   without throwing): logged, since the logger cannot tell it from success;
/// - a side effect: once its body has returned;
/// - the item as the logger received it, even if a later interceptor handed `next` a replacement.
///
/// - Important: The sink runs in the dispatching task, right after the item was handled. For a state
///   updater that is while the updater still holds the store's turn, so state updaters are logged one at
///   a time, in the order the store applied them, but a slow sink delays the next updater. Side effects
///   are logged concurrently: a sink must be thread-safe.
public enum DispatchableLogger {
  /// Receives each item the logger logs.
  public typealias Sink = @Sendable (_ dispatchable: any Dispatchable) -> Void

  /// The default sink: prints ``message(for:)`` to standard output.
  public static let standardOutput: Sink = { dispatchable in
    print(message(for: dispatchable))
  }

  /// Katana 6's log line for an item: `[Dispatchable]: ` followed by the item's fully qualified type name
  /// (``Dispatchable/debugDescription``).
  public static func message(for dispatchable: any Dispatchable) -> String {
    "[Dispatchable]: \(dispatchable.debugDescription)"
  }

  /// Returns a dispatch observer that passes every successfully handled item to `sink`, except items whose
  /// exact type is in `blackList`: the cheap form, a few nanoseconds per item where ``interceptor(blackList:sink:)``
  /// costs an async call (see <doc:Performance>).
  ///
  /// ```swift
  /// let store = Store<AppState, AppDependencies>(
  ///   configuration: StoreConfiguration(dispatchObservers: [DispatchableLogger.observer(blackList: [Tick.self])]))
  /// ```
  ///
  /// It logs each item as it entered the store, once handling succeeded, before any interceptor saw it: an
  /// item an interceptor rejected is not logged, one an interceptor swallowed or replaced is (as dispatched).
  /// The sink runs outside the store's turn (see ``DispatchObserver``): state updaters dispatched concurrently
  /// may be logged concurrently, and in another order than the store applied them. For Katana 6's order, one
  /// updater at a time as applied, use the interceptor.
  ///
  /// - Parameters:
  ///   - blackList: Types not to log, matched by exact type.
  ///   - sink: Where log entries go; ``standardOutput`` by default. Must be thread-safe.
  public static func observer(blackList: [any Dispatchable.Type] = [], sink: @escaping Sink = standardOutput)
    -> DispatchObserver
  {
    let excluded = Set(blackList.map { ObjectIdentifier($0) })
    return DispatchObserver(didHandle: { dispatchable, outcome in
      guard case .completed = outcome else { return }
      if excluded.isEmpty || !excluded.contains(ObjectIdentifier(type(of: dispatchable))) {
        sink(dispatchable)
      }
    })
  }

  /// Returns an interceptor that passes every successfully handled item to `sink`, except items whose
  /// exact type is in `blackList`.
  ///
  /// - Parameters:
  ///   - blackList: Types not to log. Matching is by exact type: a subclass of a listed class, or a
  ///     type conforming to a listed protocol, is still logged.
  ///   - sink: Where log entries go; ``standardOutput`` by default.
  public static func interceptor(blackList: [any Dispatchable.Type] = [], sink: @escaping Sink = standardOutput)
    -> StoreInterceptor
  {
    let excluded = Set(blackList.map { ObjectIdentifier($0) })
    return { _ in
      { next in
        { dispatchable in
          try await next(dispatchable)
          if excluded.isEmpty || !excluded.contains(ObjectIdentifier(type(of: dispatchable))) {
            sink(dispatchable)
          }
        }
      }
    }
  }
}
