// What the observation fuzzer records while it runs: the commit log (from a root listener registered before any
// other observer), every observer's events, every awaited dispatch's outcome and return, every run that a cancel by
// id must or must not reach. Everything is stamped with one logical clock (`tick()`), so that "returned before the
// listener was called" is a comparison of two numbers. `OracleModel` checks it all once the run is over.
import Foundation
import KatanaTestSupport

@testable import Katana

/// A value an observer received: a whole state, a slice, or a projection.
enum OracleValue: Equatable, Sendable, CustomStringConvertible {
  case state(OracleState)
  case cell(OracleCell)
  case ids([Int])

  var description: String {
    switch self {
    case .state(let state): "state \(state)"
    case .cell(let cell): "\(cell)"
    case .ids(let ids): "ids \(ids)"
    }
  }
}

/// A slice of `OracleState` that a scope is mounted on.
enum OracleSlice: Hashable, Sendable, CustomStringConvertible {
  case feature
  /// `outer.inner`, through two nested scopes.
  case inner
  /// The optional child, which appears and disappears.
  case child
  /// The first element of `items` with this identifier.
  case item(Int)

  /// The identifiers elements take: `OracleToggleItem` inserts them, `OracleRename` moves an element to the next.
  static let itemIDs = 1...6

  static func renamed(_ id: Int) -> Int { id % itemIDs.upperBound + 1 }

  func read(_ state: OracleState) -> OracleCell? {
    switch self {
    case .feature: state.feature
    case .inner: state.outer.inner
    case .child: state.child
    case .item(let id): state.items.first { $0.id == id }
    }
  }

  /// Whether an `OracleRename` may be dispatched through this slice's scope.
  var isElement: Bool {
    if case .item = self { return true }
    return false
  }

  var description: String {
    switch self {
    case .feature: "feature"
    case .inner: "outer.inner"
    case .child: "child?"
    case .item(let id): "items[id: \(id)]"
    }
  }
}

/// What an observer is, as a user would call it.
enum OracleObserverKind: String, Sendable {
  case rootListener = "store.addListener"
  case scopeListener = "scope.addListener"
  case rootStates = "store.states()"
  case rootValues = "store.values(of:)"
  case rootChanges = "store.changes()"
  case scopeStates = "scope.states()"
  case scopeValues = "scope.values(of:)"
  case scopeChanges = "scope.changes()"
  case observableRoot = "ObservableStore(store:)"
  case observableScope = "ObservableStore(scope:)"

  /// Called once per change with old and new values, exactly (listeners, and change streams with a buffer that
  /// never drops).
  var isChangeObserver: Bool {
    switch self {
    case .rootListener, .scopeListener, .rootChanges, .scopeChanges: true
    default: false
    }
  }

  var isListener: Bool { self == .rootListener || self == .scopeListener }
  var isObservableStore: Bool { self == .observableRoot || self == .observableScope }
}

/// One call of an observer (or one element of a stream).
struct OracleEvent: Sendable {
  let start: Int
  var end: Int
  let old: OracleValue?
  let new: OracleValue
}

/// Everything one observer saw.
final class OracleObserverLog: Sendable {
  let number: Int
  let kind: OracleObserverKind
  let slice: OracleSlice?
  /// Whether the root projection is `items.map(\.id)` (which repeats) rather than `feature`.
  let projectsIDs: Bool
  /// Whether the stream buffers without dropping (then it must be exact), rather than `.latest`.
  let exact: Bool
  /// Where it was registered: after commit `a` (read before subscribing) and at or before commit `b` (read after);
  /// -1 stands for "before start-up".
  let window = LockedValue<(a: Int, b: Int)>((0, 0))
  let events = LockedValue<[OracleEvent]>([])
  /// Set by the fuzzer before it unsubscribes (or cancels the consuming task): later events are optional.
  let unsubscribedAt = LockedValue<Int?>(nil)
  /// Whether the store had begun shutting down when the subscription was made.
  let afterShutdown = LockedValue(false)
  /// The state an `ObservableStore` shows at the end.
  let finalShown = LockedValue<OracleValue?>(nil)
  /// For an `ObservableStore`, for the failure message: the commit its task subscribed at (nil: it never did), and
  /// whether it still followed the store just before the run's fence (nil: not read).
  let modelSubscribedAt = LockedValue<Int?>(nil)
  /// For an `ObservableStore`: how many states its subscription held when its task subscribed (its first value is
  /// pushed as it registers), and what the store or scope showed right after.
  let modelBufferedAtSubscription = LockedValue<Int?>(nil)
  let modelSliceAtSubscription = LockedValue<OracleValue?>(nil)
  let modelFollowingAtFence = LockedValue<Bool?>(nil)
  /// Where it was registered from, for the failure message.
  let origin: String

  init(number: Int, kind: OracleObserverKind, slice: OracleSlice?, projectsIDs: Bool, exact: Bool, origin: String) {
    self.number = number
    self.kind = kind
    self.slice = slice
    self.projectsIDs = projectsIDs
    self.exact = exact
    self.origin = origin
  }

