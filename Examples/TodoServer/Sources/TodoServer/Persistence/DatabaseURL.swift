import Foundation
import NIOSSL
import PostgresNIO

/// The PostgreSQL settings in a URL, as in `DATABASE_URL`:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`.
///
/// `sslmode` defaults to `disable` (the server and the database on one private network or one machine);
/// `prefer` and `require` use the system's trusted certificates.
public struct DatabaseURL: Sendable {
  /// The pool's configuration.
  public let configuration: PostgresClient.Configuration
  /// The configuration of the change feed's own connection: the same server, user and TLS.
  public let feedConnection: PostgresConnection.Configuration
  /// The URL without its password, for logs.
  public let redacted: String

  /// Reads `text`.
  ///
  /// - Throws: ``DatabaseURLError`` saying what is wrong.
  public init(_ text: String) throws(DatabaseURLError) {
    guard let components = URLComponents(string: text), let scheme = components.scheme else {
      throw .invalid("'\(text)' is not a URL.")
    }
    guard scheme == "postgres" || scheme == "postgresql" else {
      throw .invalid("the scheme is '\(scheme)'; use postgres://.")
    }
    guard let host = components.host, !host.isEmpty else { throw .invalid("the URL names no host.") }
    guard let user = components.user, !user.isEmpty else { throw .invalid("the URL names no user.") }
    let database = String(components.path.drop(while: { $0 == "/" }))
    let tls: PostgresClient.Configuration.TLS
    let feedTLS: PostgresConnection.Configuration.TLS
    do {
      switch components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "disable" {
      case "disable":
        (tls, feedTLS) = (.disable, .disable)
      case "prefer":
        tls = .prefer(.makeClientConfiguration())
        feedTLS = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
      case "require":
        tls = .require(.makeClientConfiguration())
        feedTLS = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
      case let mode:
        throw DatabaseURLError.invalid("sslmode '\(mode)' is not one of disable, prefer, require.")
      }
    } catch let error as DatabaseURLError {
      throw error
    } catch {
      throw .invalid("TLS cannot be set up (\(error)).")
    }
    var configuration = PostgresClient.Configuration(
      host: host, port: components.port ?? 5432, username: user,
      password: components.password, database: database.isEmpty ? nil : database, tls: tls)
    configuration.options.additionalStartupParameters = [
      ("application_name", "todo-server"),
      // The server's side of the write bound: an instance that vanishes in the middle of a transaction (a
      // partition closes nothing) would otherwise hold the `todo_sequence` row, and every instance's writes
      // with it, until TCP gives up; its session is ended after 10 s instead, and the transaction rolls back.
      ("idle_in_transaction_session_timeout", "10s"),
    ]
    self.configuration = configuration
    var feedConnection = PostgresConnection.Configuration(
      host: host, port: components.port ?? 5432, username: user, password: components.password,
      database: database.isEmpty ? nil : database, tls: feedTLS)
    feedConnection.options.additionalStartupParameters = [("application_name", "todo-server feed")]
    self.feedConnection = feedConnection
    var shown = components
    if shown.password != nil { shown.password = "***" }
    self.redacted = shown.string ?? "postgres://\(host)"
  }
}

/// What is wrong with a database URL.
public enum DatabaseURLError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The URL cannot be used; the reason says why.
  case invalid(String)

  /// What is wrong, and the expected form.
  public var description: String {
    switch self {
    case .invalid(let reason):
      "The database URL is invalid: \(reason) Expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE."
    }
  }
}
