extension StoreCore {
  // MARK: - Typed dispatch

  /// The fast path of an updater dispatch: applies `updater` synchronously, and returns true, if the store
  /// is ready, nothing is ahead in the mailbox and there is no interceptor. Listeners are called before it
  /// returns. Returns false when the caller must take ``dispatchWaitingForTurn(_:)``.
  ///
  /// - Throws: `CancellationError` if the calling task is already cancelled (the updater is withdrawn).
  ///
  /// Never inlined into the async caller on purpose: inside an async function, temporaries live in memory
  /// taken from the task allocator; in this synchronous function they live on the thread's stack.
  @inlinable @inline(never)
  func dispatchWithoutWaiting<U: StateUpdater>(_ updater: U) throws -> Bool where U.StateType == S {
    guard !hasInterceptors else { return false }
    return try applyIfIdle(
      touching: nil, item: { updater },
      {
        // Read under the store's lock: see ``checkCancellationAtArrival()``.
        try Self.checkCancellationAtArrival()
        updater.updateState(&$0)
      })
  }

  /// ``dispatchWithoutWaiting(_:)`` for a type-erased updater.
  @inline(never)
  func dispatchWithoutWaiting(erased updater: any AnyStateUpdater) throws -> Bool {
    guard !hasInterceptors else { return false }
    return try applyIfIdle(
      touching: nil, item: { updater },
      {
        try Self.checkCancellationAtArrival()
        try Self.applyErased(updater, to: &$0)
      })
  }

  /// Throws `CancellationError` if the calling task is cancelled. Called under the store's lock, where an
  /// awaited updater arrives (applied at once, or queued): whoever cancelled the task before dispatching
  /// something of its own then always finds the cancelled updater withdrawn, never applied after its own
  /// item. (Checked before taking the lock, a cancellation landing in between would let the updater in.)
  @inlinable
  static func checkCancellationAtArrival() throws {
    if Task.isCancelled { throw CancellationError() }
  }

  /// The slow path of an updater dispatch: waits for the turn, runs the interceptor chain.
  @inlinable
  nonisolated(nonsending) func dispatchWaitingForTurn<U: StateUpdater>(_ updater: U) async throws
  where U.StateType == S {
    try await dispatchUpdaterWaitingForTurn(
      updater, applying: UpdaterFrame<S>.applying(U.self), apply: { updater.updateState(&$0) }, depth: 0)
  }

  /// Dispatches a state updater and returns once it is committed and observers have seen it.
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatch<U: StateUpdater>(_ updater: U) async throws where U.StateType == S {
    if let dispatchObservers {
      return try await dispatchObservers.observe(updater) { try await dispatchUnobserved(updater) }
    }
    try await dispatchUnobserved(updater)
  }

  /// ``dispatch(_:)`` without the dispatch observers (a sent updater's, observed from its `send`).
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatchUnobserved<U: StateUpdater>(_ updater: U) async throws
  where U.StateType == S {
    if tracksActivity {
      return try await withActivity { try await dispatchUntracked(updater) }
    }
    try await dispatchUntracked(updater)
  }

  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatchUntracked<U: StateUpdater>(_ updater: U) async throws where U.StateType == S {
    if try dispatchWithoutWaiting(updater) { return }
    try await dispatchWaitingForTurn(updater)
  }

  /// Whether side effects may start right away, in the caller's task, without the lock: the store is
  /// ready, live (not away in time, where ``CoreState/refusal(of:)`` refuses them), and has no interceptor. A
  /// recorder keeps this path: a side effect that starts directly is recorded there (``recordingSideEffect(_:_:)``).
  @inlinable
  var sideEffectsStartDirectly: Bool {
    !hasInterceptors && readyFlag.isSet && !awayFlag.isSet
  }

  /// Dispatches a side effect in the calling task and returns when its body returns.
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatch<E: SideEffect>(_ effect: E, context: SideEffectContext<S, D>)
    async throws where E.StateType == S, E.Dependencies == D
  {
    if let dispatchObservers {
      return try await dispatchObservers.observe(effect) { try await dispatchUnobserved(effect, context: context) }
    }
    try await dispatchUnobserved(effect, context: context)
  }

