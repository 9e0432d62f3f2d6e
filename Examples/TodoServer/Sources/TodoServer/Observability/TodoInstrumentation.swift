import Katana
import Metrics
import NIOConcurrencyHelpers
import Tracing

/// The store's observability, through its interceptors: a tracing span per dispatch, and per dispatched item
/// type a timer and a counter (swift-metrics).
///
/// - Spans: named after the item's type (`CreateTodo`), with the attribute `katana.kind` (`sideEffect` or
///   `stateUpdater`). An awaited dispatch runs in the caller's task, so its span is a child of the request's
///   span (Hummingbird's `TracingMiddleware` starts one per request); the nested dispatches of a side effect
///   nest under its span. An updater sent from outside the request's task carries the request's context
///   (``CommitChanges`` on SQLite), and its span joins that trace; the PostgreSQL feed's batches, which
///   serve several requests, start traces of their own.
/// - Metrics: `katana_dispatch_duration` (a timer; dimensions `type` and `kind`) and `katana_dispatches_total`
///   (a counter; dimensions `type` and `outcome`, `success` or `failure`). Metric objects are made once per
///   type and reused.
///
/// The backends are the process's (`MetricsSystem.bootstrap`, `InstrumentationSystem.bootstrap`: swift-otel,
/// swift-prometheus, …) unless a factory or tracer is passed, as the tests do.
public struct TodoInstrumentation: Sendable {
  private let metricsFactory: (any MetricsFactory)?
  private let tracer: (any Tracer)?
  private let cache = NIOLockedValueBox([ObjectIdentifier: PerType]())

  /// Instrumentation reporting to `metricsFactory` and `tracer`, or, where nil, to the process's backends.
  public init(metricsFactory: (any MetricsFactory)? = nil, tracer: (any Tracer)? = nil) {
    self.metricsFactory = metricsFactory
    self.tracer = tracer
  }

  /// The store's interceptors: tracing first, so that the span covers the whole dispatch, then metrics.
  public var interceptors: [StoreInterceptor] {
    [tracingInterceptor, metricsInterceptor]
  }

  /// What is made once per item type.
  private struct PerType: @unchecked Sendable {  // Sendable: swift-metrics' Timer and Counter are thread-safe.
    let name: String
    let kind: String
    let duration: Timer
    let successes: Counter
    let failures: Counter
  }

  private func perType(_ item: any Dispatchable) -> PerType {
    let type = type(of: item)
    let key = ObjectIdentifier(type)
    if let known = cache.withLockedValue({ $0[key] }) { return known }
    let name = String(describing: type)
    let kind = item is any AnySideEffect ? "sideEffect" : "stateUpdater"
    let made = PerType(
      name: name,
      kind: kind,
      duration: makeTimer("katana_dispatch_duration", [("type", name), ("kind", kind)]),
      successes: makeCounter("katana_dispatches_total", [("type", name), ("outcome", "success")]),
      failures: makeCounter("katana_dispatches_total", [("type", name), ("outcome", "failure")]))
    return cache.withLockedValue { cache in
      if let raced = cache[key] { return raced }
      cache[key] = made
      return made
    }
  }

  private func makeTimer(_ label: String, _ dimensions: [(String, String)]) -> Timer {
    if let metricsFactory { return Timer(label: label, dimensions: dimensions, factory: metricsFactory) }
    return Timer(label: label, dimensions: dimensions)
  }

  private func makeCounter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
    if let metricsFactory { return Counter(label: label, dimensions: dimensions, factory: metricsFactory) }
    return Counter(label: label, dimensions: dimensions)
  }

  private var metricsInterceptor: StoreInterceptor {
    DispatchInstrumentation.interceptor { [self] event in
      let metrics = perType(event.dispatchable)
      metrics.duration.recordNanoseconds(event.duration.nanoseconds)
      (event.succeeded ? metrics.successes : metrics.failures).increment()
    }
  }

  private var tracingInterceptor: StoreInterceptor {
    { [self] _ in
      { next in
        { item in
          let tracer = tracer ?? InstrumentationSystem.tracer
          let parent = (item as? any CarriesTraceContext)?.traceContext ?? .current ?? .topLevel
          let perType = perType(item)
          try await tracer.withSpan(perType.name, context: parent, ofKind: .internal) { span in
            span.attributes["katana.kind"] = perType.kind
            try await next(item)
          }
        }
      }
    }
  }
}

/// An item that carries the trace context it belongs to, because it may be handled outside the task that
/// created it (an updater handed over with `send`).
protocol CarriesTraceContext {
  /// The context its span should be a child of; nil for the current task's.
  var traceContext: ServiceContext? { get }
}

extension Duration {
  /// The duration in whole nanoseconds (saturating).
  fileprivate var nanoseconds: Int64 {
    let (seconds, attoseconds) = components
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    return overflow ? .max : scaled + attoseconds / 1_000_000_000
  }
}
