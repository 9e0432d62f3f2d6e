/// Bridges a callback API that delivers one value or one error, with cancellation.
///
/// ```swift
/// let user = try await withCallback { (complete: @escaping @Sendable (Result<User, any Error>) -> Void) in
///   let request = legacyAPI.loadUser(id: 3) { user, error in
///     complete(Result { if let error { throw error }; return user! })
///   }
///   return { request.cancel() }  // called if the caller is cancelled first; return nil if there is none
/// }
/// ```
///
/// `start` runs at once, in the calling task and on its actor (so APIs that must be started on the main
/// actor can be). It starts the work and returns a cancellation handler, or nil. Compared with
/// `withCheckedThrowingContinuation`, which traps when resumed twice and hangs when never resumed, this
/// bridge:
/// - takes the first call of `complete` and ignores later ones;
/// - on cancellation of the calling task, calls the cancellation handler once and throws
///   `CancellationError` at once, without waiting for the API to answer (its late answer is ignored);
/// - throws ``EffectError/callbackDropped(_:)`` when the API releases `complete` without calling it,
///   instead of waiting forever.
///
/// For an API that delivers many values, build an `AsyncThrowingStream` and iterate it with
/// ``AnySideEffectContext/forEach(_:id:cancelInFlight:_:)`` (see <doc:Effects>).
///
/// - Parameter start: Starts the work, handing it `complete`; may throw to fail at once.
/// - Returns: The value passed to `complete`.
/// - Throws: The error passed to `complete` or thrown by `start`; `CancellationError` if the calling task
///   is cancelled first (`start` is not called if it already is); ``EffectError/callbackDropped(_:)``.
///
/// - Important: A cancellation handler that keeps alive a request holding `complete` keeps `complete` alive
///   too, so the dropped-callback check only catches callbacks that nothing keeps any more.
public nonisolated(nonsending) func withCallback<Value: Sendable>(
  _ start: (_ complete: @escaping @Sendable (Result<Value, any Error>) -> Void) throws -> (@Sendable () -> Void)?
) async throws -> Value {
  let bridge = CallbackBridge<Value>()
  return try await withTaskCancellationHandler {
    // A caller cancelled already has finished the bridge: `start` is not called.
    if !bridge.isFinished {
      // Only `complete` keeps the token (this scope drops it before waiting): when the API releases
      // `complete` without calling it, the token's deinit fails the call instead of leaving it waiting forever.
      let token = CallbackToken(bridge)
      do {
        let onCancel = try start { result in token.bridge.complete(result) }
        bridge.finishStarting(onCancel: onCancel)
      } catch {
        bridge.finishStarting(throwing: error)
      }
    }
    return try await bridge.outcome()
  } onCancel: {
    bridge.cancel()
  }
}

/// The state of one ``withCallback(_:)`` call: the waiting caller, the cancellation handler, and whether
/// the outcome is known. The caller waits with the package's waiter primitive; whichever of the callback,
/// a dropped callback, `start` throwing or cancellation comes first decides the outcome.
final class CallbackBridge<Value: Sendable>: Sendable {
  private typealias Waiter = UnsafeContinuation<Value, any Error>

  private struct State {
    var waiters = Waiters<Waiter>()
    /// The caller's waiter.
    let waiter: UInt64
    var onCancel: (@Sendable () -> Void)?
    /// `start` is running: a release of the callback is only noted, since `start` may still throw.
    var isStarting = true
    var callbackReleased = false
    var isFinished = false
    var isCancelled = false

    init() {
      waiter = waiters.add()
    }

    /// Decides the outcome, unless it is known already; returns the resumption to perform after unlocking.
    mutating func finish(_ result: Result<Value, any Error>) -> Resumption<Waiter>? {
      guard !isFinished else { return nil }
      isFinished = true
      onCancel = nil
      return waiters.resolve(waiter, with: result)
    }
  }

  private let state = Locked(State())

  private var droppedError: EffectError {
    .callbackDropped(String(reflecting: Value.self))
  }

  /// Whether the outcome is known.
  var isFinished: Bool {
    state.withLock { $0.isFinished }
  }

  /// Waits for the outcome (cancellation reaches it through ``cancel()``).
  func outcome() async throws -> Value {
    try await state.suspend { state, continuation in state.waiters.suspend(state.waiter, on: continuation) }
  }

  /// `start` returned: keeps `handler` for a cancellation to come, calls it at once if the caller was
  /// cancelled meanwhile, and fails the call if the callback was already released without being called.
  func finishStarting(onCancel handler: (@Sendable () -> Void)?) {
    let (callHandler, dropped) = state.withLock { state -> (Bool, Resumption<Waiter>?) in
      state.isStarting = false
      if state.isCancelled { return (true, nil) }
      if state.callbackReleased { return (false, state.finish(.failure(droppedError))) }
      if !state.isFinished { state.onCancel = handler }
      return (false, nil)
    }
    if callHandler {
      handler?()
    }
    dropped?.perform()
  }

  /// `start` threw: fails the call with its error, unless the outcome is already known.
  func finishStarting(throwing error: any Error) {
    let resumption = state.withLock { state in
      state.isStarting = false
      return state.finish(.failure(error))
    }
    resumption?.perform()
  }

  /// Resumes the caller with `result`, unless the outcome is already known.
  func complete(_ result: Result<Value, any Error>) {
    state.withLock { $0.finish(result) }?.perform()
  }

  /// The callback was released: fails the call with ``EffectError/callbackDropped(_:)`` unless the outcome
  /// is known (or, while `start` runs, once it has returned).
  func callbackReleased() {
    let resumption = state.withLock { state -> Resumption<Waiter>? in
      guard !state.isStarting else {
        state.callbackReleased = true
        return nil
      }
      return state.finish(.failure(droppedError))
    }
    resumption?.perform()
  }

  /// Fails the caller with `CancellationError` and calls the cancellation handler, unless the outcome is
  /// already known.
  func cancel() {
    let (resumption, handler) = state.withLock { state -> (Resumption<Waiter>?, (@Sendable () -> Void)?) in
      guard !state.isFinished else { return (nil, nil) }
      state.isCancelled = true
      let handler = state.onCancel
      return (state.finish(.failure(CancellationError())), handler)
    }
    handler?()
    resumption?.perform()
  }
}

/// Held only by the `complete` callback of ``withCallback(_:)``; fails the call if the callback is
/// released without being called.
final class CallbackToken<Value: Sendable>: Sendable {
  let bridge: CallbackBridge<Value>

  init(_ bridge: CallbackBridge<Value>) {
    self.bridge = bridge
  }

  deinit {
    bridge.callbackReleased()
  }
}
