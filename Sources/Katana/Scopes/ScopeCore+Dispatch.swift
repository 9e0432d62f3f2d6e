extension ScopeCore {
  // MARK: - State updaters

  /// Dispatches a feature's state updater through the scope and returns once it is committed: the root
  /// store's ``StoreCore/dispatch(_:)-(U)``, applied at the scope's slice.
  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatch<U: StateUpdater>(_ updater: U) async throws where U.StateType == S {
    if root.tracksActivity {
      root.operations.beginActivity()
      defer { root.operations.endActivity() }
      return try await dispatchUntracked(updater)
    }
    try await dispatchUntracked(updater)
  }

  @inlinable @inline(__always)
  nonisolated(nonsending) func dispatchUntracked<U: StateUpdater>(_ updater: U) async throws where U.StateType == S {
    if try dispatchWithoutWaiting(updater) { return }
    try await root.dispatchWaitingForTurn(ScopedStateUpdater(updater, scope: self), node) { raw in
      try modify(raw) { updater.updateState(&$0) }
    }
  }

  /// The fast path: applies `updater` at once if the store is ready, idle and has no interceptor (see
  /// ``StoreCore/dispatchWithoutWaiting(_:)``).
  @inlinable @inline(never)
  func dispatchWithoutWaiting<U: StateUpdater>(_ updater: U) throws -> Bool where U.StateType == S {
    if Task.isCancelled { throw CancellationError() }
    guard !root.hasInterceptors else { return false }
    return try root.applyIfIdle(node) { raw in try modify(raw) { updater.updateState(&$0) } }
  }

  /// Hands a feature's state updater to the store now: the root store's ``StoreCore/send(_:)``, applied at
  /// the scope's slice.
  @inlinable
  func send<U: StateUpdater>(_ updater: U) -> DispatchHandle<Void> where U.StateType == S {
    if !root.hasInterceptors, !root.tracksActivity, !root.owner.isCurrentThread {
      do {
        if try root.applyIfIdle(node, { raw in try modify(raw) { updater.updateState(&$0) } }) {
          return succeededHandle
        }
      } catch {
        return .failed(error)
      }
    }
    return root.enqueueUpdater(ScopedStateUpdater(updater, scope: self), node) { [self] raw in
      try modify(raw) { updater.updateState(&$0) }
    }
  }

  // MARK: - Side effects

  /// Whether side effects may start right away, in the caller's task.
  @inlinable
  var sideEffectsStartDirectly: Bool {
    !root.hasInterceptors && root.readyFlag.isSet
  }

  /// Runs a side-effect body, through the store's runner if it has one.
  @inlinable
  nonisolated(nonsending) func runBody<T: Sendable>(_ body: sending nonisolated(nonsending) () async throws -> T)
    async throws -> T
  {
    guard let runner = root.sideEffectRunner else { return try await body() }
    return try await runner.run(body)
  }

  /// Dispatches a feature's side effect with the feature's context, in the calling task.
  @inlinable
  nonisolated(nonsending) func dispatch<E: SideEffect, D>(_ effect: E, context: SideEffectContext<S, D>) async throws
  where E.StateType == S, E.Dependencies == D {
    if root.tracksActivity {
      root.operations.beginActivity()
      defer { root.operations.endActivity() }
      return try await dispatchUntracked(effect, context: context)
    }
    try await dispatchUntracked(effect, context: context)
  }

  @inlinable
  nonisolated(nonsending) func dispatchUntracked<E: SideEffect, D>(_ effect: E, context: SideEffectContext<S, D>)
    async throws where E.StateType == S, E.Dependencies == D
  {
    if sideEffectsStartDirectly {
      try await runBody { try await effect.sideEffect(context) }
    } else {
      try await dispatchThroughChain(effect, context: context)
    }
  }

  @usableFromInline nonisolated(nonsending) func dispatchThroughChain<E: SideEffect, D>(
    _ effect: E, context: SideEffectContext<S, D>
  ) async throws where E.StateType == S, E.Dependencies == D {
    guard let chain = try await root.operations.chainOnceSideEffectsMayStart() else {
      try await runBody { try await effect.sideEffect(context) }
      return
    }
    let item = ScopedSideEffect(effect, context: context, scope: id)
    let frame = TypedSideEffectFrame<ScopedSideEffect<E>>(
      storeID: root.storeID, context: context, runner: root.sideEffectRunner)
    try await DispatchFrame.withFrame(frame) { try await chain(item) }
    try await root.operations.dispatchRedirects(frame.close().redirects)
  }

  /// Dispatches a returning side effect with the feature's context, in the calling task.
  @inlinable
  nonisolated(nonsending) func dispatch<R: ReturningSideEffect, D>(_ effect: R, context: SideEffectContext<S, D>)
    async throws -> R.ReturnValue
  {
    if root.tracksActivity {
      root.operations.beginActivity()
      defer { root.operations.endActivity() }
      return try await dispatchUntracked(effect, context: context)
    }
    return try await dispatchUntracked(effect, context: context)
  }

  @inlinable
  nonisolated(nonsending) func dispatchUntracked<R: ReturningSideEffect, D>(
    _ effect: R, context: SideEffectContext<S, D>
  ) async throws -> R.ReturnValue {
    if sideEffectsStartDirectly {
      return try await runBody { try await effect.sideEffect(context) }
    }
    return try await dispatchThroughChain(effect, context: context)
  }

  @usableFromInline nonisolated(nonsending) func dispatchThroughChain<R: ReturningSideEffect, D>(
    _ effect: R, context: SideEffectContext<S, D>
  ) async throws -> R.ReturnValue {
    guard let chain = try await root.operations.chainOnceSideEffectsMayStart() else {
      return try await runBody { try await effect.sideEffect(context) }
    }
    let item = ScopedReturningSideEffect(effect, context: context, scope: id)
    let frame = ReturningSideEffectFrame<ScopedReturningSideEffect<R>>(
      storeID: root.storeID, context: context, runner: root.sideEffectRunner)
    try await DispatchFrame.withFrame(frame) { try await chain(item) }
    let record = frame.close()
    try await root.operations.dispatchRedirects(record.redirects)
    guard let value = record.value else {
      throw StoreError.returnValueUnavailable(String(reflecting: R.self))
    }
    guard let typed = value as? R.ReturnValue else {
      throw StoreError.returnValueTypeMismatch(
        expected: String(reflecting: R.ReturnValue.self), actual: typeName(of: value))
    }
    return typed
  }

  /// Hands a feature's side effect to the store now; it runs in a task the store owns, with the feature's
  /// context, once everything sent before it has started.
  @usableFromInline
  func send<E: SideEffect, D>(_ effect: E, context: SideEffectContext<S, D>) -> DispatchHandle<Void>
  where E.StateType == S, E.Dependencies == D {
    enqueueSideEffect(ScopedSideEffect(effect, context: context, scope: id)) { [self] in
      try await dispatch(effect, context: context)
    }
  }

  /// Hands a returning side effect to the store now, with the feature's context.
  @usableFromInline
  func send<R: ReturningSideEffect, D>(_ effect: R, context: SideEffectContext<S, D>) -> DispatchHandle<R.ReturnValue>
  {
    enqueueSideEffect(ScopedReturningSideEffect(effect, context: context, scope: id)) { [self] in
      try await dispatch(effect, context: context)
    }
  }

  func enqueueSideEffect<Value: Sendable>(
    _ item: any Dispatchable, run work: @escaping @Sendable () async throws -> Value
  ) -> DispatchHandle<Value> {
    let handle = DispatchHandle(storage: HandleStorage<Value>.make())
    root.operations.enqueue(
      item, handle.storage,
      .asynchronous({
        do {
          handle.storage.complete(.success(try await work()))
        } catch {
          handle.storage.complete(.failure(error))
        }
      }))
    return handle
  }

  // MARK: - Type-erased dispatch

  /// Dispatches any item through the scope, checking at run time that it is a state updater of `S` or a
  /// side effect for the feature's context (an item that came through a scope already keeps its scope).
  func anyDispatch<D>(_ item: any Dispatchable, context: SideEffectContext<S, D>) async throws -> any Sendable {
    if item is any ScopedDispatchable {
      return try await root.operations.anyDispatch(item)
    }
    switch try StoreCore<S, D>.classify(item) {
    case .updater(let updater):
      try await dispatchErased(updater)
      return ()
    case .sideEffect(let effect):
      return try await dispatchErased(effect, context: context)
    }
  }

  /// Dispatches a type-erased state updater through the scope; its state type is checked when it applies.
  func dispatchErased(_ updater: any AnyStateUpdater) async throws {
    if root.tracksActivity {
      root.operations.beginActivity()
      defer { root.operations.endActivity() }
      return try await dispatchErasedUntracked(updater)
    }
    try await dispatchErasedUntracked(updater)
  }

  func dispatchErasedUntracked(_ updater: any AnyStateUpdater) async throws {
    let apply: (inout S) throws -> Void = { try Self.applyErased(updater, to: &$0) }
    if Task.isCancelled { throw CancellationError() }
    if !root.hasInterceptors, try root.applyIfIdle(node, { raw in try modify(raw, apply) }) { return }
    try await root.dispatchWaitingForTurn(ScopedAnyUpdater(updater, scope: self), node) { raw in
      try modify(raw, apply)
    }
  }

  /// Runs a type-erased side effect through the chain with the feature's context, and returns its value.
  func dispatchErased<D>(_ effect: any AnySideEffect, context: SideEffectContext<S, D>) async throws -> any Sendable {
    if root.tracksActivity {
      root.operations.beginActivity()
      defer { root.operations.endActivity() }
      return try await dispatchErasedUntracked(effect, context: context)
    }
    return try await dispatchErasedUntracked(effect, context: context)
  }

  func dispatchErasedUntracked<D>(_ effect: any AnySideEffect, context: SideEffectContext<S, D>) async throws
    -> any Sendable
  {
    guard let chain = try await root.operations.chainOnceSideEffectsMayStart() else {
      return try await runBody { try await effect.anySideEffect(context) }
    }
    let item = ScopedAnySideEffect(effect, context: context, scope: id)
    // The chain's final `next` handles the wrapper on the store's type-erased path, which runs it with the
    // feature's context.
    let frame = SideEffectFrame(storeID: root.storeID, runner: root.sideEffectRunner)
    try await DispatchFrame.withFrame(frame) { try await chain(item) }
    let record = frame.close()
    try await root.operations.dispatchRedirects(record.redirects)
    if let value = record.value { return value }
    if effect is any ReturningSideEffect {
      throw StoreError.returnValueUnavailable(typeName(of: effect))
    }
    return ()
  }

  /// Hands any item to the store now, through the scope; see ``anyDispatch(_:context:)``.
  func anySend<D>(_ item: any Dispatchable, context: SideEffectContext<S, D>) -> DispatchHandle<any Sendable> {
    if item is any ScopedDispatchable {
      return root.operations.anySend(item)
    }
    let kind: StoreCore<S, D>.ItemKind
    do {
      kind = try StoreCore<S, D>.classify(item)
    } catch {
      return .failed(error)
    }
    switch kind {
    case .updater(let updater):
      let apply: @Sendable (inout S) throws -> Void = { try Self.applyErased(updater, to: &$0) }
      if !root.hasInterceptors, !root.tracksActivity, !root.owner.isCurrentThread {
        do {
          if try root.applyIfIdle(node, { raw in try modify(raw, apply) }) { return succeededAnyHandle }
        } catch {
          return .failed(error)
        }
      }
      let handle = root.enqueueUpdater(ScopedAnyUpdater(updater, scope: self), node) { [self] raw in
        try modify(raw, apply)
      }
      let erased = DispatchHandle(storage: HandleStorage<any Sendable>.make())
      handle.whenComplete { result in erased.storage.complete(result.map { () as any Sendable }) }
      return erased
    case .sideEffect(let effect):
      return enqueueSideEffect(ScopedAnySideEffect(effect, context: context, scope: id)) { [self] in
        try await dispatchErased(effect, context: context)
      }
    }
  }

  /// Applies a type-erased state updater to the slice, checking its state type.
  static func applyErased(_ updater: any AnyStateUpdater, to slice: inout S) throws {
    try StoreCore<S, EmptySideEffectDependencyContainer>.applyErased(updater, to: &slice)
  }
}