  /// ``dispatch(_:context:)`` without the dispatch observers (a sent side effect's, observed from its `send`).
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatchUnobserved<E: SideEffect>(_ effect: E, context: SideEffectContext<S, D>)
    async throws where E.StateType == S, E.Dependencies == D
  {
    if tracksActivity {
      return try await withActivity { try await dispatchUntracked(effect, context: context) }
    }
    try await dispatchUntracked(effect, context: context)
  }

  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatchUntracked<E: SideEffect>(_ effect: E, context: SideEffectContext<S, D>)
    async throws where E.StateType == S, E.Dependencies == D
  {
    if sideEffectsStartDirectly {
      try await recordingSideEffect(effect) { try await runBody { try await effect.sideEffect(context) } }
    } else {
      try await dispatchThroughChain(effect, context: context)
    }
  }

  @usableFromInline nonisolated(nonsending) func dispatchThroughChain<E: SideEffect>(
    _ effect: E, context: SideEffectContext<S, D>
  ) async throws where E.StateType == S, E.Dependencies == D {
    guard let chain = try await chainOnceSideEffectsMayStart(effect) else {
      try await recordingSideEffect(effect) { try await runBody { try await effect.sideEffect(context) } }
      return
    }
    let frame = TypedSideEffectFrame<E>(storeID: id, context: context, runner: sideEffectRunner)
    try await recordingSideEffect(effect) { try await DispatchFrame.withFrame(frame) { try await chain(effect) } }
    try await dispatchRedirects(frame.close().redirects, depth: 0)
  }

  /// Dispatches a returning side effect in the calling task and returns its value.
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatch<R: ReturningSideEffect>(
    _ effect: R, context: any AnySideEffectContext
  ) async throws -> R.ReturnValue {
    if let dispatchObservers {
      return try await dispatchObservers.observe(effect) { try await dispatchUnobserved(effect, context: context) }
    }
    return try await dispatchUnobserved(effect, context: context)
  }

  /// ``dispatch(_:context:)`` without the dispatch observers (a sent side effect's, observed from its `send`).
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatchUnobserved<R: ReturningSideEffect>(
    _ effect: R, context: any AnySideEffectContext
  ) async throws -> R.ReturnValue {
    if tracksActivity {
      return try await withActivity { try await dispatchUntracked(effect, context: context) }
    }
    return try await dispatchUntracked(effect, context: context)
  }

  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatchUntracked<R: ReturningSideEffect>(
    _ effect: R, context: any AnySideEffectContext
  ) async throws -> R.ReturnValue {
    if sideEffectsStartDirectly {
      return try await recordingSideEffect(effect) { try await runBody { try await effect.sideEffect(context) } }
    }
    return try await dispatchThroughChain(effect, context: context)
  }

  @usableFromInline nonisolated(nonsending) func dispatchThroughChain<R: ReturningSideEffect>(
    _ effect: R, context: any AnySideEffectContext
  ) async throws -> R.ReturnValue {
    guard let chain = try await chainOnceSideEffectsMayStart(effect) else {
      return try await recordingSideEffect(effect) { try await runBody { try await effect.sideEffect(context) } }
    }
    let frame = ReturningSideEffectFrame<R>(storeID: id, context: context, runner: sideEffectRunner)
    try await recordingSideEffect(effect) { try await DispatchFrame.withFrame(frame) { try await chain(effect) } }
    let record = frame.close()
    try await dispatchRedirects(record.redirects, depth: 0)
    guard let value = record.value else {
      throw StoreError.returnValueUnavailable(String(reflecting: R.self))
    }
    guard let typed = value as? R.ReturnValue else {
      throw StoreError.returnValueTypeMismatch(
        expected: String(reflecting: R.ReturnValue.self), actual: typeName(of: value))
    }
    return typed
  }

  // MARK: - Type-erased dispatch

