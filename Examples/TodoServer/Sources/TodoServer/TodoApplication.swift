import Hummingbird
import HummingbirdCore
import Katana
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import UnixSignals

/// One server instance's store and database, with the long-running work they need, ready to be put behind
/// HTTP by ``makeTodoApplication(backend:configuration:logger:)``.
public struct TodoBackend: Sendable {
  /// The store every request shares.
  public let store: TodoStore
  /// Where the to-dos live.
  public let database: any TodoDatabase
  /// The store's audit log in the database, if the backend keeps one.
  public let auditLog: AuditLog?
  /// What must run for as long as the backend is used, in this order; shutdown goes in reverse order.
  let services: [any Service]

  /// The embedded default: SQLite in the file at `path` (created if missing).
  ///
  /// - Parameters:
  ///   - auditLog: Keep an ``AuditLog`` of the store's commits in the database, with these options.
  ///   - recorder: A recorder to put last among the store's interceptors (for the inspector, in development).
  /// - Throws: GRDB's `DatabaseError` if the file cannot be opened or is not an SQLite database.
  public static func sqlite(
    path: String, instrumentation: TodoInstrumentation = TodoInstrumentation(), auditLog: AuditLog.Options? = nil,
    recorder: StoreRecorder<TodoState>? = nil, logger: Logger
  ) throws -> TodoBackend {
    let database = try SQLiteTodoDatabase(path: path)
    let audit = auditLog.map { AuditLog(options: $0, sink: database, logger: logger) }
    let store = makeTodoStore(database: database, interceptors: instrumentation.interceptors)
    // The store writes its commits to the audit log's recorder and to `recorder` itself (no interceptor needed).
    try audit?.attach(to: store)
    try recorder?.attach(to: store)
    return TodoBackend(
      store: store, database: database, auditLog: audit,
      services: [StoreService(store: store, database: database, logger: logger)]
        // Stops before the store service closes the database: its last flush writes there.
        + audit.services(store: store, logger: logger))
  }

  /// Several instances on one PostgreSQL database: the connection pool and the ``ChangeFeed`` run as services.
  ///
  /// - Parameters:
  ///   - configuration: The pool's configuration.
  ///   - feedConnection: The configuration of the change feed's own connection; nil for the pool's server
  ///     without TLS. ``DatabaseURL`` gives both.
  ///   - auditLog: Keep an ``AuditLog`` of this instance's commits in the database, with these options.
  ///   - recorder: A recorder to put last among the store's interceptors (for the inspector, in development).
  public static func postgres(
    configuration: PostgresClient.Configuration,
    feedConnection: PostgresConnection.Configuration? = nil,
    instrumentation: TodoInstrumentation = TodoInstrumentation(),
    auditLog: AuditLog.Options? = nil,
    recorder: StoreRecorder<TodoState>? = nil,
    logger: Logger,
    options: PostgresTodoDatabase.Options = PostgresTodoDatabase.Options()
  ) -> TodoBackend {
    let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
    let database = PostgresTodoDatabase(
      client: client,
      feedConnection: feedConnection
        ?? PostgresConnection.Configuration(
          host: configuration.host ?? "127.0.0.1", port: configuration.port ?? 5432,
          username: configuration.username, password: configuration.password, database: configuration.database,
          tls: .disable),
      options: options, logger: logger)
    let audit = auditLog.map { AuditLog(options: $0, sink: database, logger: logger) }
    let store = makeTodoStore(database: database, interceptors: instrumentation.interceptors)
    // The store writes its commits to the audit log's recorder and to `recorder` itself (no interceptor needed). Both
    // are new to this store, unless the caller passed a recorder that records another one.
    do {
      try audit?.attach(to: store)
      try recorder?.attach(to: store)
    } catch {
      logger.error("The recorder passed to TodoBackend.postgres records another store: \(error)")
    }
    return TodoBackend(
      store: store, database: database, auditLog: audit,
      services: [
        // Stops last: the store service, the audit log and the feed still use the pool while they stop.
        PostgresClientService(database: database),
        StoreService(store: store, database: database, logger: logger),
      ]
        + audit.services(store: store, logger: logger)
        // Stops first (after the HTTP server): the requests have drained, nothing waits for the feed.
        + [FeedService(feed: database.feed, store: store, logger: logger)])
  }
}

extension AuditLog? {
  /// The service that flushes the log.
  fileprivate func services(store: TodoStore, logger: Logger) -> [any Service] {
    map { [AuditLogService(auditLog: $0, store: store, logger: logger)] } ?? []
  }
}

/// How long a connection may stay silent while the server waits for a request, or for the rest of one.
public let defaultIdleTimeout: Duration = .seconds(30)

/// How long graceful shutdown may take before the remaining work is cancelled: longer than a write request's
/// bound (``PostgresTodoDatabase/Options/writeTimeout`` plus ``PostgresTodoDatabase/Options/applyTimeout``),
/// so that requests in flight get their answer.
public let gracefulShutdownLimit: Duration = .seconds(15)

