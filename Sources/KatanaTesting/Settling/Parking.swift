import Katana

/// What a task is doing for a test store: the item whose interceptor chain (and, for a side effect, body)
/// it runs. The recorder's interceptor binds it around the rest of the chain, so that a ``TestClock`` can
/// say whose work a sleep belongs to ("Search(query: "kat") is sleeping on the test clock …").
///
/// Tasks a side effect starts inherit it (the tools of the effect toolkit run work in such tasks), so a
/// sleeper names the innermost item whose work it does, whatever task it sleeps in.
final class WorkLabel: Sendable {
  @TaskLocal static var current: WorkLabel?

  let item: any Dispatchable

  init(item: any Dispatchable) {
    self.item = item
  }
}

/// Whether everything a test store has in flight is asleep on a test clock, so that nothing can happen
/// until the test advances the clock: the test store's waits then fail at once, naming the sleepers,
/// instead of waiting for the failsafe.
enum Parking {
  /// The sleepers that hold every carrier, or nil if some carrier is not asleep on a test clock.
  ///
  /// - Parameters:
  ///   - carriers: The tasks that carry the store's in-flight work, one per unit of work the store counts,
  ///     and none missing. Empty means nothing is in flight (not parked).
  ///   - sleepers: The tasks asleep on the clocks the store uses, read in the same stable snapshot.
  static func sleepers(holding carriers: [TaskIdentity], among sleepers: [TestClock.SleeperRecord])
    -> [TestClock.SleeperRecord]?
  {
    guard !carriers.isEmpty else { return nil }
    var parked: [TestClock.SleeperRecord] = []
    for carrier in carriers {
      guard let sleeper = sleepers.first(where: { $0.task == carrier }) else { return nil }
      parked.append(sleeper)
    }
    return parked.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
  }

  /// What the store's parked work waits for, after "cannot go on until": the test clock moving, naming the
  /// sleepers, or, when nothing sleeps on it, the test driving what the work is suspended on.
  static func until(_ sleepers: [TestClock.SleeperRecord]) -> String {
    sleepers.isEmpty
      ? "the test drives it: nothing sleeps on the test clock, and the store's work is suspended on something "
        + "else (a stream the test feeds, a dependency's answer, a cancellation)"
      : "the test clock moves: \(describe(sleepers))"
  }

  /// `Search(query: "kat") is sleeping on the test clock until 0.3 seconds`, one clause per sleeper, and
  /// where the clock is.
  static func describe(_ sleepers: [TestClock.SleeperRecord]) -> String {
    guard let now = sleepers.first?.now else {
      return "nothing sleeps on the test clock: the store's work is suspended on something else that the test "
        + "drives (a stream it feeds, a dependency's answer, a cancellation)"
    }
    let clauses = sleepers.map { sleeper in
      "\(sleeper.workDescription) is sleeping on the test clock until \(sleeper.deadline)"
    }
    return clauses.joined(separator: "; ") + " (the clock is at \(now))"
  }
}
