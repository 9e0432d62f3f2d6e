import Hummingbird
import Katana
import Logging
import ServiceLifecycle

/// Builds the server: the JSON API in front of `store`, with the store's lifetime tied to the server's.
///
/// - The server starts listening only once the store is ready (its state restored from the journal); if the
///   journal cannot be loaded, running the application throws the store's start-up error.
/// - On graceful shutdown (SIGTERM or SIGINT with `runService()`), the HTTP server stops first and finishes
///   the requests in flight; then the journal is closed and the store shut down.
///
/// - Parameters:
///   - store: The store every request shares; see ``makeTodoStore(journal:)``.
///   - configuration: Address, server name and other Hummingbird settings.
///   - logger: The server's logger.
public func makeTodoApplication(
  store: TodoStore,
  configuration: ApplicationConfiguration = .init(),
  logger: Logger = Logger(label: "todo-server")
) -> some ApplicationProtocol {
  let router = Router(context: TodoRequestContext.self)
  router.add(middleware: APIErrorMiddleware())
  TodoAPI(store: store).addRoutes(to: router)
  var application = Application(
    router: router,
    configuration: configuration,
    // Services shut down in reverse order, and Hummingbird adds the HTTP server last: it stops first.
    services: [StoreService(store: store, logger: logger)],
    logger: logger)
  application.beforeServerStarts {
    try await store.waitUntilReady()
  }
  return application
}

/// Runs for as long as the service group, then closes the journal and shuts the store down.
private struct StoreService: Service, CustomStringConvertible {
  let store: TodoStore
  let logger: Logger

  var description: String { "TodoStore" }

  func run() async throws {
    // Returns on graceful shutdown, and throws if the group is cancelled: either way, it is time to stop.
    try? await gracefulShutdown()
    await store.dependencies.close()
    await store.shutdown()
    logger.info("Journal closed and store shut down")
  }
}
