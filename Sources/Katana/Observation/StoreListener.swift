/// Called with the state before and after each committed change.
///
/// See ``Store/addListener(_:)`` for when and where listeners run.
public typealias StoreListener<S: FeatureState> = @Sendable (_ oldState: S, _ newState: S) -> Void

/// A ``StoreListener`` for code that does not know the store's state type.
public typealias AnyStoreListener = @Sendable (_ oldState: any State, _ newState: any State) -> Void

/// Removes a listener. Calling it more than once, or after the store is gone, does nothing.
public typealias StoreUnsubscribe = @Sendable () -> Void

/// One committed change of a store's state, as delivered by ``Store/changes(buffering:)``.
public struct StateChange<S: FeatureState>: Sendable {
  /// The state before the change.
  public let old: S
  /// The state after the change.
  public let new: S

  /// Creates a change.
  public init(old: S, new: S) {
    self.old = old
    self.new = new
  }
}

/// How many elements a store stream keeps for a consumer that has not asked for them yet, and which ones
/// it drops when that bound is reached.
///
/// Every store stream is bounded, so a slow or abandoned consumer never makes memory grow without limit.
/// Sizes below 1 count as 1.
public enum StreamBuffering: Sendable, Equatable {
  /// Keeps the newest `limit` elements, dropping the oldest ones.
  case bufferingNewest(Int)
  /// Keeps the oldest `limit` elements, dropping new ones until the consumer catches up.
  case bufferingOldest(Int)

  /// Keeps only the latest element: a slow consumer skips intermediate values and always sees the most
  /// recent one. The default for state and projection streams.
  public static var latest: StreamBuffering { .bufferingNewest(1) }

  @usableFromInline var limit: Int {
    switch self {
    case .bufferingNewest(let limit), .bufferingOldest(let limit): Swift.max(1, limit)
    }
  }
}