  /// What this observer sees of `state`: the whole state, the slice (nil where missing) or the projection.
  func view(_ state: OracleState) -> OracleValue? {
    if let slice { return slice.read(state).map(OracleValue.cell) }
    switch kind {
    case .rootValues: return projectsIDs ? .ids(state.items.map(\.id)) : .cell(state.feature)
    default: return .state(state)
    }
  }

  /// Records a state an `ObservableStore` applied (or found unchanged): shown in failure messages only, since the
  /// model may apply the same state twice.
  func applied(_ value: OracleValue, tick: Int) {
    events.withLock { $0.append(OracleEvent(start: tick, end: tick, old: nil, new: value)) }
  }

  var title: String {
    var text = "observer #\(number) \(kind.rawValue)"
    if let slice { text += " of \(slice)" }
    if kind == .rootValues { text += projectsIDs ? " (items.map(\\.id))" : " (\\.feature)" }
    if !kind.isListener && !kind.isObservableStore { text += exact ? " [unbounded buffer]" : " [.latest]" }
    return text + ", added \(origin)"
  }
}

/// What an interceptor does with an operation's updater; the seed decides, per operation.
enum OracleBehaviour: String, Sendable {
  case pass, suspend, fail, substitute
  /// Calls `next` from another task and awaits it.
  case nextFromAwaitedTask
  /// Calls `next` from a task it does not await, and returns.
  case nextFromUnawaitedTask

  static func of(_ op: Int, seed: UInt64, intercepted: Bool) -> OracleBehaviour {
    guard intercepted else { return .pass }
    var generator = SeededGenerator(seed: seed &+ UInt64(abs(op)) &* 0x9E37_79B9)
    switch generator.next() % 40 {
    case 0..<3: return .fail
    case 3..<6: return .substitute
    case 6..<9: return .nextFromAwaitedTask
    case 9..<14: return OracleFeatures.current.unawaitedNext ? .nextFromUnawaitedTask : .pass
    case 14..<20: return .suspend
    default: return .pass
    }
  }
}

/// Parts of the schedule that can be left out, to tell which one a failure needs:
/// `KATANA_ORACLE_WITHOUT=renames,emptyFeatures,unawaitedNext,asyncStartUp,appearing,programOrder swift test --filter
/// ObservationFuzz`.
/// Everything is in by default.
struct OracleFeatures: Sendable {
  /// Elements renamed through their own scope.
  var renames = true
  /// A run in one empty feature, then a cancel of its id from another empty feature.
  var emptyFeatures = true
  /// Interceptors that call `next` from a task they do not await.
  var unawaitedNext = true
  /// Stores whose state initializer waits, so that observers are added before start-up.
  var asyncStartUp = true
  /// The optional child and elements that appear and disappear (root updaters that toggle them).
  var appearing = true
  /// A run under an id, then a cancel of that id from the same place (store or feature scope).
  var programOrder = true

  static let current: OracleFeatures = {
    var features = OracleFeatures()
    let without = ProcessInfo.processInfo.environment["KATANA_ORACLE_WITHOUT"] ?? ""
    for name in without.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
      switch name {
      case "renames": features.renames = false
      case "emptyFeatures": features.emptyFeatures = false
      case "unawaitedNext": features.unawaitedNext = false
      case "asyncStartUp": features.asyncStartUp = false
      case "appearing": features.appearing = false
      case "programOrder": features.programOrder = false
      default: break
      }
    }
    return features
  }()
}

/// An awaited dispatch (or a send, awaited through its handle) of one updater.
struct OracleDispatchRecord: Sendable {
  let op: Int
  let target: String
  let awaited: Bool
  let behaviour: OracleBehaviour
  let returnTick: Int
  /// nil: returned normally.
  let error: String?
  /// A send cancelled while it was certainly queued (sent and cancelled while another updater held the turn): it is
  /// withdrawn, so it must fail and commit nothing.
  var mustBeWithdrawn = false
}

/// A run under an id, followed (in program order) by a cancel that must, or must not, reach it.
struct OracleRunCheck: Sendable {
  let marker: Int
  let description: String
  /// True: the cancel reaches it, so it never starts. False: the cancel is another feature's, so it runs.
  let mustNotStart: Bool
  let sentTick: Int
  /// The tick right after the cancel returned: an operation may have started before (the sent item ran ahead of
  /// the canceller), never after.
  let cancelledTick: Int
  let completionTick: Int
  let error: String?
  /// Whether the store refused it, away from live (time travel): it never ran, whatever the cancel.
  var refusedAway = false
}

final class OracleJournal: Sendable {
  /// How long each listener call works: long calls widen the windows in which deliveries could overlap; short ones
  /// let a racing commit reach an observer that is still subscribing.
  let listenerWork: Int

  init(listenerWork: Int) {
    self.listenerWork = listenerWork
  }

