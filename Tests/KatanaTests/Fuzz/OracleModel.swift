// The reference model of what users observe (SPEC 4.1, 4.6, 4.7, 4.9; verification.md section 5), written for
// clarity, not speed. The store's commit log is the linearisation; from it the model derives, for an observer
// registered at commit k, exactly what it must receive, and the checks try every k the observer's window allows
// (the commit read before subscribing, up to the one read after). Concurrency only decides which log happened; the
// model decides whether everything observed is consistent with it.
import KatanaTestSupport

/// One value (or change) an observer must receive, and the commit it comes from.
struct OracleExpected: Equatable {
  let version: Int
  let old: OracleValue?
  let new: OracleValue
}

struct OracleModel {
  /// `commits[k]` is the state after commit `k`; `commits[0]` the start-up state.
  let commits: [OracleState]
  /// What each commit is, in runs with a tap on the store's commits (nil: every commit is an operation's).
  let kinds: [Int: OracleCommitKind]?
  /// The last commit every stream must have received before shutdown finished it: that of the last awaited
  /// dispatch that returned before `shutdown()` was called (which returned after its commit was delivered, and
  /// deliveries go in commit order). A commit still being delivered when shutdown is called may be missed by
  /// streams (and `ObservableStore`s), which finish at shutdown: they end on a commit in `shutdownVersion...latest`.
  /// Listeners still get every commit. The run ends with such a dispatch (a fence) before its final shutdown.
  let shutdownVersion: Int
  let shutdownTick: Int?
  /// Whether a task shut the store down in the middle of the run. An `ObservableStore` follows commits from its
  /// first turn on the main actor; one created just before such a shutdown may never get that turn, and then keeps
  /// showing the state it was created with (documented).
  let shutDownMidRun: Bool

  var latest: Int { commits.count - 1 }

  /// The state at registration point `k`; -1 is before start-up, when the store shows `OracleState()`.
  func state(at k: Int) -> OracleState { k < 0 ? OracleState() : commits[k] }

  /// What the observer sees of the state at registration, then of each later commit (nil: the slice is missing).
  func series(_ log: OracleObserverLog, from k: Int) -> [(version: Int, value: OracleValue?)] {
    var series = [(version: k, value: log.view(state(at: k)))]
    for version in (k + 1)..<commits.count { series.append((version, log.view(commits[version]))) }
    return series
  }

  /// Whether `log` skips a commit that leaves what it sees equal. Observers of the whole state (root listeners,
  /// `store.changes()`, `store.states()`) get every commit, even one that changes nothing (a move in time to the state
  /// the store shows, an undo with nothing to undo); projections and a scope's observers skip equal values.
  func skipsEqualValues(_ log: OracleObserverLog) -> Bool {
    switch log.kind {
    case .rootListener, .rootChanges, .rootStates: false
    default: true
    }
  }

  /// Listeners and change streams: one call per later commit that changes the slice (equal slices are skipped but
  /// by observers of the whole state), with the slice as last seen; none while the slice is missing, and none for the
  /// start-up state (a listener added before start-up compares with the start-up state).
  func changes(_ log: OracleObserverLog, from k: Int) -> [OracleExpected] {
    let series = series(log, from: max(k, 0))
    let skipsEqual = skipsEqualValues(log)
    var last = series[0].value
    var expected: [OracleExpected] = []
    for (version, value) in series.dropFirst() {
      guard let value else { continue }
      if let old = last, old != value || !skipsEqual {
        expected.append(OracleExpected(version: version, old: old, new: value))
      }
      last = value
    }
    return expected
  }

  /// State and projection streams (and what an `ObservableStore` applies): the value at subscription, then each
  /// later value that differs from the last one yielded; nothing while the slice is missing (and its value when it
  /// appears). Before start-up, a stream starts with the value of `OracleState()`.
  func values(_ log: OracleObserverLog, from k: Int) -> [OracleExpected] {
    let skipsEqual = skipsEqualValues(log)
    var expected: [OracleExpected] = []
    for (version, value) in series(log, from: k) {
      guard let value, !skipsEqual || value != expected.last?.new else { continue }
      expected.append(OracleExpected(version: version, old: nil, new: value))
    }
    return expected
  }

