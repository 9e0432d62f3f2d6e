// Runs of the observation fuzzer without a commit log. The log is a root listener, and a store with a listener never
// takes the path of a commit that concerns nobody (its fast path's first branch, and the widened commits of renamed
// elements from there): these runs leave that path to the operations, with no listener at all, and check what each
// observer saw on its own terms instead of against the log.
import KatanaTestSupport

@testable import Katana

extension OracleJournal {
  /// What the observers of a run without a commit log must have seen, each on its own: every commit of these runs
  /// (no undo, no move in time) raises the state's version by one, so a stream of the whole state goes up by one at
  /// each element (exact buffering) or at least one (`.latest`), a stream of changes goes from one version to the next;
  /// streams of slices and projections skip equal values, so with exact buffering no element equals the one before
  /// it; and a model, once
  /// the store settled (unless it shut down mid-run), shows the store's final state.
  ///
  /// In runs with undo histories, an undo takes the state back to an earlier version; `tapped`, the states after each
  /// commit as a commit hook saw them (in the commit's critical section), then stands in for the versions: a stream
  /// of the whole state or of its changes must follow it, commit by commit (exact buffering) or skipping some
  /// (`.latest`).
  func localFailures(finalState: OracleState, tapped: [OracleState]? = nil) -> [String] {
    var failures: [String] = []
    for log in observers.current {
      let events = log.events.current
      func fail(_ text: String) { failures.append("\(log.title): \(text)") }
      switch log.kind {
      case .rootStates where tapped != nil, .rootChanges where tapped != nil:
        guard let tapped else { break }
        var states: [OracleState] = []
        // A stream of changes: each change goes from the state before it (the first one's, too) to the next.
        if log.kind == .rootChanges, case .state(let old)? = events.first?.old { states.append(old) }
        for event in events {
          if case .state(let state) = event.new { states.append(state) }
        }
        // A stream subscribed before start-up begins with `OracleState()`: not a commit.
        states = Array(states.drop { $0 == OracleState() })
        if !Self.follows(states, tapped, consecutively: log.exact || log.kind == .rootChanges) {
          fail("saw states the commits did not make in that order (versions \(states.suffix(8).map(\.version)))")
        }
      case .rootStates:
        let states = events.compactMap { event -> OracleState? in
          if case .state(let state) = event.new { return state }
          return nil
        }
        for (before, after) in zip(states, states.dropFirst()) {
          // A stream subscribed before start-up begins with `OracleState()`, then gets the start-up state: not a commit.
          if before == OracleState() && after == .startUp { continue }
          if log.exact ? after.version != before.version + 1 : after.version <= before.version {
            fail(
              "went from version \(before.version) to \(after.version) (its versions: "
                + "\(states.suffix(8).map(\.version)))")
            break
          }
        }
      case .rootChanges:
        for (index, event) in events.enumerated() {
          guard case .state(let old)? = event.old, case .state(let new) = event.new else { continue }
          if new.version != old.version + 1 { fail("a change from version \(old.version) to \(new.version)") }
          if index > 0, case .state(let last) = events[index - 1].new, last != old {
            fail("a change from version \(old.version), after one to \(last.version)")
          }
        }
      case .rootValues, .scopeStates, .scopeValues, .scopeChanges:
        // With `.latest`, an element between two equal ones may have been dropped.
        for (before, after) in zip(events, events.dropFirst()) where log.exact && before.new == after.new {
          fail("got \(after.new) twice in a row")
          break
        }
        for event in events where log.kind == .scopeChanges && event.old == event.new {
          fail("got a change from \(event.new) to itself")
          break
        }
      case .observableRoot, .observableScope:
        guard !shutDownMidRun.current, let shown = log.finalShown.current else { continue }
        let expected = log.view(finalState) ?? (log.slice == nil ? .state(finalState) : shown)
        if shown != expected { fail("ends showing \(shown), not the store's final \(expected)") }
      case .rootListener, .scopeListener:
        break
      }
    }
    return failures
  }

  /// Whether `states` appear in `commits` in this order: one after the other (`consecutively`), or with gaps.
  static func follows(_ states: [OracleState], _ commits: [OracleState], consecutively: Bool) -> Bool {
    guard let first = states.first else { return true }
    if consecutively {
      // From every place the first state appears (an undo makes a state appear again).
      return commits.indices.contains { start in
        commits[start] == first && start + states.count <= commits.count
          && zip(states, commits[start...]).allSatisfy { $0 == $1 }
      }
    }
    var position = commits.startIndex
    for state in states {
      guard let found = commits[position...].firstIndex(of: state) else { return false }
      position = found + 1
    }
    return true
  }
}
