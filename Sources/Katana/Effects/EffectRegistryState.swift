/// Why a throttled call may run its operation; either way its run is registered already.
enum ThrottleTurn: Sendable, Equatable {
  /// It opened a window, whose closing task it must start, with this run token.
  case openedWindow(UInt64)
  /// It waited for the end of a window and was the latest call.
  case released
}

/// Program order, as a transition that can start a run under an id needs it: the ids whose cancellation
/// reached the sent item the run belongs to before the transition (``SentItemOrigin/cancelledIDs``, read
/// under the registry's lock, where cancellations mark them).
struct EffectProgramOrder: Equatable {
  /// Ids cancelled after the item entered the mailbox.
  let cancelledIDs: Set<EffectID>

  /// Work of a sent item: what cancellations have marked it with so far.
  init(of origin: SentItemOrigin?) {
    cancelledIDs = origin?.cancelledIDs ?? []
  }

  init(cancelledIDs: Set<EffectID>) {
    self.cancelledIDs = cancelledIDs
  }

  /// Work that no sent item does (an awaited dispatch from outside the store, a task of one's own): only the
  /// runs registered when a cancellation comes are cancelled.
  static let unsent = EffectProgramOrder(cancelledIDs: [])
}

/// The bookkeeping of one store's effects run under an id: a pure state machine.
///
/// ``EffectRegistry`` holds it under a lock; every transition returns what must happen next (tasks to
/// cancel, waiting callers to resume), which the registry does after releasing the lock. Nothing here calls
/// user code. Throttled calls waiting for their window, and tests waiting for a count, wait as ``Waiters``
/// kept here. Generic over their continuation types so that the tests can explore it with doubles
/// (`EffectRegistryStateMachineTests`).
///
/// Program order is decided here too: every transition that can start a run takes an ``EffectProgramOrder``
/// (whether a cancellation of the id reached the run's sent item first) as a required parameter, and a run
/// is only registered with an ``Admission``, which only ``admit(_:order:)`` gives. A transition added later
/// cannot start a run without deciding it.
struct EffectRegistryState<TurnWaiter: Resumable<ThrottleTurn>, CountWaiter: Resumable<Void>> {
  /// One run: an operation running in a task of its own under an id, or a throttle window.
  struct Run {
    let id: EffectID
    /// Cancels the run's task; nil until the task exists.
    var cancel: (@Sendable () -> Void)?
    /// Set once something cancelled the run; the run reports `CancellationError` to its caller.
    var isCancelled = false
  }

  /// An open throttle window for one id.
  struct Window {
    /// The run token of the task that closes the window.
    let token: UInt64
    /// In `latest` mode, the most recent call that arrived during the window, waiting for its end.
    var held: Held?
  }

  /// A throttled call waiting for the end of the window.
  struct Held {
    /// The call's run token, registered when the window releases it.
    let token: UInt64
    /// Program order let the call in when it came; a cancellation that reaches it later drops it from the
    /// window, so the window releases it with this admission.
    let admission: Admission
    /// The call's waiter in ``turnWaiters``.
    let waiter: UInt64
    /// The task that waits, whose hand-off to the window (see ``CarrierLinks``) ends when the call is
    /// released, dropped or cancelled: before it resumes, since the window's task may sleep again at once.
    let caller: TaskIdentity?
  }

  /// What a new run does.
  enum Reservation: Equatable {
    /// Run, as the run with this token.
    case reserved(UInt64)
    /// Do not start: a cancellation by id reached the item this run belongs to before the run registered.
    case cancelled
    /// The store has shut down.
    case storeShutDown
  }

  /// What a throttled call does, decided under the lock.
  enum ThrottleDecision: Equatable {
    /// Run now (the call's run is registered); the call opened a window, whose closing task has this run
    /// token.
    case runNow(windowToken: UInt64)
    /// Do not run, and leave the window alone: a cancellation by id reached the item this call belongs to
    /// before the call came (in program order, the call ran and was cancelled, and its window closed).
    case cancelled
    /// A window is open and the mode is `leading`: the call is dropped.
    case drop
    /// A window is open and the mode is `latest`: the call waits for the window's end, as this waiter. The
    /// call it replaced, if any, is dropped (its resumption is in the actions).
    case hold(waiter: UInt64, windowToken: UInt64)
    /// The store has shut down.
    case storeShutDown
  }

  /// What the task closing a window does when the window's time is up.
  enum WindowStep: Equatable {
    /// The held call was released (its resumption is in the actions): keep the window open for another
    /// interval.
    case keepOpen
    /// The window is closed (nobody was waiting), or was taken away by a cancellation.
    case closed
  }

  /// Leave to register a run under ``id``: only ``admit(_:order:)`` makes one, so that no transition
  /// starts a run without deciding program order.
  struct Admission {
    let id: EffectID
    fileprivate init(id: EffectID) { self.id = id }
  }

  /// Work to do outside the lock.
  struct Actions {
    var cancels: [@Sendable () -> Void] = []
    var turnResumptions: [Resumption<TurnWaiter>] = []
    var countResumptions: [Resumption<CountWaiter>] = []
    /// Tasks of held calls that no longer wait for a window: their hand-offs end before anything resumes.
    var endedHandOffs: [TaskIdentity] = []