  /// What `log` must have received if it was registered at `k`; nil if what it received fits.
  func mismatch(_ log: OracleObserverLog, at k: Int) -> [OracleExpected]? {
    let events = log.events.current
    let received = events.map { OracleExpected(version: 0, old: $0.old, new: $0.new) }
    if log.kind.isObservableStore {
      let expected = values(log, from: k)
      // The model first shows the source's `state`, read just before it subscribes (so at `k` or a little before,
      // within its window): the default slice where it is missing.
      let low = max(-1, min(log.window.current.a, k))
      let fallbacks = (low...k).map {
        log.view(state(at: $0)) ?? (log.slice == nil ? .state(state(at: $0)) : .cell(OracleCell()))
      }
      let shown = log.finalShown.current
      // The model subscribes as it is made (the window brackets that), so it misses no commit from there on: it
      // ends on the last value its subscription got, shut down mid-run or not.
      for end in max(k, shutdownVersion)...max(k, latest) {
        if let last = expected.last(where: { $0.version <= end })?.new {
          if shown == last { return nil }
        } else if let shown, fallbacks.contains(shown) {
          return nil
        }
      }
      return expected
    }
    let all = log.kind.isChangeObserver ? changes(log, from: k) : values(log, from: k)
    if log.afterShutdown.current && received.isEmpty { return nil }
    guard log.kind.isListener else {
      // A stream ends with the commit at which shutdown finished it.
      for end in max(k, shutdownVersion)...max(k, latest) {
        if fits(log, received: received, expected: all.filter { $0.version <= end }) { return nil }
      }
      return all
    }
    return fits(log, received: received, expected: all) ? nil : all
  }

  func fits(_ log: OracleObserverLog, received: [OracleExpected], expected: [OracleExpected]) -> Bool {
    let unsubscribed = log.unsubscribedAt.current != nil
    func same(_ expected: OracleExpected, _ event: OracleExpected) -> Bool {
      expected.old == event.old && expected.new == event.new
    }
    if log.kind.isChangeObserver || log.exact {
      // Nothing may be dropped: exactly the model's sequence (a prefix of it once unsubscribed).
      let prefix = Array(expected.prefix(received.count))
      let isPrefix = received.count <= expected.count && zip(prefix, received).allSatisfy(same)
      return isPrefix && (unsubscribed || received.count == expected.count)
    }
    // `.latest`: any subsequence of the model's values, in order, ending on the latest one.
    var index = 0
    for event in received {
      while index < expected.count, !same(expected[index], event) { index += 1 }
      if index == expected.count { return false }
      index += 1
    }
    return unsubscribed || received.last?.new == expected.last?.new
  }

  /// The registration points the observer's window allows.
  func candidates(_ log: OracleObserverLog) -> ClosedRange<Int> {
    let (a, b) = log.window.current
    let low = max(-1, min(a, latest))
    // Start-up (commit 0) is no commit a listener sees, so the window's end cannot tell whether it came first: an
    // observer registered while the store was starting may have been registered after it.
    let high = max(low, min(b, latest), a < 0 ? min(0, latest) : low)
    return low...high
  }

  /// Checks one observer; returns the failure, or every registration point that fits (more than one may: an
  /// observer unsubscribed before its first call fits every point of its window, and the later checks must not
  /// pick one of them as if it were the registration).
  func check(_ log: OracleObserverLog) -> Result<[Int], OracleFailure> {
    var best: (k: Int, expected: [OracleExpected], agreed: Int)?
    var fitting: [Int] = []
    for k in candidates(log) {
      guard let expected = mismatch(log, at: k) else {
        fitting.append(k)
        continue
      }
      // Shown against the registration point whose values agree longest with what was received.
      let agreed = zip(expected, log.events.current).prefix { $0.old == $1.old && $0.new == $1.new }.count
      if best.map({ agreed > $0.agreed }) ?? true { best = (k, expected, agreed) }
    }
    if !fitting.isEmpty { return .success(fitting) }
    let (k, expected, _) = best!
    return .failure(OracleFailure(describe(log, expected: expected, k: k)))
  }