  private let clock = LockedValue(0)
  /// Each committed state, in commit order: `commits[k]` is the state after commit `k` (`commits[0]` is the start-up
  /// state). Without undos and moves in time, `commits[k].version == k`.
  let commits = LockedValue<[OracleState]>([])
  /// For each commit, the tick at which the commit-log listener's call for it returned.
  let logged = LockedValue<[Int: Int]>([:])
  let problems = LockedValue<[String]>([])
  let observers = LockedValue<[OracleObserverLog]>([])
  let dispatches = LockedValue<[OracleDispatchRecord]>([])
  let runChecks = LockedValue<[OracleRunCheck]>([])
  /// The tick at which each marked run's operation started, and at which its side effect began (before it asked to
  /// run under its id).
  let started = LockedValue<[Int: Int]>([:])
  let began = LockedValue<[Int: Int]>([:])
  /// The listener calls running now, by observer number, and the commit each is for.
  private let running = LockedValue<[Int: String]>([:])
  let shutdownTick = LockedValue<Int?>(nil)
  let shutDownMidRun = LockedValue(false)
  let bodies = OracleBodies()
  /// Tasks that call an interceptor's `next` without being awaited; the run waits for them before checking.
  let detached = LockedValue<[Task<Void, Never>]>([])
  /// In a run with time travel or undo: what a tap on the store's commits saw, in commit order (each commit's item,
  /// and the state after it), to tell which commits of the log are operations, undos, redos and moves in time.
  let tapped = LockedValue<[(item: any Dispatchable & Sendable, after: OracleState)]>([])
  /// The times the store may have been away from live: from a `travel` call to the end of the `returnToLive` that
  /// followed (nil while it has not returned).
  let awayWindows = LockedValue<[(from: Int, to: Int?, travelDone: Int?)]>([])
  /// The recordings drained from the recorder during the run.
  let drained = LockedValue<[Recording<OracleState>]>([])
  /// Models of a slice that the failable initialiser did not make: the slice, the commits the store was at before and
  /// after (-1: before start-up), and who asked. The slice must have been missing at one of those commits.
  let missingAtCreation = LockedValue<[(slice: OracleSlice, from: Int, to: Int, origin: String)]>([])
  /// The number of times the recorder was reset during the run.
  let resets = LockedValue(0)

  /// Whether an item that entered the store's mailbox within `sent` may rightly have been refused as away from live:
  /// a travel was asked for before it had certainly entered, and was not over (brought back to live) before it was
  /// sent. An item that entered before a travel was asked for precedes it in the mailbox, and is applied.
  func mayBeAway(sent: ClosedRange<Int>) -> Bool {
    awayWindows.withLock { windows in
      windows.contains { $0.from < sent.upperBound && ($0.to ?? .max) > sent.lowerBound }
    }
  }

  /// The log index the next commit takes.
  func nextCommitIndex() -> Int {
    commits.withLock { Swift.max(1, $0.count) }
  }

  /// How many ticks the clock has given: a count that moves as long as the run does.
  var ticks: Int { clock.current }

  func tick() -> Int {
    clock.withLock {
      $0 += 1
      return $0
    }
  }

  func problem(_ text: String) {
    problems.withLock { $0.append(text) }
  }

  func newObserver(
    kind: OracleObserverKind, slice: OracleSlice?, projectsIDs: Bool = false, exact: Bool = false, origin: String
  ) -> OracleObserverLog {
    observers.withLock { observers in
      let log = OracleObserverLog(
        number: observers.count, kind: kind, slice: slice, projectsIDs: projectsIDs, exact: exact, origin: origin)
      observers.append(log)
      return log
    }
  }

  /// The commit-log listener's body: appends `new` and checks that it follows `old`.
  func logCommit(old: OracleState, new: OracleState) {
    commits.withLock { commits in
      if commits.isEmpty { commits.append(old) }
      if commits.last != old {
        problems.withLock {
          $0.append("the commit-log listener got old \(old), but the previous commit was \(commits.last!)")
        }
      }
      commits.append(new)
    }
  }

  /// Records one call of a listener: its start and end, and whether another listener call was running meanwhile.
  func call(_ log: OracleObserverLog, old: OracleValue?, new: OracleValue, commit: String, work: () -> Void) {
    let start = tick()
    let others = running.withLock { running -> [Int: String] in
      defer { running[log.number] = commit }
      return running
    }
    if !others.isEmpty {
      let list = others.map { "#\($0.key) for \($0.value)" }.sorted().joined(separator: ", ")
      problem("\(log.title): its call for \(commit) started while other listener calls were running (\(list))")
    }
    // Recorded in the order calls start; `end` is filled in when the call returns.
    let index = log.events.withLock { events in
      events.append(OracleEvent(start: start, end: Int.max, old: old, new: new))
      return events.count - 1
    }
    work()
    running.withLock { $0[log.number] = nil }
    let end = tick()
    log.events.withLock { $0[index].end = end }
  }
}