    var isEmpty: Bool {
      cancels.isEmpty && turnResumptions.isEmpty && countResumptions.isEmpty && endedHandOffs.isEmpty
    }
  }

  private(set) var isShutDown = false
  private(set) var hasShutdownHandler = false
  private var lastToken: UInt64 = 0
  /// Keyed by run token: starting and finishing a run never hash or compare its id; cancelling by id
  /// scans the runs (a handful at a time in practice).
  private(set) var runs: [UInt64: Run] = [:]
  private(set) var windows: [EffectID: Window] = [:]
  private var heldCount = 0
  private(set) var turnWaiters = Waiters<TurnWaiter>()
  /// Tests waiting for ``entryCount`` to reach a value: waiter identifier to target.
  private(set) var countWaiters = Waiters<CountWaiter>()
  private var countTargets: [UInt64: Int] = [:]

  /// Runs plus throttled calls waiting for their window: zero once all work under ids has finished.
  var entryCount: Int { runs.count + heldCount }

  mutating func makeToken() -> UInt64 {
    lastToken &+= 1
    return lastToken
  }

  /// Returns true the first time only: the caller then installs the store's shutdown handler.
  mutating func claimShutdownHandler() -> Bool {
    defer { hasShutdownHandler = true }
    return !hasShutdownHandler
  }

  // MARK: - Runs

  /// Registers a new run under `id` (for ``AnySideEffectContext/run(id:cancelInFlight:operation:)``, and
  /// for the tools built on it: debounce, timers, `forEach`).
  ///
  /// - Parameters:
  ///   - cancelInFlight: Whether to cancel the runs already under `id` first, except `ancestors`.
  ///   - ancestors: The runs the new run is nested in (it never cancels those).
  ///   - order: Program order for the sent item the run belongs to; if a cancellation of `id` reached it
  ///     already, the run is not registered and cancels nothing.
  mutating func reserve(
    _ id: EffectID, cancelInFlight: Bool, ancestors: Set<UInt64>, order: EffectProgramOrder, actions: inout Actions
  ) -> Reservation {
    guard !isShutDown else { return .storeShutDown }
    guard let admission = admit(id, order: order) else { return .cancelled }
    if cancelInFlight {
      cancelEverything(under: id, except: ancestors, actions: &actions)
    }
    let token = makeToken()
    addRun(token, admission)
    takeCountWaiters(&actions)
    return .reserved(token)
  }

  /// Program order: leave to start a run under `id`, unless a cancellation of `id` reached the run's sent
  /// item first (then the run is cancelled before it exists).
  private func admit(_ id: EffectID, order: EffectProgramOrder) -> Admission? {
    guard !order.cancelledIDs.contains(id) else { return nil }
    return Admission(id: id)
  }

  /// The one place where a run is registered.
  private mutating func addRun(_ token: UInt64, _ admission: Admission) {
    runs[token] = Run(id: admission.id)
  }

  /// Gives a reserved run the way to cancel its task. Returns false if the run was cancelled (or has
  /// already finished) meanwhile: the caller cancels the task itself.
  mutating func attach(_ token: UInt64, cancel: @escaping @Sendable () -> Void) -> Bool {
    guard let run = runs[token], !run.isCancelled else { return false }
    runs[token]?.cancel = cancel
    return true
  }

  /// Whether the run `token` was cancelled (true for a run that is no longer registered).
  func isCancelled(_ token: UInt64) -> Bool {
    runs[token]?.isCancelled ?? true
  }

  /// Removes a finished run. Returns whether it had been cancelled.
  mutating func finish(_ token: UInt64, actions: inout Actions) -> Bool {
    guard let run = runs.removeValue(forKey: token) else { return false }
    takeCountWaiters(&actions)
    return run.isCancelled
  }

  /// Cancels everything under `id`: runs (they stay registered until their task returns), the throttle
  /// window and its held call. (The registry marks the sent items the cancellation reaches in the same
  /// critical section, so that the runs they start later are not admitted.)
  mutating func cancelAll(_ id: EffectID, actions: inout Actions) {
    cancelEverything(under: id, except: [], actions: &actions)
    takeCountWaiters(&actions)
  }

  private mutating func cancelEverything(under id: EffectID, except kept: Set<UInt64>, actions: inout Actions) {
    for (token, run) in runs where !run.isCancelled && run.id == id && !kept.contains(token) {
      runs[token]?.isCancelled = true
      if let cancel = run.cancel {
        actions.cancels.append(cancel)
      }
    }
    if let window = windows[id], !kept.contains(window.token) {
      windows[id] = nil
      if let held = window.held {
        dropHeld(held, actions: &actions)
      }
    }
  }

  private mutating func dropHeld(_ held: Held, actions: inout Actions) {
    heldCount -= 1
    if let caller = held.caller { actions.endedHandOffs.append(caller) }
    if let resumption = turnWaiters.resolve(held.waiter, with: .failure(CancellationError())) {
      actions.turnResumptions.append(resumption)
    }
  }