  func describe(_ log: OracleObserverLog, expected: [OracleExpected], k: Int) -> String {
    let (a, b) = log.window.current
    func show(_ item: OracleExpected) -> String {
      item.old.map { "(\($0) -> \(item.new))" } ?? "\(item.new)"
    }
    var text = "\(log.title), registered between commits \(a) and \(b) (-1: before start-up)"
    if let unsubscribed = log.unsubscribedAt.current { text += ", unsubscribed at tick \(unsubscribed)" }
    if log.kind.isObservableStore {
      text += "\n    ends showing: \(log.finalShown.current.map(\.description) ?? "nothing")"
      text += "\n    expected to end on: \(expected.last.map(show) ?? "the value at creation")"
      let applied = log.events.current.suffix(4).map { "tick \($0.start): \($0.new)" }
      text += "\n    last states it applied: \(applied.isEmpty ? "none" : applied.joined(separator: "\n      "))"
      text += "\n    store shut down at tick \(shutdownTick.map(String.init) ?? "-")"
      let subscribed = log.modelSubscribedAt.current.map { "at commit \($0)" } ?? "never"
      let following = log.modelFollowingAtFence.current.map { $0 ? "yes" : "no (its task had ended)" } ?? "not read"
      text += "\n    its task subscribed: \(subscribed); still following before the fence: \(following)"
      let buffered = log.modelBufferedAtSubscription.current.map { "\($0)" } ?? "-"
      let slice = log.modelSliceAtSubscription.current.map(\.description) ?? "nothing (missing)"
      text += "\n    states its subscription held then: \(buffered); showing right after: \(slice)"
      // What the commit log says the model's view was, from before its window on: each change, and the kind of the
      // commit that made it (in runs with a tap).
      var changes: [String] = []
      var last: OracleValue?? = nil
      for index in max(0, a - 1)...latest {
        let value = log.view(commits[index])
        guard last.map({ $0 != value }) ?? true else { continue }
        last = .some(value)
        let kind = kinds?[index].map { " (\($0))" } ?? ""
        changes.append("commit \(index)\(kind): \(value.map(\.description) ?? "missing")")
      }
      text += "\n    the commit log's view, from commit \(max(0, a - 1)): \(changes.prefix(12).joined(separator: "; "))"
      return text
    }
    let received = log.events.current.map { OracleExpected(version: 0, old: $0.old, new: $0.new) }
    let rule = log.kind.isChangeObserver || log.exact ? "exactly" : "a subsequence, ending on the last one, of"
    text +=
      "\n    must receive \(rule) these \(expected.count) (if registered at commit \(k)); received \(received.count)"
    if shutdownVersion < latest, !log.kind.isListener {
      text +=
        " (the last commit delivered before shutdown is \(shutdownVersion): may end at any commit up to \(latest))"
    }
    // Around the first difference (or the ends): what the user saw against what the log implies.
    var first = 0
    while first < min(expected.count, received.count), expected[first].old == received[first].old,
      expected[first].new == received[first].new
    {
      first += 1
    }
    let from = max(0, min(first, max(expected.count, received.count)) - 2)
    text += "\n    expected, from #\(from):"
    for (index, item) in expected.enumerated().dropFirst(from).prefix(5) {
      text += "\n      #\(index) commit \(item.version): \(show(item))"
    }
    if expected.count <= from { text += " (nothing more)" }
    text += "\n    received, from #\(from):"
    for (index, item) in received.enumerated().dropFirst(from).prefix(5) { text += "\n      #\(index) \(show(item))" }
    if received.count <= from { text += " (nothing more)" }
    return text
  }

