/// A state updater handed to the store with `send`. The pump runs it while holding the turn.
final class UpdaterJob<S: State, D: SideEffectDependencyContainer, Value: Sendable>: HandleStorage<Value>,
  MailboxJob, @unchecked Sendable
{
  // Sendable: immutable fields; the completion state is behind HandleStorage's lock.
  let id: UInt64
  private let core: StoreCore<S, D>
  /// What the handle returns on success (`()`, typed or type-erased).
  private let value: Value
  /// Applies the updater (the caller holds the turn) and returns the items of the other kind that
  /// interceptors substituted.
  private let apply: @Sendable () async throws -> [any Dispatchable]

  init(
    id: UInt64, core: StoreCore<S, D>, value: Value,
    apply: @escaping @Sendable () async throws -> [any Dispatchable]
  ) {
    self.id = id
    self.core = core
    self.value = value
    self.apply = apply
  }

  var isUpdater: Bool { true }

  func run() async {
    let redirects: [any Dispatchable]
    do {
      redirects = try await apply()
    } catch {
      complete(.failure(error))
      return
    }
    guard !redirects.isEmpty else {
      complete(.success(value))
      return
    }
    // The running task holds the turn, so the substituted items run in a task of their own, after it is
    // released.
    let started = core.startOwnedTask(id: core.makeID()) { [self] in
      do {
        try await core.dispatchRedirects(redirects, depth: 0)
        complete(.success(value))
      } catch {
        complete(.failure(error))
      }
    }
    if !started {
      complete(.failure(StoreError.storeShutDown))
    }
  }

  func fail(_ error: any Error) {
    complete(.failure(error))
  }

  override func cancel() {
    core.cancelJob(id)
  }

  override func deadlockIfWaited() -> (any Error)? {
    core.deadlockIfWaiting(forQueuedJob: id)
  }
}

/// A side effect handed to the store with `send`. It runs in a store-owned task of its own.
final class SideEffectJob<S: State, D: SideEffectDependencyContainer, Value: Sendable>: HandleStorage<Value>,
  MailboxJob, @unchecked Sendable
{
  // Sendable: immutable fields; the completion state is behind HandleStorage's lock.
  let id: UInt64
  private let core: StoreCore<S, D>
  private let work: @Sendable () async throws -> Value

  init(id: UInt64, core: StoreCore<S, D>, run work: @escaping @Sendable () async throws -> Value) {
    self.id = id
    self.core = core
    self.work = work
  }

  var isUpdater: Bool { false }

  func run() async {
    do {
      complete(.success(try await work()))
    } catch {
      complete(.failure(error))
    }
  }

  func fail(_ error: any Error) {
    complete(.failure(error))
  }

  override func cancel() {
    core.cancelJob(id)
  }

  override func deadlockIfWaited() -> (any Error)? {
    core.deadlockIfWaiting(forQueuedJob: id)
  }
}

extension DispatchHandle {
  /// A handle that has already failed with `error`.
  static func failed(_ error: any Error) -> DispatchHandle {
    let storage = HandleStorage<Value>()
    storage.complete(.failure(error))
    return DispatchHandle(storage: storage)
  }
}
