import Foundation
import Hummingbird
import Katana
import KatanaInspector
import Logging
import TodoServer

// Settings come from the environment, so that scripts and containers can set them without flags.
let environment = ProcessInfo.processInfo.environment
let host = environment["TODO_HOST"] ?? "127.0.0.1"
var logger = Logger(label: "todo-server")
logger.logLevel = environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info

guard let port = Int(environment["TODO_PORT"] ?? "8080"), (0...65535).contains(port) else {
  logger.critical("TODO_PORT must be a port number (0 to 65535), not '\(environment["TODO_PORT"] ?? "")'.")
  exit(2)
}

// An audit log of the store's commits, in the database, when TODO_AUDIT_LOG names this instance.
let auditLog = environment["TODO_AUDIT_LOG"].flatMap { $0.isEmpty ? nil : AuditLog.Options(instance: $0) }

// Development only: TODO_INSPECTOR_PORT starts the Katana inspector on 127.0.0.1 (Examples/Inspector).
let inspectorPort = environment["TODO_INSPECTOR_PORT"].flatMap(Int.init)
let recorder = inspectorPort.map { _ in StoreRecorder<TodoState>() }

// PostgreSQL when DATABASE_URL is set (several instances may share it), else SQLite in a file.
let backend: TodoBackend
do {
  if let url = environment["DATABASE_URL"], !url.isEmpty {
    let databaseURL = try DatabaseURL(url)
    logger.info("Database: PostgreSQL at \(databaseURL.redacted)")
    backend = .postgres(
      configuration: databaseURL.configuration, feedConnection: databaseURL.feedConnection, auditLog: auditLog,
      recorder: recorder,
      logger: logger)
  } else {
    let path = environment["TODO_DATABASE"] ?? "todos.sqlite"
    logger.info("Database: SQLite in \(path)")
    backend = try .sqlite(path: path, auditLog: auditLog, recorder: recorder, logger: logger)
  }
  if let session = backend.auditLog?.session {
    logger.info("Audit log: session \(session) in the table audit_log")
  }
} catch {
  logger.critical("The database cannot be opened: \(error)")
  exit(1)
}

guard let idleSeconds = Double(environment["TODO_IDLE_TIMEOUT"] ?? "30"), idleSeconds > 0 else {
  logger.critical("TODO_IDLE_TIMEOUT must be a number of seconds, not '\(environment["TODO_IDLE_TIMEOUT"] ?? "")'.")
  exit(2)
}

let application = makeTodoApplication(
  backend: backend,
  configuration: .init(address: .hostname(host, port: port), serverName: "todo-server"),
  idleTimeout: .milliseconds(Int64(idleSeconds * 1000)),
  logger: logger)
var inspector: Inspector?
if let inspectorPort, let recorder {
  do {
    inspector = try await backend.store.inspect(recorder: recorder, port: inspectorPort)
    // Printed, not logged: the address carries the inspector's token, which belongs on the developer's terminal,
    // not in a log that others read.
    // Written at once (standard output is buffered when it is not a terminal).
    FileHandle.standardOutput.write(Data("Katana inspector (a development tool) at \(inspector?.url ?? "")\n".utf8))
  } catch {
    logger.critical("The inspector did not start: \(error)")
    exit(1)
  }
}
do {
  try await runTodoApplication(application, logger: logger)
  await inspector?.stop()
} catch {
  logger.critical("The server stopped: \(error)")
  exit(1)
}