  /// `shutdownVersion` for a run: the commit of the last awaited dispatch that returned before the shutdown.
  static func settledVersion(commits: [OracleState], kinds: [Int: OracleCommitKind]?, journal: OracleJournal) -> Int {
    let model = OracleModel(
      commits: commits, kinds: kinds, shutdownVersion: 0, shutdownTick: nil, shutDownMidRun: false)
    let committed = model.commitsByOperation()
    let shutdown = journal.shutdownTick.current ?? Int.max
    var settled = 0
    for dispatch in journal.dispatches.current
    where dispatch.awaited && dispatch.error == nil && dispatch.returnTick < shutdown
      && dispatch.behaviour != .nextFromUnawaitedTask
    {
      let versions = committed[dispatch.op, default: []] + committed[-dispatch.op, default: []]
      settled = max(settled, versions.max() ?? 0)
    }
    return settled
  }

  /// The commits each operation made (an interceptor's substitute for operation `op` commits `-op`). Undos and moves
  /// in time are no operation's.
  func commitsByOperation() -> [Int: [Int]] {
    var result: [Int: [Int]] = [:]
    for version in commits.indices.dropFirst() {
      if let kind = kinds?[version], kind != .operation { continue }
      if let op = commits[version].committedOp(from: commits[version - 1]) { result[op, default: []].append(version) }
    }
    return result
  }
}

struct OracleFailure: Error {
  let text: String
  init(_ text: String) { self.text = text }
}

extension OracleModel {
  /// Everything the journal recorded, checked; returns the failures.
  func check(_ journal: OracleJournal) -> [String] {
    var failures = journal.problems.current
    var matched: [Int: [Int]] = [:]
    let observers = journal.observers.current
    for log in observers {
      switch check(log) {
      case .success(let fitting): matched[log.number] = fitting
      case .failure(let failure): failures.append(failure.text)
      }
    }
    failures += checkDispatches(journal, observers: observers, matched: matched)
    failures += checkReturnedValues(journal)
    failures += checkRuns(journal)
    return failures
  }

  /// SPEC 4.1 and 4.3: what each dispatch returned agrees with what it committed; an awaited dispatch returns after
  /// its commit and after every listener registered at commit time ran for it.
  ///
  /// `matched` holds each observer's fitting registration points: a listener is late for a commit only if it is
  /// late for it whichever of them was its registration.
  func checkDispatches(_ journal: OracleJournal, observers: [OracleObserverLog], matched: [Int: [Int]]) -> [String] {
    var failures: [String] = []
    let committed = commitsByOperation()
    let logged = journal.logged.current
    for dispatch in journal.dispatches.current {
      let versions = committed[dispatch.op, default: []] + committed[-dispatch.op, default: []]
      let what =
        "\(dispatch.awaited ? "awaited dispatch" : "send") of op \(dispatch.op) to \(dispatch.target) "
        + "(interceptor: \(dispatch.behaviour.rawValue))"
      switch dispatch.behaviour {
      case _ where dispatch.mustBeWithdrawn:
        if !versions.isEmpty || dispatch.error == nil {
          failures.append(
            "\(what): cancelled while queued behind an updater holding the turn, but committed \(versions) and "
              + "returned \(dispatch.error ?? "normally")")
        }
      case .fail:
        if !versions.isEmpty || dispatch.error == nil {
          failures.append(
            "\(what): rejected by its interceptor, but committed \(versions) and returned \(dispatch.error ?? "normally")"
          )
        }
      case .pass, .suspend, .nextFromAwaitedTask, .substitute:
        if versions.count != (dispatch.error == nil ? 1 : 0) {
          failures.append("\(what): returned \(dispatch.error ?? "normally") with commits \(versions)")
        }
      case .nextFromUnawaitedTask:
        if versions.count > 1 { failures.append("\(what): committed \(versions)") }
      }
      guard dispatch.awaited, dispatch.error == nil else { continue }
      for version in versions {
        guard let end = logged[version], end < dispatch.returnTick else {
          failures.append(
            "\(what): returned (tick \(dispatch.returnTick)) before the first listener was called for its commit "
              + "\(version) (tick \(logged[version].map(String.init) ?? "never"))")
          continue
        }
        for log in observers where log.kind.isListener {
          guard let fitting = matched[log.number], log.window.current.b < version else { continue }
          if let unsubscribed = log.unsubscribedAt.current, unsubscribed < dispatch.returnTick { continue }
          let events = log.events.current
          // What is wrong if the registration was at `k`; nil if nothing.
          func lateness(at k: Int) -> String? {
            guard let index = changes(log, from: k).firstIndex(where: { $0.version == version }) else { return nil }
            if index < events.count, events[index].end <= dispatch.returnTick { return nil }
            return index < events.count ? "call ended at tick \(events[index].end)" : "never called"
          }
          let late = fitting.map(lateness)
          guard let first = late.first, let reason = first, late.allSatisfy({ $0 != nil }) else { continue }
          failures.append(
            "\(what): returned (tick \(dispatch.returnTick)) before \(log.title) was called for its commit "
              + "\(version) (\(reason); registered at one of commits \(fitting))")
        }
      }
    }
    return failures
  }

