import Dispatch
import Katana

/// Detects the deadlock a Katana 6 interceptor walks into when it blocks on a dispatch to its own store
/// while it handles a state updater.
///
/// The updater holds the store's turn until the interceptor's handler returns, so whatever the handler
/// dispatches to the same store waits behind it: a blocking wait for that dispatch would never end (Katana 6
/// hung). The handler of a ``synchronousInterceptor(_:)`` runs on a thread marked with a ``Scope``; the
/// promise-returning dispatches made there to the same store are recorded, and
/// ``Hydra/await(in:_:)-(Context?,Promise<T>)`` on one of them throws `StoreError.deadlock(_:)`.
///
/// A promise derived from a recorded one in the same handler (with `then`, `catch`, `recover`, ...; not
/// `timeout`, which settles on its own) is recorded too. Not detected: promises from `promiseDispatch`, which
/// does not know its store, and combinators such as `zip`.
@usableFromInline
enum HeldTurn {
  /// Identifies a store: one instance per store, kept as a store attachment.
  final class StoreToken: Sendable {}

  /// A handler that holds its store's turn, and the dispatch promises it made to that store.
  final class Scope: @unchecked Sendable {
    // Sendable: `blocked` is only touched on the thread that runs the handler (see `holding`).
    let token: StoreToken
    private var blocked: [Weak] = []

    init(token: StoreToken) {
      self.token = token
    }

    func record(_ promise: AnyObject) {
      blocked.removeAll { $0.object == nil }
      blocked.append(Weak(object: promise))
    }

    func contains(_ promise: AnyObject) -> Bool {
      blocked.contains { $0.object === promise }
    }
  }

  struct Weak {
    weak var object: AnyObject?
  }

  /// Marks the threads of handlers that hold a turn.
  private static let current = ThreadLocalReference<Scope>()

  /// Runs `body`, a handler, marked as holding the turn that `scope` describes (if any).
  static func holding<Result>(_ scope: Scope?, _ body: () throws -> Result) rethrows -> Result {
    try current.with(scope, body)
  }

  /// The token of the store behind `internals` (nil once it has shut down).
  static func token(of internals: (any StoreContextInternals)?) -> StoreToken? {
    internals?.attachment(StoreToken.self) { StoreToken() }
  }

  /// Records `promise`, a dispatch to the store `token` identifies, if the calling handler holds that store's
  /// turn. Costs one thread-local lookup when it does not (`token` is not evaluated then).
  static func noteDispatch(_ promise: AnyObject, to token: @autoclosure () -> StoreToken?) {
    guard let scope = current.current, scope.token === token() else { return }
    scope.record(promise)
  }

  /// Records `derived` if the calling handler recorded `source`: `derived` cannot settle before `source`.
  /// Costs one thread-local lookup outside such handlers.
  @usableFromInline
  static func noteDerived(_ derived: AnyObject, from source: AnyObject) {
    guard let scope = current.current, scope.contains(source) else { return }
    scope.record(derived)
  }

  /// The error to throw instead of blocking on `promise`, if the caller holds the turn the promise waits
  /// behind.
  static func deadlockError<T>(waitingFor promise: Promise<T>) -> StoreError? {
    guard let scope = current.current, scope.contains(promise), promise.isPending else {
      return nil
    }
    return .deadlock(
      "an interceptor handling a state updater blocked on a dispatch to the same store, which waits until the "
        + "interceptor returns. Dispatch without waiting, or wait from a side effect.")
  }
}