  /// Cancels everything and refuses new work.
  mutating func shutDown(actions: inout Actions) {
    isShutDown = true
    for (token, run) in runs where !run.isCancelled {
      runs[token]?.isCancelled = true
      if let cancel = run.cancel {
        actions.cancels.append(cancel)
      }
    }
    for window in windows.values {
      if let held = window.held {
        dropHeld(held, actions: &actions)
      }
    }
    windows = [:]
    takeCountWaiters(&actions)
  }

  // MARK: - Throttle

  /// Decides what a throttled call under `id`, with run token `token`, does. With `runNow`, the call's run
  /// is registered; with `hold`, the call waits, and its run is registered when the window releases it, so
  /// that a cancellation by id never misses it. A call whose sent item a cancellation of `id` reached first
  /// (`order`) is `cancelled`, and touches no window.
  mutating func throttle(
    _ id: EffectID, latest: Bool, token: UInt64, order: EffectProgramOrder, caller: TaskIdentity? = nil,
    actions: inout Actions
  ) -> ThrottleDecision {
    guard !isShutDown else { return .storeShutDown }
    guard let admission = admit(id, order: order) else { return .cancelled }
    guard var window = windows[id] else {
      let windowToken = makeToken()
      addRun(windowToken, admission)
      windows[id] = Window(token: windowToken)
      addRun(token, admission)
      takeCountWaiters(&actions)
      return .runNow(windowToken: windowToken)
    }
    guard latest else { return .drop }
    if let replaced = window.held {
      dropHeld(replaced, actions: &actions)
    }
    let waiter = turnWaiters.add()
    heldCount += 1
    window.held = Held(token: token, admission: admission, waiter: waiter, caller: caller)
    windows[id] = window
    takeCountWaiters(&actions)
    return .hold(waiter: waiter, windowToken: window.token)
  }

  /// Whether the call `waiter` is still held for the window of `id`.
  func isHeld(_ id: EffectID, waiter: UInt64) -> Bool {
    windows[id]?.held?.waiter == waiter
  }

  /// The held call `waiter` has suspended; returns its resumption if its outcome is already decided.
  mutating func suspendHeld(_ waiter: UInt64, on continuation: TurnWaiter) -> Resumption<TurnWaiter>? {
    turnWaiters.suspend(waiter, on: continuation)
  }

  /// The caller of the held call `waiter` is cancelled: takes the call back if it is still held, and fails it.
  mutating func cancelHeld(_ id: EffectID, waiter: UInt64, actions: inout Actions) -> Resumption<TurnWaiter>? {
    if let held = windows[id]?.held, held.waiter == waiter {
      windows[id]?.held = nil
      heldCount -= 1
      if let caller = held.caller { actions.endedHandOffs.append(caller) }
      takeCountWaiters(&actions)
    }
    return turnWaiters.resolve(waiter, with: .failure(CancellationError()))
  }

  /// The window whose closing task has run token `token` has reached its end: it releases the held call, if
  /// any, whose run starts now with the admission program order gave the call when it came (a cancellation
  /// that reaches the call's item later drops the call from the window).
  mutating func windowElapsed(_ id: EffectID, _ token: UInt64, actions: inout Actions) -> WindowStep {
    guard let window = windows[id], window.token == token else { return .closed }
    guard let held = window.held else {
      windows[id] = nil
      return .closed
    }
    windows[id]?.held = nil
    heldCount -= 1
    if let caller = held.caller { actions.endedHandOffs.append(caller) }
    addRun(held.token, held.admission)
    if let resumption = turnWaiters.resolve(held.waiter, with: .success(.released)) {
      actions.turnResumptions.append(resumption)
    }
    takeCountWaiters(&actions)
    return .keepOpen
  }

  // MARK: - Waiting for a count

  /// Records a waiter for ``entryCount`` to equal `count`; returns nil if it already does.
  mutating func addCountWaiter(count: Int) -> UInt64? {
    guard entryCount != count else { return nil }
    let waiter = countWaiters.add()
    countTargets[waiter] = count
    return waiter
  }

  mutating func suspendCountWaiter(_ waiter: UInt64, on continuation: CountWaiter) -> Resumption<CountWaiter>? {
    countWaiters.suspend(waiter, on: continuation)
  }

  mutating func cancelCountWaiter(_ waiter: UInt64) -> Resumption<CountWaiter>? {
    countTargets[waiter] = nil
    return countWaiters.resolve(waiter, with: .failure(CancellationError()))
  }

  /// Hands the waiters whose count is reached to `actions`. Called at the end of every transition that
  /// changes ``entryCount`` (never in between, where a count may be transient).
  private mutating func takeCountWaiters(_ actions: inout Actions) {
    guard !countTargets.isEmpty else { return }
    let count = entryCount
    for (waiter, target) in countTargets where target == count {
      countTargets[waiter] = nil
      if let resumption = countWaiters.resolve(waiter, with: .success(())) {
        actions.countResumptions.append(resumption)
      }
    }
  }
}
