/// Where an ``Inspector`` listens, who may use it, and how it paces what it sends.
///
/// - Important: The inspector is a development tool. It shows every state of the store, and whoever reaches it
///   can move the store in time. It listens on loopback (127.0.0.1) unless ``binding`` says otherwise, and every
///   request for the page or its event stream must carry a token: a random one made for each inspector on
///   loopback (in ``Inspector/url``), the one ``Binding/exposed(host:port:token:)`` names otherwise.
public struct InspectorConfiguration: Sendable {
  /// Where the inspector's server listens.
  public enum Binding: Sendable, Equatable {
    /// 127.0.0.1 only, on `port` (0: a free port the system picks; ``Inspector/port`` tells which), with a random
    /// token (128 bits from the system's secure generator) made for each inspector and printed in
    /// ``Inspector/url``: other users of the machine, and other pages in its browsers, can reach the port but do
    /// not know the token.
    case loopback(port: Int)
    /// Another address (for example `0.0.0.0` for every interface), which anyone on the network can reach: each
    /// request must carry `token`, in the page address (`?token=`) or in an `Authorization: Bearer` header.
    /// At least 16 characters.
    case exposed(host: String, port: Int, token: String)

    var isLoopback: Bool {
      if case .loopback = self { return true }
      return false
    }
  }

  /// Where the server listens; loopback on a free port by default.
  public var binding: Binding
  /// How often a connection looks for new commits when it has sent everything (the batching interval).
  public var pollInterval: Duration
  /// The most commits one message to the page carries.
  public var maximumBatch: Int
  /// How many messages may wait for the page's acknowledgement; when the page is this far behind, the inspector
  /// stops taking commits for it, and those that leave the recorder's window meanwhile are counted as dropped.
  /// The store never waits for a page.
  public var batchesInFlight: Int

  /// How long the store may stay where a page moved it in time (the page's "Move the store here") before the
  /// inspector brings it back to live; 5 minutes by default. A page that disconnects brings the store back at once.
  /// While away from live the store refuses every dispatch, so a forgotten move would stop the app.
  public var travelTimeout: Duration

  /// Creates a configuration.
  public init(
    binding: Binding = .loopback(port: 0), pollInterval: Duration = .milliseconds(50), maximumBatch: Int = 2_000,
    batchesInFlight: Int = 4, travelTimeout: Duration = .seconds(300)
  ) {
    self.binding = binding
    self.pollInterval = pollInterval
    self.maximumBatch = maximumBatch
    self.batchesInFlight = batchesInFlight
    self.travelTimeout = travelTimeout
  }

  /// The host and port to bind, and the token required; throws if the binding is not allowed.
  func resolved() throws(InspectorError) -> (host: String, port: Int, token: String) {
    switch binding {
    case .loopback(let port):
      guard (0...65_535).contains(port) else { throw .invalidPort(port) }
      return ("127.0.0.1", port, Self.randomToken())
    case .exposed(let host, let port, let token):
      guard (0...65_535).contains(port) else { throw .invalidPort(port) }
      guard token.count >= 16 else { throw .tokenRequired }
      return (host, port, token)
    }
  }
}

extension InspectorConfiguration {
  /// 128 random bits from the system's secure generator (`getrandom` on Linux, `arc4random` on Apple platforms),
  /// as 32 hexadecimal digits.
  static func randomToken() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<2).map { _ in
      let hex = String(generator.next() as UInt64, radix: 16)
      return String(repeating: "0", count: 16 - hex.count) + hex
    }.joined()
  }
}

/// Why an inspector could not start.
public enum InspectorError: Error, CustomStringConvertible {
  /// The port is not a port number.
  case invalidPort(Int)
  /// An address other than loopback was asked for without a token of at least 16 characters.
  case tokenRequired
  /// The server stopped before it was listening (for example, the port is taken).
  case serverFailed(String)

  /// A sentence saying what went wrong and what to do.
  public var description: String {
    switch self {
    case .invalidPort(let port):
      "\(port) is not a port number: use 0 (a free port) to 65535."
    case .tokenRequired:
      "Binding the inspector to an address other than loopback needs a token of at least 16 characters "
        + "(InspectorConfiguration.Binding.exposed(host:port:token:)): anyone who reaches it sees every state."
    case .serverFailed(let reason):
      "The inspector's server did not start: \(reason)"
    }
  }
}