/// How long cancelling the remaining work may take after ``gracefulShutdownLimit``; past it the process ends
/// with a fatal error, so that shutdown ends whatever hangs.
public let cancellationLimit: Duration = .seconds(5)

/// Runs `application` until SIGTERM or SIGINT, then shuts it down gracefully within ``gracefulShutdownLimit``,
/// escalating to cancellation and, past ``cancellationLimit``, to a fatal error (ServiceLifecycle's bounds).
public func runTodoApplication(_ application: some ApplicationProtocol, logger: Logger) async throws {
  var configuration = ServiceGroupConfiguration(
    services: [.init(service: application)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
  configuration.maximumGracefulShutdownDuration = gracefulShutdownLimit
  configuration.maximumCancellationDuration = cancellationLimit
  try await ServiceGroup(configuration: configuration).run()
}

/// The most bytes the HTTP decoder takes for the request line or one header, and for all headers together.
let maximumHeaderFieldSize = 8 * 1024
let maximumHeadersSize = 32 * 1024

/// Builds the server: the JSON API in front of `backend`'s store, with the backend's lifetime tied to the
/// server's.
///
/// - The server starts listening only once the store is ready (its state loaded from the database); if the
///   database cannot be loaded, running the application throws the store's start-up error.
/// - On graceful shutdown (SIGTERM or SIGINT with `runService()`), the HTTP server stops first and finishes
///   the requests in flight (each answers within its bound, see the README); then the database is closed and
///   the store shut down. ``runTodoApplication(_:logger:)`` bounds the whole shutdown.
/// - A connection on which the client sends nothing for `idleTimeout` is closed: between requests, in the
///   middle of its headers, or in the middle of its body (Hummingbird's idle timeout). A request being
///   answered is not cut off.
///
/// - Parameters:
///   - backend: The store and its database; see ``TodoBackend``.
///   - configuration: Address, server name and other Hummingbird settings.
///   - idleTimeout: How long a connection may go without receiving a byte while the server waits for one.
///   - logger: The server's logger.
public func makeTodoApplication(
  backend: TodoBackend,
  configuration: ApplicationConfiguration = .init(),
  idleTimeout: Duration = defaultIdleTimeout,
  logger: Logger = Logger(label: "todo-server")
) -> some ApplicationProtocol {
  let router = Router(context: TodoRequestContext.self, options: .autoGenerateHeadEndpoints)
  // Outermost first: a span and metrics per request (to the process's tracer and metrics backends), then the
  // error shape, so that the span records the status the client gets.
  router.add(middleware: TracingMiddleware())
  router.add(middleware: MetricsMiddleware())
  router.add(middleware: APIErrorMiddleware())
  TodoAPI(store: backend.store, database: backend.database).addRoutes(to: router)
  var application = Application(
    router: router,
    server: .http1(
      configuration: HTTP1Channel.Configuration(
        additionalChannelHandlers: [ParseErrorResponder(maximumFieldSize: maximumHeaderFieldSize)],
        idleTimeout: TimeAmount(idleTimeout),
        httpDecoderConfiguration: .init(
          maxHeaderFieldSize: maximumHeaderFieldSize, maxHeaderListSize: maximumHeadersSize))),
    configuration: configuration,
    // Services shut down in reverse order, and Hummingbird adds the HTTP server last: it stops first.
    services: backend.services,
    logger: logger)
  let store = backend.store
  application.beforeServerStarts {
    try await store.waitUntilReady()
  }
  return application
}

/// Runs for as long as the service group, then closes the database and shuts the store down.
private struct StoreService: Service, CustomStringConvertible {
  let store: TodoStore
  let database: any TodoDatabase
  let logger: Logger

  var description: String { "TodoStore" }

  func run() async throws {
    // Returns on graceful shutdown, and throws if the group is cancelled: either way, it is time to stop.
    try? await gracefulShutdown()
    await database.close()
    await store.shutdown()
    logger.info("Database closed and store shut down")
  }
}

/// Runs the connection pool of a PostgreSQL database.
private struct PostgresClientService: Service, CustomStringConvertible {
  let database: PostgresTodoDatabase

  var description: String { "PostgresClient" }

  func run() async {
    await database.runClient()
  }
}

/// Runs the change feed once the store is ready, until graceful shutdown.
private struct FeedService: Service, CustomStringConvertible {
  let feed: ChangeFeed
  let store: TodoStore
  let logger: Logger

  var description: String { "ChangeFeed" }

  func run() async throws {
    await cancelWhenGracefulShutdown {
      do {
        try await store.waitUntilReady()
      } catch {
        // The store failed to start; the application reports it.
        return
      }
      await feed.run(store: store)
    }
  }
}