  /// SPEC 4.1: a returning updater's dispatch returns the value its own commit computed, the state (or slice) of the
  /// commit log at that commit, whatever committed around it; and it gives `StoreError.returnValueUnavailable` only
  /// when the item itself never committed (an interceptor substituted it, or its `next`, called from a task the
  /// interceptor did not await, came too late).
  func checkReturnedValues(_ journal: OracleJournal) -> [String] {
    let committed = commitsByOperation()
    var failures: [String] = []
    for returned in journal.bodies.returned.current {
      let versions = committed[returned.op, default: []]
      let what = "returning updater of op \(returned.op) through \(returned.via)"
      switch returned.value {
      case nil:
        if !versions.isEmpty {
          failures.append("\(what): gave returnValueUnavailable, but it committed \(versions)")
        }
      case .root(let state)?:
        if versions.count != 1 || commits[versions[0]] != state {
          failures.append(
            "\(what): returned \(state), but its commits are \(versions) (\(versions.map { commits[$0] }))")
        }
      case .cell(let cell)?:
        let cells: (OracleState) -> [OracleCell] = { state in
          [state.feature, state.outer.inner, state.session] + (state.child.map { [$0] } ?? []) + state.items
        }
        if versions.count != 1 || !cells(commits[versions[0]]).contains(cell) {
          failures.append(
            "\(what): returned the slice \(cell), but its commits are \(versions) (\(versions.map { commits[$0] }))")
        }
      }
    }
    return failures
  }

  /// SPEC 4.7 and 4.9: a cancel by id reaches the runs under that id whose item entered the mailbox before it, and
  /// only the ones of its own feature.
  func checkRuns(_ journal: OracleJournal) -> [String] {
    let started = journal.started.current
    let shutdown = journal.shutdownTick.current
    var failures: [String] = []
    for check in journal.runChecks.current {
      let startTick = started[check.marker]
      let didStart = startTick != nil
      // The sent item may run ahead of the canceller and register its run before the cancel is called (the cancel
      // then cancels it where it runs, or it starts before the cancel reaches it: its operation then notes a tick
      // as late as the thread running it is preempted). A side effect that began once the cancel had returned asks
      // to run under an id the cancellation already reached: it never starts.
      if check.mustNotStart, let startTick, let began = journal.began.current[check.marker],
        began > check.cancelledTick
      {
        failures.append(
          "\(check.description): the run's side effect began after the cancel returned (tick \(began) > "
            + "\(check.cancelledTick)), and its operation started (tick \(startTick)); its handle: "
            + "\(check.error ?? "success"); store shut down at tick \(shutdown.map(String.init) ?? "-"), sent at tick "
            + "\(check.sentTick))")
      }
      if !check.mustNotStart, !didStart, !check.refusedAway, shutdown.map({ $0 > check.completionTick }) ?? true {
        failures.append(
          "\(check.description): the run never ran (\(check.error ?? "no error")): the other feature's cancel reached it"
        )
      }
    }
    return failures
  }
}
