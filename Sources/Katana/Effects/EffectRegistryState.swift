/// The bookkeeping of one store's effects run under an id: a pure state machine.
///
/// ``EffectRegistry`` holds it under a lock; every transition returns what must happen next (tasks to
/// cancel, waiting callers to resume), which the registry does after releasing the lock. Nothing here calls
/// user code.
struct EffectRegistryState {
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
    let continuation: UnsafeContinuation<ThrottleTurn, any Error>
  }

  /// Why a throttled call may run its operation; either way its run is registered already.
  enum ThrottleTurn {
    /// It opened a window, whose closing task it must start, with this run token.
    case openedWindow(UInt64)
    /// It waited for the end of a window and was the latest call.
    case released
  }

  /// What a throttled call does, decided under the lock.
  enum ThrottleDecision {
    /// Run now (the call's run is registered); the call opened a window, whose closing task has this run
    /// token.
    case runNow(windowToken: UInt64)
    /// A window is open and the mode is `leading`: the call is dropped.
    case drop
    /// A window is open and the mode is `latest`: the call waits for the window's end. The call it
    /// replaced, if any, is dropped.
    case hold(replaced: Held?)
    /// The store has shut down.
    case storeShutDown
  }

  /// What the task closing a window does when the window's time is up.
  enum WindowStep {
    /// Resume the held call and keep the window open for another interval.
    case release(Held)
    /// The window is closed (nobody was waiting), or was taken away by a cancellation.
    case closed
  }

  /// Work to do outside the lock.
  struct Actions {
    var cancels: [@Sendable () -> Void] = []
    var dropped: [UnsafeContinuation<ThrottleTurn, any Error>] = []
    var countWaiters: [UnsafeContinuation<Void, Never>] = []

    var isEmpty: Bool { cancels.isEmpty && dropped.isEmpty && countWaiters.isEmpty }
  }

  private(set) var isShutDown = false
  private(set) var hasShutdownHandler = false
  private var lastToken: UInt64 = 0
  /// Keyed by run token: starting and finishing a run never hash or compare its id; cancelling by id
  /// scans the runs (a handful at a time in practice).
  private var runs: [UInt64: Run] = [:]
  private var windows: [EffectID: Window] = [:]
  private var heldCount = 0
  /// Tests waiting for ``entryCount`` to reach a value.
  private var countWaiters: [UInt64: (count: Int, continuation: UnsafeContinuation<Void, Never>)] = [:]

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

  /// Registers a new run under `id`, after cancelling the runs already there if `cancelInFlight`.
  /// Returns nil once the store has shut down.
  mutating func reserve(_ id: EffectID, cancelInFlight: Bool, actions: inout Actions) -> UInt64? {
    guard !isShutDown else { return nil }
    if cancelInFlight {
      cancelEverything(under: id, actions: &actions)
    }
    let token = makeToken()
    addRun(id, token)
    takeCountWaiters(&actions)
    return token
  }

  private mutating func addRun(_ id: EffectID, _ token: UInt64) {
    runs[token] = Run(id: id)
  }

  /// Gives a reserved run the way to cancel its task. Returns false if the run was cancelled (or has
  /// already finished) meanwhile: the caller cancels the task itself.
  mutating func attach(_ token: UInt64, cancel: @escaping @Sendable () -> Void) -> Bool {
    guard let run = runs[token], !run.isCancelled else { return false }
    runs[token]?.cancel = cancel
    return true
  }

  /// Removes a finished run. Returns whether it had been cancelled.
  mutating func finish(_ token: UInt64, actions: inout Actions) -> Bool {
    guard let run = runs.removeValue(forKey: token) else { return false }
    takeCountWaiters(&actions)
    return run.isCancelled
  }

  /// Cancels everything under `id`: runs (they stay registered until their task returns), the throttle
  /// window and its held call.
  mutating func cancelAll(_ id: EffectID, actions: inout Actions) {
    cancelEverything(under: id, actions: &actions)
    takeCountWaiters(&actions)
  }

  private mutating func cancelEverything(under id: EffectID, actions: inout Actions) {
    for (token, run) in runs where !run.isCancelled && run.id == id {
      runs[token]?.isCancelled = true
      if let cancel = run.cancel {
        actions.cancels.append(cancel)
      }
    }
    if let window = windows.removeValue(forKey: id), let held = window.held {
      heldCount -= 1
      actions.dropped.append(held.continuation)
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
        actions.dropped.append(held.continuation)
      }
    }
    windows = [:]
    heldCount = 0
    takeCountWaiters(&actions)
  }

  // MARK: - Throttle

  /// Decides what a throttled call under `id`, with run token `token`, does. With `runNow`, the call's run
  /// is registered; with `hold`, its continuation is stored, and its run is registered when the window
  /// releases it, so that a cancellation by id never misses it.
  mutating func throttle(
    _ id: EffectID, latest: Bool, token: UInt64, continuation: UnsafeContinuation<ThrottleTurn, any Error>,
    actions: inout Actions
  ) -> ThrottleDecision {
    guard !isShutDown else { return .storeShutDown }
    guard var window = windows[id] else {
      let windowToken = makeToken()
      addRun(id, windowToken)
      windows[id] = Window(token: windowToken)
      addRun(id, token)
      takeCountWaiters(&actions)
      return .runNow(windowToken: windowToken)
    }
    guard latest else { return .drop }
    let replaced = window.held
    if replaced == nil {
      heldCount += 1
    }
    window.held = Held(token: token, continuation: continuation)
    windows[id] = window
    takeCountWaiters(&actions)
    return .hold(replaced: replaced)
  }

  /// Takes back a held call whose caller was cancelled; nil if it is no longer held.
  mutating func withdrawHeld(_ id: EffectID, _ token: UInt64, actions: inout Actions) -> Held? {
    guard let held = windows[id]?.held, held.token == token else { return nil }
    windows[id]?.held = nil
    heldCount -= 1
    takeCountWaiters(&actions)
    return held
  }

  /// The window whose closing task has run token `token` has reached its end.
  mutating func windowElapsed(_ id: EffectID, _ token: UInt64, actions: inout Actions) -> WindowStep {
    guard let window = windows[id], window.token == token else { return .closed }
    guard let held = window.held else {
      windows[id] = nil
      return .closed
    }
    windows[id]?.held = nil
    heldCount -= 1
    addRun(id, held.token)
    takeCountWaiters(&actions)
    return .release(held)
  }

  // MARK: - Waiting for a count

  /// Registers a waiter for ``entryCount`` to equal `count`; returns false if it already does.
  mutating func addCountWaiter(_ id: UInt64, count: Int, _ continuation: UnsafeContinuation<Void, Never>) -> Bool {
    guard entryCount != count else { return false }
    countWaiters[id] = (count, continuation)
    return true
  }

  mutating func removeCountWaiter(_ id: UInt64) -> UnsafeContinuation<Void, Never>? {
    countWaiters.removeValue(forKey: id)?.continuation
  }

  /// Hands the waiters whose count is reached to `actions`. Called at the end of every transition that
  /// changes ``entryCount`` (never in between, where a count may be transient).
  private mutating func takeCountWaiters(_ actions: inout Actions) {
    guard !countWaiters.isEmpty else { return }
    let count = entryCount
    for (id, waiter) in countWaiters where waiter.count == count {
      countWaiters[id] = nil
      actions.countWaiters.append(waiter.continuation)
    }
  }
}
