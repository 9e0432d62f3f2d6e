// The observation fuzzer's watchers of dispatches: Katana 6's observer interceptor, whose reactions to a trigger are
// checked in the commit log, and dispatch observers, whose calls are checked to come once before and once after each
// item.
import KatanaTestSupport

@testable import Katana

/// A root updater that Katana 6's observer interceptor reacts to (in runs that install it): once handed on, it sends
/// one ``OracleReaction``.
struct OracleTrigger: StateUpdater, OracleOperation {
  let op: Int
  func updateState(_ state: inout OracleState) {
    state.seq += 1
    state.lastOp = op
  }

  /// The operation of the reaction to operation `op`'s trigger.
  static func reaction(to op: Int) -> Int { op + 5_000_000 }

  /// A trigger's reaction commits at most once. When the fuzzer's interceptor hands the trigger on within its own
  /// dispatch (its behaviour passes it, suspends, or calls `next` from a task it awaits), the reaction comes after the
  /// trigger's commit, and, once the trigger committed, it commits, unless the store shut down mid-run or travelled
  /// in time (the reaction, sent by nobody who awaits it, is then refused like any item).
  static func check(commits: [OracleState], kinds: [Int: OracleCommitKind]?, journal: OracleJournal) {
    let model = OracleModel(
      commits: commits, kinds: kinds, shutdownVersion: 0, shutdownTick: nil, shutDownMidRun: false)
    let committed = model.commitsByOperation()
    for dispatch in journal.dispatches.current where dispatch.target.contains("OracleTrigger") {
      let triggers = committed[dispatch.op, default: []]
      let reactions = committed[reaction(to: dispatch.op), default: []]
      if reactions.count > 1 {
        journal.problem("the trigger of op \(dispatch.op) was reacted to at commits \(reactions)")
      }
      let handsOn: Set<OracleBehaviour> = [.pass, .suspend, .nextFromAwaitedTask]
      guard handsOn.contains(dispatch.behaviour) else { continue }
      if let reaction = reactions.first, triggers.first.map({ reaction < $0 }) ?? true {
        journal.problem("the reaction to op \(dispatch.op)'s trigger, commit \(reaction), came before the trigger")
      }
      if triggers.count == 1, reactions.isEmpty, !journal.shutDownMidRun.current, journal.awayWindows.current.isEmpty {
        journal.problem("the trigger of op \(dispatch.op) committed (commit \(triggers[0])), but nothing reacted to it")
      }
    }
  }
}

/// What Katana 6's observer interceptor sends after a trigger: a root bump of the reaction's operation.
struct OracleReaction: StateUpdater, DispatchObserverDispatchable {
  let op: Int

  init?(dispatchedItem: any Dispatchable, prevState: any State, currentState: any State) {
    guard let trigger = dispatchedItem as? OracleTrigger else { return nil }
    op = OracleTrigger.reaction(to: trigger.op)
  }

  func updateState(_ state: inout OracleState) {
    state.seq += 1
    state.lastOp = op
  }
}

/// Dispatch observers that count, per operation, the calls before and after each item, and the measured events.
final class OracleDispatchWatch: Sendable {
  private let counts = LockedValue<[Int: (will: Int, did: Int)]>([:])
  private let totals = LockedValue((will: 0, did: 0, measured: 0))

  var observers: [DispatchObserver] {
    FuzzCoverage.note(.dispatchObserverInit)
    FuzzCoverage.note(.dispatchObserverMeasuring)
    return [
      DispatchObserver(
        willHandle: { [self] item in
          totals.withLock { $0.will += 1 }
          if let op = Self.op(of: item) { counts.withLock { $0[op, default: (0, 0)].will += 1 } }
        },
        didHandle: { [self] item, _ in
          totals.withLock { $0.did += 1 }
          if let op = Self.op(of: item) {
            counts.withLock { counts in
              counts[op, default: (0, 0)].did += 1
            }
          }
        }),
      DispatchObserver.measuring { [self] _ in totals.withLock { $0.measured += 1 } },
    ]
  }

  static func op(of item: any Dispatchable) -> Int? {
    ((item as? any ScopedDispatchable)?.base as? any OracleOperation)?.op ?? (item as? any OracleOperation)?.op
  }

  /// Once everything has settled, every item was seen once before and once after it was handled, and measured once.
  func check(journal: OracleJournal) {
    let totals = totals.withLock { $0 }
    if totals.will != totals.did || totals.did != totals.measured {
      journal.problem(
        "dispatch observers saw \(totals.will) items before, \(totals.did) after, and measured \(totals.measured)")
    }
    for (op, count) in counts.withLock({ $0 }) where count.will != count.did {
      journal.problem("dispatch observers saw op \(op)'s item \(count.will) times before and \(count.did) after")
    }
  }
}
