import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Katana
import KatanaRecordingLog
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// A live view of a store in a browser: the timeline of its commits and side effects, the state after any commit
/// with its difference to the one before, and time travel. A development tool.
///
/// ```swift
/// let recorder = StoreRecorder<AppState>()
/// let store = Store<AppState, AppDependencies>(initialState: AppState())
/// try recorder.attach(to: store)
/// let inspector = try await store.inspect(recorder: recorder, port: 9_000)
/// print("Inspector at \(inspector.url)")
/// // ...
/// await inspector.stop()
/// ```
///
/// The inspector serves a page (plain HTML, CSS and JavaScript, nothing fetched from elsewhere) and streams to
/// it, over a WebSocket, what `recorder` records. It reads what is new (``StoreRecorder/commits(after:)`` and
/// ``StoreRecorder/effects(changedSince:)``) from its own tasks, in batches, so the store's cost is the recorder's
/// (the package README gives the numbers). A page that falls behind gets fewer commits, not a slower store: those
/// that leave the recorder's window before it catches up are counted as dropped, and the page marks where.
///
/// Looking at a past state is view-only: the page rebuilds it from the recording, off the store, while the app
/// runs on. Moving the store itself (time travel) is an explicit action of the page; the store comes back to live
/// when that page disconnects, or after ``InspectorConfiguration/travelTimeout``.
///
/// - Important: Whoever reaches the inspector sees every state and can move the store in time. It listens on
///   127.0.0.1 only, and every request for the page or its events must carry the inspector's token, a random one
///   in ``url`` (against other users of the machine and other pages in its browsers); requests must name a loopback
///   host (against DNS rebinding) and any `Origin` must be the inspector's own, exactly (against other sites'
///   scripts, other local servers' pages included). Any other address must be asked for with
///   ``InspectorConfiguration/Binding/exposed(host:port:token:)``, with a token of your own. The package README
///   states the threat model.
public final class Inspector: Sendable {
  /// The port the server listens on.
  public let port: Int
  /// The host the server listens on.
  public let host: String
  /// The page's address, with the token: open it in a browser.
  public let url: String
  /// The token every request for the page or its events carries (`?token=` or `Authorization: Bearer`).
  public let token: String
  private let task: Task<Void, Never>
  private let services: ServiceGroup

  private init(host: String, port: Int, token: String, task: Task<Void, Never>, services: ServiceGroup) {
    self.host = host
    self.port = port
    self.token = token
    let shownHost = host == "0.0.0.0" ? "127.0.0.1" : host
    self.url = "http://\(shownHost):\(port)/?token=\(token)"
    self.task = task
    self.services = services
  }

  /// Starts an inspector for `store`, which `recorder` records, and returns once it is listening.
  ///
  /// - Parameters:
  ///   - store: The store; time travel moves it.
  ///   - recorder: A recorder attached to `store` (``StoreRecorder/attach(to:)``).
  ///   - configuration: Where to listen, and how to pace the page.
  ///   - logger: The server's logger (warnings and errors only by default).
  /// - Throws: ``InspectorError`` if the configuration is not allowed or the server cannot listen.
  public static func start<S: State & Encodable, D: SideEffectDependencyContainer>(
    store: Store<S, D>, recorder: StoreRecorder<S>, configuration: InspectorConfiguration = .init(),
    logger: Logger? = nil
  ) async throws -> Inspector {
    try await serve(LiveSource(store: store, recorder: recorder), export: nil, configuration, logger)
  }

  /// Starts an inspector for `store` whose page can also download the session as a log
  /// (`KatanaRecordingLog`, the updaters named as `registry` names them): a file to attach to a bug report, and
  /// to open later with ``open(log:registry:configuration:logger:)``.
  ///
  /// - Parameters:
  ///   - store: The store; time travel moves it.
  ///   - recorder: A recorder attached to `store` (``StoreRecorder/attach(to:)``).
  ///   - registry: The updaters the log can replay, and the state type's stable name.
  ///   - configuration: Where to listen, and how to pace the page.
  ///   - logger: The server's logger (warnings and errors only by default).
  /// - Throws: ``InspectorError`` if the configuration is not allowed or the server cannot listen.
  public static func start<S: State & Codable, D: SideEffectDependencyContainer>(
    store: Store<S, D>, recorder: StoreRecorder<S>, registry: ReplayRegistry<S>,
    configuration: InspectorConfiguration = .init(), logger: Logger? = nil
  ) async throws -> Inspector {
    try await serve(
      LiveSource(store: store, recorder: recorder), export: { try RecordingLog.encode($0, registry: registry) },
      configuration, logger)
  }

