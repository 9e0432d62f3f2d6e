/// Whether a server instance has applied every change its database has, and how far behind it is: the body
/// of `GET /health`.
public struct DatabaseHealth: Sendable, Equatable, Encodable {
  /// The instance's state, in one word.
  public enum Status: String, Sendable, Encodable {
    /// The instance had applied every change the database had when it was asked.
    case caughtUp
    /// The database has changes the instance has not applied yet; its feed is connected and applying them.
    case behind
    /// The change feed is not connected (it is reconnecting): the instance serves its last state.
    case feedDisconnected
    /// The database did not answer in time: the instance serves its last state, and writes fail with 503.
    case databaseUnreachable
  }

  /// The instance's state.
  public let status: Status
  /// The number of the last change the instance applied.
  public let applied: Int64
  /// The number of the database's last change, if it answered.
  public let database: Int64?
  /// How many changes the instance lacks (`database - applied`), if the database answered.
  public let behind: Int64?
  /// Whether the change feed is listening (always true on SQLite, which has no feed).
  public let feedConnected: Bool
  /// Seconds since the feed last finished reading every change the database had; nil before its first read
  /// (and on SQLite, which has no feed).
  public let secondsSinceCaughtUp: Double?
  /// The server process id of the feed's connection (`pid` in `pg_stat_activity`), while it is connected.
  public let feedBackendProcessID: Int32?

  /// Whether a load balancer should send this instance requests: it can reach the database and hear of
  /// its changes (it may be a few changes behind).
  public var isServing: Bool { status == .caughtUp || status == .behind }

  /// The health of an instance that applied `applied`, when the database's last change is `database` (nil if
  /// it did not answer).
  public init(
    applied: Int64, database: Int64?, feedConnected: Bool, secondsSinceCaughtUp: Double?,
    feedBackendProcessID: Int32? = nil
  ) {
    self.feedBackendProcessID = feedBackendProcessID
    self.applied = applied
    self.database = database
    self.behind = database.map { max(0, $0 - applied) }
    self.feedConnected = feedConnected
    self.secondsSinceCaughtUp = secondsSinceCaughtUp
    self.status =
      if database == nil {
        .databaseUnreachable
      } else if !feedConnected {
        .feedDisconnected
      } else if applied >= database! {
        .caughtUp
      } else {
        .behind
      }
  }
}
