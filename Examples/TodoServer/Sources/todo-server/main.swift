import Foundation
import Hummingbird
import Logging
import TodoServer

// Settings come from the environment, so that scripts and containers can set them without flags.
let environment = ProcessInfo.processInfo.environment
let host = environment["TODO_HOST"] ?? "127.0.0.1"
let journalPath = environment["TODO_JOURNAL"] ?? "todos.jsonl"
var logger = Logger(label: "todo-server")
logger.logLevel = environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info

guard let port = Int(environment["TODO_PORT"] ?? "8080"), (0...65535).contains(port) else {
  logger.critical("TODO_PORT must be a port number (0 to 65535), not '\(environment["TODO_PORT"] ?? "")'.")
  exit(2)
}

let store = makeTodoStore(journal: TodoJournal(fileURL: URL(fileURLWithPath: journalPath)))
let application = makeTodoApplication(
  store: store,
  configuration: .init(address: .hostname(host, port: port), serverName: "todo-server"),
  logger: logger)
logger.info("Journal: \(journalPath)")
do {
  try await application.runService()
} catch {
  logger.critical("The server stopped: \(error)")
  exit(1)
}