  /// What kind of item something is, checked at run time.
  @usableFromInline
  enum ItemKind {
    case updater(any AnyStateUpdater)
    case sideEffect(any AnySideEffect)
  }

  static func classify(_ item: any Dispatchable) throws -> ItemKind {
    switch (item as? any AnyStateUpdater, item as? any AnySideEffect) {
    case (.some, .some): throw StoreError.ambiguousDispatchable(typeName(of: item))
    case (.some(let updater), nil): return .updater(updater)
    case (nil, .some(let effect)): return .sideEffect(effect)
    case (nil, nil): throw StoreError.unsupportedDispatchable(typeName(of: item))
    }
  }

  /// Applies a type-erased state updater to `state`, in place when it is a ``StateUpdater`` of the right
  /// state type.
  static func applyErased(_ updater: any AnyStateUpdater, to state: inout S) throws {
    if let typed = updater as? any StateUpdater {
      try applyOpened(typed, to: &state)
      return
    }
    // An item that came through a scope applies its feature's updater at the scope's place in the state.
    if let routed = updater as? any ScopeRoutedUpdater {
      try routed.applyRouted(to: &state)
      return
    }
    // A store's state is a `State` (`Store<S: State, D>`); the core's bound is `FeatureState` only so that
    // every feature's side-effect context can name it.
    guard let current = state as? any State else {
      throw StoreError.wrongStateType(expected: String(reflecting: S.self), actual: String(reflecting: S.self))
    }
    let updated = try updater.updatedState(currentState: current)
    guard let typedState = updated as? S else {
      throw StoreError.wrongStateType(expected: String(reflecting: S.self), actual: typeName(of: updated))
    }
    state = typedState
  }

  static func applyOpened<U: StateUpdater>(_ updater: U, to state: inout S) throws {
    guard U.StateType.self == S.self else {
      throw StoreError.wrongStateType(
        expected: String(reflecting: U.StateType.self), actual: String(reflecting: S.self))
    }
    // `U.StateType` and `S` are the same type, so viewing the state through a pointer to `U.StateType`
    // is sound, and keeps the mutation in place.
    withUnsafeMutablePointer(to: &state) { pointer in
      pointer.withMemoryRebound(to: U.StateType.self, capacity: 1) { updater.updateState(&$0.pointee) }
    }
  }

  /// Dispatches any item, checking its kind and types at run time, and returns its outcome (`()` for state
  /// updaters and side effects that return nothing).
  ///
  /// - Parameter depth: How many items of the other kind interceptors substituted on the way here.
  @usableFromInline nonisolated(nonsending) func anyDispatch(_ item: any Dispatchable, depth: Int = 0) async throws
    -> any Sendable
  {
    if let dispatchObservers {
      return try await dispatchObservers.observe(item) { try await anyDispatchUnobserved(item, depth: depth) }
    }
    return try await anyDispatchUnobserved(item, depth: depth)
  }

  /// ``anyDispatch(_:depth:)`` without the dispatch observers (a sent item's, observed from its `send`, and a
  /// scope's, observed as the feature dispatched it).
  @usableFromInline nonisolated(nonsending) func anyDispatchUnobserved(_ item: any Dispatchable, depth: Int = 0)
    async throws -> any Sendable
  {
    if tracksActivity {
      return try await withActivity { try await anyDispatchUntracked(item, depth: depth) }
    }
    return try await anyDispatchUntracked(item, depth: depth)
  }