  /// Opens a recorded session without a store, read-only: the page shows its timeline, states, differences and
  /// payloads, skips commits and makes tests, and nothing moves.
  ///
  /// - Parameters:
  ///   - recording: The session.
  ///   - configuration: Where to listen.
  ///   - logger: The server's logger (warnings and errors only by default).
  /// - Throws: ``InspectorError`` if the configuration is not allowed or the server cannot listen.
  public static func open<S: State & Encodable>(
    _ recording: Recording<S>, configuration: InspectorConfiguration = .init(), logger: Logger? = nil
  ) async throws -> Inspector {
    try await serve(RecordingSource(opened: recording), export: nil, configuration, logger)
  }

  /// Opens a session from a log (a bug report's attachment, or a page's download) without a store, read-only; the
  /// page can download it again.
  ///
  /// ```swift
  /// var registry = ReplayRegistry<AppState>()
  /// registry.register(AddTodo.self, as: "todos.add")
  /// let inspector = try await Inspector.open(log: Data(contentsOf: url), registry: registry)
  /// print("Inspector at \(inspector.url)")
  /// ```
  ///
  /// The log is read as untrusted input (`RecordingLog.decode(_:registry:initialState:digest:)`): a log that
  /// does not read throws its `RecordingLogError`, naming the line, and nothing is served.
  ///
  /// - Parameters:
  ///   - log: The log's bytes.
  ///   - registry: The updaters the log names, and the state type's stable name.
  ///   - configuration: Where to listen.
  ///   - logger: The server's logger (warnings and errors only by default).
  /// - Throws: `RecordingLogError` if the log does not read; ``InspectorError`` if the server cannot listen.
  public static func open<S: State & Codable>(
    log: Data, registry: ReplayRegistry<S>, configuration: InspectorConfiguration = .init(), logger: Logger? = nil
  ) async throws -> Inspector {
    let recording = try RecordingLog.decode(log, registry: registry)
    return try await serve(
      RecordingSource(opened: recording), export: { try RecordingLog.encode($0, registry: registry) },
      configuration, logger)
  }

  /// Serves `source`'s page; `export` writes its recording as a log, if the page may download it.
  private static func serve<Source: InspectorSource>(
    _ source: Source, export: (@Sendable (Recording<Source.S>) throws -> String)?,
    _ configuration: InspectorConfiguration, _ logger: Logger?
  ) async throws -> Inspector {
    let (host, port, token) = try configuration.resolved()
    var log = logger ?? Logger(label: "katana-inspector")
    if logger == nil { log.logLevel = .warning }
    let connection = InspectorConnection(source: source, configuration: configuration, canExport: export != nil)
    let router = Router(context: BasicWebSocketRequestContext.self)
    router.add(middleware: AccessCheck(token: token, loopbackOnly: configuration.binding.isLoopback))
    InspectorPage.addRoutes(to: router)
    if let export {
      router.get("/session.katana.jsonl") { _, _ -> Response in
        do {
          let text = try export(source.recording())
          var headers = HTTPFields()
          headers[.contentType] = "application/x-ndjson; charset=utf-8"
          headers[.contentDisposition] = "attachment; filename=\"session.katana.jsonl\""
          headers[.cacheControl] = "no-store"
          return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
        } catch {
          return AccessCheck<BasicWebSocketRequestContext>.refusal(
            .internalServerError, "The session cannot be written as a log: \(error)")
        }
      }
    }
    router.ws("/events") { inbound, outbound, _ in
      // A graceful shutdown of the server ends the page's connection.
      await cancelWhenGracefulShutdown { await connection.run(inbound: inbound, outbound: outbound) }
    }
    let started = StartSignal()
    let application = Application(
      router: router, server: .http1WebSocketUpgrade(webSocketRouter: router),
      configuration: .init(address: .hostname(host, port: port), serverName: "katana-inspector"),
      onServerRunning: { channel in started.finish(.success(channel.localAddress?.port ?? port)) },
      logger: log)
    let services = ServiceGroup(
      configuration: .init(services: [.init(service: application)], gracefulShutdownSignals: [], logger: log))
    let task = Task {
      do {
        try await services.run()
        started.finish(.failure(InspectorError.serverFailed("it stopped before listening")))
      } catch {
        started.finish(.failure(InspectorError.serverFailed("\(error)")))
      }
    }
    do {
      let boundPort = try await started.wait()
      return Inspector(host: host, port: boundPort, token: token, task: task, services: services)
    } catch {
      task.cancel()
      await task.value
      throw error
    }
  }

  /// Stops the server and closes the pages' connections; returns once it has stopped.
  public func stop() async {
    await services.triggerGracefulShutdown()
    // Pages' connections end on graceful shutdown; one stuck in a write to a page that reads nothing is
    // cancelled after a moment.
    let task = self.task
    let bound = Task {
      try await Task.sleep(for: .milliseconds(500))
      task.cancel()
    }
    await task.value
    bound.cancel()
  }
}

