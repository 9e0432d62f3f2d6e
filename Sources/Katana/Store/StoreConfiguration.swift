/// Settings of a ``Store`` that are not part of its state or dependencies: its clock, its observers, and the faster
/// form of interceptors.
public struct StoreConfiguration: Sendable {
  /// The clock the store and its side effects use for time (``SideEffectContext/clock``).
  ///
  /// The default is a `ContinuousClock`. Tests inject a manual clock so that anything time-based runs
  /// without real waiting.
  public var clock: any Clock<Duration>

  /// Functions called before and after every item the store handles, in array order: the cheap,
  /// non-suspending alternative to an interceptor for code that only observes (see ``DispatchObserver``).
  /// Empty by default, which costs nothing.
  public var dispatchObservers: [DispatchObserver]

  /// Interceptors written as types (``DispatchInterceptor``), the faster form of the store's `interceptors`: they run
  /// after those, in array order, the last one handing items to the store. Empty by default.
  public var dispatchInterceptors: [any DispatchInterceptor]

  /// Creates a configuration.
  ///
  /// - Parameters:
  ///   - clock: The clock for time-based side effects.
  ///   - dispatchObservers: Functions that see every item before and after it is handled.
  ///   - dispatchInterceptors: Interceptors that see every item after the store's ``StoreInterceptor``s.
  public init(
    clock: any Clock<Duration> = ContinuousClock(), dispatchObservers: [DispatchObserver] = [],
    dispatchInterceptors: [any DispatchInterceptor] = []
  ) {
    self.clock = clock
    self.dispatchObservers = dispatchObservers
    self.dispatchInterceptors = dispatchInterceptors
  }

  /// Receives the feature outputs that nothing handles (emitted in the store's own context, or through a scope
  /// mounted without a handler for them), when set: the package's test store records them, so that a test
  /// asserts what a feature emitted without any app. Nil (the default): such outputs are ignored.
  package var unhandledOutputReceiver: (@Sendable (any FeatureOutput) async throws -> Void)?

  /// Test hook: called, outside the store's lock, each time a dispatch has to wait in the mailbox, with
  /// the number of entries then waiting. Lets tests synchronise on "this dispatch is queued" without
  /// sleeping. Only the enqueue slow path reads it.
  var onMailboxEnqueue: (@Sendable (_ waitingCount: Int) -> Void)?

  /// Test hook: called on the committing thread between a commit's critical section and its delivery (for a commit
  /// that has observers to deliver to, or values to release), while the committing dispatch holds the turn, outside the
  /// lock. The observation fuzzer registers observers there, in the window a second critical section would leave
  /// open: one registered then must not get that commit (SPEC 4.6).
  var afterCommit: (@Sendable () -> Void)?

  /// Whether the store counts its in-flight work (awaited dispatches, sent items, store-owned tasks) so
  /// that the package's test store can wait until nothing is left. Off by default: it costs two lock
  /// acquisitions per dispatch.
  package var tracksActivity = false

  /// Called, outside the store's lock, each time the effect tools change which task carries a piece of work
  /// (a hand-off to a run, a run's task bound or unbound), when ``tracksActivity`` is on. The package's test
  /// store sets it: such a change is silent otherwise, and a wait that saw the work awake must hear that it
  /// now waits for a task asleep on the test clock. Nil (the default) costs nothing.
  package var onCarrierChange: (@Sendable () -> Void)?

  /// Test-only: every dispatch takes the plain path, through an interceptor chain (a pass-through interceptor is
  /// added to a store that has no interceptor of either form): no updater applied at once on the caller's thread, no commit filter, no
  /// side effect started without the chain. Tests run the same schedules with and without it and compare what
  /// users observe (STYLE 11).
  @usableFromInline var forcesPlainPath = false

  /// Test-only: state updaters run the store's interceptor chain in its plain form (``composeInterceptors(_:context:final:)``,
  /// called at its substituted type, its end an async closure) instead of ``OpaqueChain``. Set by ``forcesPlainPath``
  /// too. Tests run the same schedules with and without it and compare what users observe (STYLE 11).
  package var usesPlainInterceptorChain = false

  /// Runs every side-effect body, when set. KatanaPromises sets it to run Katana 6's synchronous side
  /// effects, which block their thread in `Hydra.await`, on dedicated threads instead of the cooperative
  /// pool. Nil (the default) costs nothing.
  package var sideEffectRunner: (any SideEffectRunner)?

  /// Runs the store's start-up step, when set: KatanaPromises sets the executor Katana 6's
  /// `stateInitializerAsyncProvider` names (the main queue by default), so that the store becomes ready only
  /// once that executor has run it, as in Katana 6. (A synchronous initializer given through KatanaPromises
  /// runs there too; an `async` one runs where its own isolation says.)
  package var stateInitializerRunner: (any SideEffectRunner)?

  /// Starts each task the store owns (the one that applies sent updaters, those that run sent side effects,
  /// start-up), when set. KatanaPromises sets it for `.katana6` stores, to run that work on threads of its
  /// own: on Linux, tasks otherwise share Dispatch's worker threads, which Katana 6 code blocks in
  /// `Hydra.await`. Nil (the default): `Task.detached(priority: Task.currentPriority)`.
  @usableFromInline package var ownedTaskStarter:
    (@Sendable (_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never>)?

  /// Starts the tasks of the effect tools (a run, a throttle window), when set, instead of `Task {}`. The
  /// package's test store sets it, to start them on its serial executor: a task created with `Task {}` runs
  /// on the global executor, where the test store could not tell whether it can run.
  package var effectTaskStarter: (any EffectTaskStarter)?

  /// Starts the tasks that run sent side effects, when set, instead of ``ownedTaskStarter``: KatanaPromises
  /// starts them where a Katana 6 side-effect body may block in place.
  package var sideEffectTaskStarter:
    (@Sendable (_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never>)?

  /// Calls listeners through this function, when set, instead of directly on the committing thread:
  /// KatanaPromises hands each call to Katana 6's `listenersAsyncProvider` (the main queue by default).
  /// Calls must run in the order they are handed over; a call that has not started when its listener is
  /// removed does nothing. Streams are not affected.
  package var listenerExecutor: (@Sendable (_ call: @escaping @Sendable () -> Void) -> Void)?
}

/// Runs bodies for a store where a compatibility layer chooses; see `StoreConfiguration.sideEffectRunner`
/// and `StoreConfiguration.stateInitializerRunner`.
@usableFromInline
package protocol SideEffectRunner: Sendable {
  /// Runs `body`, where the runner chooses, and returns its value.
  nonisolated(nonsending) func run<T: Sendable>(_ body: sending nonisolated(nonsending) () async throws -> T)
    async throws
    -> T
}

/// Starts an unstructured task of the effect tools; see `StoreConfiguration.effectTaskStarter`. The task must
/// inherit the caller's priority and task-local values, as `Task {}` does.
package protocol EffectTaskStarter: Sendable {
  func start<T: Sendable>(_ operation: sending @escaping () async -> T) -> Task<T, Never>
}