  nonisolated(nonsending) func anyDispatchUntracked(_ item: any Dispatchable, depth: Int) async throws
    -> any Sendable
  {
    switch try Self.classify(item) {
    case .updater(let updater):
      if try dispatchWithoutWaiting(erased: updater) {
        return ()
      }
      try await dispatchUpdaterWaitingForTurn(
        item, applying: UpdaterFrame<S>.applyingNothing, apply: { try Self.applyErased(updater, to: &$0) },
        depth: depth)
      return ()
    case .sideEffect(let effect):
      let chain = try await chainOnceSideEffectsMayStart(item)
      let context = try makeContext()
      guard let chain else {
        return try await recordingSideEffect(item) { try await runBody { try await effect.anySideEffect(context) } }
      }
      let frame = SideEffectFrame(storeID: id, runner: sideEffectRunner)
      try await recordingSideEffect(item) { try await DispatchFrame.withFrame(frame) { try await chain(item) } }
      let record = frame.close()
      try await dispatchRedirects(record.redirects, depth: depth)
      if let value = record.value { return value }
      if effect is any ReturningSideEffect {
        throw StoreError.returnValueUnavailable(typeName(of: item))
      }
      return ()
    }
  }

  /// Dispatches the items interceptors substituted with items of the other kind, in order, as new items.
  @usableFromInline nonisolated(nonsending) func dispatchRedirects(_ items: [any Dispatchable], depth: Int) async throws
  {
    for item in items {
      guard depth < StoreError.redirectLimit else {
        throw StoreError.redirectLimitExceeded(typeName(of: item))
      }
      _ = try await anyDispatch(item, depth: depth + 1)
    }
  }
}

extension StoreCore {
  // MARK: - Recorders

  /// Appends every later commit to `log`, and records every later side effect in it.
  func attach(_ log: CommitLog<S>) {
    // Weak: the store keeps the log, which keeps this. From a state updater (which runs under the store's lock, on
    // this thread), the lock is not taken again: the reset falls within that commit, and the log takes the state
    // after it as its new start, as for a store still starting.
    let liveState: @Sendable (_ body: (S?) -> Void) -> Void = { [weak self] body in
      guard let self, !owner.isCurrentThread else { return body(nil) }
      withLock { body($0.liveStateUnlessStarting) }
    }
    // The plain twin (`forcesPlainPath`) reads every commit's cause from the task-local, without the count, and its
    // time from the clock, without the processor's counter.
    let plain = configuration.forcesPlainPath
    withLock {
      $0.attach(
        log, store: id, causes: plain ? nil : recorderCauses, clock: configuration.clock, plainTimer: plain,
        liveState: liveState)
    }
    recordsEffects.set(true)
  }

  /// Runs a side effect's chain or body, `body`, recording its start, end and outcome in the logs of the recorders
  /// attached: the one place where the store records side effects. Commits its task makes meanwhile (and side
  /// effects it starts) name it as their cause.
  ///
  /// - Parameter item: The side effect as recorded (a ``ScopedDispatchable`` for one dispatched through a scope);
  ///   made only if a recorder is attached.
  @inlinable
  nonisolated(nonsending) func recordingSideEffect<T>(
    _ item: @autoclosure () -> any Dispatchable, _ body: nonisolated(nonsending) () async throws -> T
  ) async throws -> T {
    guard recordsEffects.isSet else { return try await body() }
    return try await recordingSideEffect(item(), in: withLock { $0.effectLogs }, body)
  }

  @usableFromInline
  nonisolated(nonsending) func recordingSideEffect<T>(
    _ item: any Dispatchable, in logs: [EffectLog], _ body: nonisolated(nonsending) () async throws -> T
  ) async throws -> T {
    guard let first = logs.first else { return try await body() }
    // Outside the store's lock: the task-local is read.
    let cause = RecorderCause.current(on: self.id, causes: nil)
    // Every log records the side effect under the first one's number, the one its commits name as their cause.
    let number = first.start(item, cause: cause)
    for index in 1..<logs.count { _ = logs[index].start(item, cause: cause, id: number) }
    let value: T
    do {
      value = try await RecorderCause.local.withValue(
        RecorderCause.Bound(store: self.id, id: number, causes: recorderCauses)
      ) {
        try await body()
      }
    } catch {
      let outcome: RecordedEffect.Outcome = error is CancellationError ? .cancelled : .failed(error)
      for log in logs { log.end(number, outcome: outcome) }
      throw error
    }
    for log in logs { log.end(number, outcome: .completed) }
    return value
  }
}