extension Store {
  /// Starts an ``Inspector`` for this store on 127.0.0.1 at `port` (0: a free port); see
  /// ``Inspector/start(store:recorder:configuration:logger:)``.
  ///
  /// - Parameters:
  ///   - recorder: A ``StoreRecorder`` attached to this store (``StoreRecorder/attach(to:)``).
  ///   - port: The port to listen on; 0 lets the system pick one (``Inspector/port`` tells which).
  /// - Throws: ``InspectorError`` if the server cannot listen.
  public func inspect(recorder: StoreRecorder<S>, port: Int = 0) async throws -> Inspector
  where S: Encodable {
    try await Inspector.start(store: self, recorder: recorder, configuration: .init(binding: .loopback(port: port)))
  }
}

/// The port the server bound, handed from its start-up callback to ``Inspector/start``.
private final class StartSignal: Sendable {
  private enum Phase {
    case waiting(CheckedContinuation<Int, any Error>?)
    case finished(Result<Int, any Error>)
  }

  private let phase = NIOLockedValueBox(Phase.waiting(nil))

  func finish(_ result: Result<Int, any Error>) {
    let waiter = phase.withLockedValue { phase -> CheckedContinuation<Int, any Error>? in
      guard case .waiting(let waiter) = phase else { return nil }
      phase = .finished(result)
      return waiter
    }
    waiter?.resume(with: result)
  }

  func wait() async throws -> Int {
    try await withCheckedThrowingContinuation { continuation in
      let result = phase.withLockedValue { phase -> Result<Int, any Error>? in
        switch phase {
        case .waiting:
          phase = .waiting(continuation)
          return nil
        case .finished(let result):
          return result
        }
      }
      if let result { continuation.resume(with: result) }
    }
  }
}

/// Refuses requests that could come from elsewhere: without the token (but for the page's scripts and style,
/// which hold nothing of the store), from a page of another origin (the `Origin`, when there is one, must be the
/// inspector's own: `http://` and the host the request names), and, on loopback, naming a host that is not a
/// loopback name (DNS rebinding).
struct AccessCheck<Context: RequestContext>: RouterMiddleware {
  let token: String
  let loopbackOnly: Bool

  static var loopbackHosts: Set<String> { ["127.0.0.1", "localhost", "[::1]"] }

  /// The page's own code, served without the token: the page's address carries the token, its `<script>` and
  /// `<link>` requests do not.
  static var publicPaths: Set<String> { ["/inspector.js", "/inspector.css", "/favicon.svg"] }

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
    async throws -> Response
  {
    let authority = request.head.authority ?? ""
    if loopbackOnly, !Self.loopbackHosts.contains(Self.hostName(authority)) {
      return Self.refusal(.forbidden, "Loopback hosts only: open the address the inspector printed.")
    }
    if let origin = request.headers[.origin], !Self.isOwnOrigin(origin, authority: authority) {
      return Self.refusal(.forbidden, "Foreign origin: only the inspector's own page may use it.")
    }
    if !Self.publicPaths.contains(request.uri.path) {
      let bearer = request.headers[.authorization].map { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : "" }
      let query = request.uri.queryParameters.get("token")
      guard Self.same(bearer, token) || Self.same(query, token) else {
        return Self.refusal(
          .unauthorized, "A token is required: open the address the inspector printed (it ends with ?token=...).")
      }
    }
    return try await next(request, context)
  }

  static func refusal(_ status: HTTPResponse.Status, _ reason: String) -> Response {
    Response(status: status, body: .init(byteBuffer: ByteBuffer(string: reason + "\n")))
  }

  /// Whether `origin` is the origin of a page served at `authority` (the request's host and port): exactly
  /// `http://` and the authority. A non-browser client may name the host as `ws://`, with or without the port
  /// (Hummingbird's WebSocket client sends `ws://127.0.0.1`): browsers never send a `ws://` origin, and a
  /// non-browser client can send any header, so only the token stands in its way.
  static func isOwnOrigin(_ origin: String, authority: String) -> Bool {
    guard !authority.isEmpty else { return false }
    return origin == "http://" + authority || origin == "ws://" + authority || origin == "ws://" + hostName(authority)
  }

  /// Whether `given` is `token`, in a time that does not depend on where they first differ.
  static func same(_ given: String?, _ token: String) -> Bool {
    guard let given else { return false }
    let (lhs, rhs) = (Array(given.utf8), Array(token.utf8))
    var difference = UInt8(lhs.count == rhs.count ? 0 : 1)
    for index in rhs.indices {
      difference |= (index < lhs.count ? lhs[index] : 0) ^ rhs[index]
    }
    return difference == 0
  }

  /// `host:port` or `[v6]:port` without the port.
  static func hostName(_ authority: String) -> String {
    if authority.hasPrefix("["), let end = authority.firstIndex(of: "]") {
      return String(authority[...end])
    }
    return String(authority.split(separator: ":", maxSplits: 1).first ?? "")
  }
}
