import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import Testing
import TodoServer

/// One request of a load, as its client saw it.
struct Outcome: Sendable {
  /// The status, or nil if the request got no response (the connection broke, or the client timed out).
  let status: Int?
  /// The `code` of an error body.
  let code: String?
  let retryAfter: String?
  /// From sending the request to the end of its response (or its failure).
  let seconds: Double
  /// The to-do created, for a 201.
  let created: UUID?
  /// What went wrong, for a request without a response.
  let failure: String?
}

/// Creates to-dos on the servers at `ports`, from `connectionsPerPort` connections each, until `stop` is set;
/// returns every request's outcome. A broken connection is replaced; no request is retried.
func runCreateLoad(
  ports: [Int], connectionsPerPort: Int, label: String, stop: NIOLockedValueBox<Bool>,
  outcomes: NIOLockedValueBox<[Outcome]>
) async {
  await withTaskGroup(of: Void.self) { group in
    for port in ports {
      for connection in 0..<connectionsPerPort {
        group.addTask {
          while !stop.withLockedValue({ $0 }) {
            do {
              try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                var number = 0
                while !stop.withLockedValue({ $0 }) {
                  number += 1
                  let started = ContinuousClock.now
                  let outcome: Outcome
                  do {
                    let response = try await client.post(
                      "/todos", body: ByteBuffer(string: #"{"title": "\#(label) \#(port)/\#(connection)/\#(number)"}"#))
                    outcome = Outcome(response, seconds: seconds(started.duration(to: .now)))
                  } catch {
                    outcomes.withLockedValue {
                      $0.append(
                        Outcome(
                          status: nil, code: nil, retryAfter: nil, seconds: seconds(started.duration(to: .now)),
                          created: nil, failure: String(describing: error)))
                    }
                    throw error
                  }
                  outcomes.withLockedValue { $0.append(outcome) }
                }
              }
            } catch {
              // The connection broke (or could not be made): a new one, after a pause, so that a server
              // that is gone does not turn this loop into a busy one.
              try? await Task.sleep(for: .milliseconds(100))
            }
          }
        }
      }
    }
  }
}

extension Outcome {
  init(_ response: TestClient.Response, seconds: Double) {
    struct ErrorBody: Decodable {
      struct Detail: Decodable { let code: String }
      let error: Detail
    }
    let data = response.body.map { Data($0.readableBytesView) } ?? Data()
    self.status = Int(response.status.code)
    self.code = (try? JSONDecoder().decode(ErrorBody.self, from: data))?.error.code
    self.retryAfter = response.headers[.retryAfter]
    self.seconds = seconds
    self.created = response.status == .created ? (try? JSONDecoder().decode(Todo.self, from: data))?.id : nil
    self.failure = nil
  }
}

func seconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// The body of `GET /health`.
struct HealthReport: Decodable, Sendable {
  let status: String
  let applied: Int64
  let database: Int64?
  let behind: Int64?
  let feedConnected: Bool
  let feedBackendProcessID: Int32?
}

/// `GET /health` of the server at `port`, or nil if it did not answer.
func health(port: Int) async -> HealthReport? {
  try? await TestClient.withClient(host: "127.0.0.1", port: port) { client in
    let response = try await client.get("/health")
    return try response.body.map { try JSONDecoder().decode(HealthReport.self, from: Data($0.readableBytesView)) }
  }
}

/// Polls `GET /health` of the server at `port` until `condition` holds, failing after `limit`; returns the
/// report that satisfied it.
@discardableResult
func waitForHealth(
  port: Int, within limit: Duration, _ what: String, until condition: @escaping @Sendable (HealthReport) -> Bool
) async throws -> HealthReport {
  try await withFailsafe(limit, what) {
    while true {
      if let report = await health(port: port), condition(report) { return report }
      try await Task.sleep(for: .milliseconds(50))
    }
  }
}

/// `GET /todos` of the server at `port`.
func listTodos(port: Int) async throws -> [Todo] {
  try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
    let response = try await client.get("/todos")
    let body = try #require(response.body)
    return try JSONDecoder().decode([Todo].self, from: Data(body.readableBytesView))
  }
}
