import Katana
import Testing

/// Marks the test's own dispatch, so that the interceptor can tell it from the items that side effects
/// dispatch.
///
/// The test store binds a claim as a task-local around its call into the store. The interceptor, which is
/// first in the chain, claims it for the first item it sees with it: the test's item, since nothing else runs
/// in that task before the chain. It then runs the rest of the chain with the task-local cleared, because a
/// side effect's body runs inside that call, in the same task, and what the body dispatches must count as
/// received. An item seen later with the claim still bound (one that an interceptor substituted with an
/// item of the other kind, which the store dispatches after the chain has returned) counts as received too.
/// Other tasks never see the claim: store-owned tasks are detached, and tasks a side effect creates start
/// inside the cleared scope.
final class DispatchClaim: Sendable {
  @TaskLocal static var current: DispatchClaim?

  /// The recorder of the test store that made the claim: another store's interceptor ignores it. (The task
  /// that binds the claim keeps that recorder alive, so the identifier cannot be reused meanwhile.)
  let owner: ObjectIdentifier
  private let state = TestLock<(isClaimed: Bool, step: AnyObject?)>((false, nil))

  init(owner: ObjectIdentifier) {
    self.owner = owner
  }

  /// Claims the item about to be recorded, if nobody has; returns whether this call claimed it.
  func claim(by recorder: ObjectIdentifier) -> Bool {
    guard recorder == owner else { return false }
    return state.withLock { state in
      if state.isClaimed { return false }
      state.isClaimed = true
      return true
    }
  }

  var isClaimed: Bool {
    state.withLock { $0.isClaimed }
  }

  /// The step recorded for the claimed item.
  var step: AnyObject? {
    get { state.withLock { $0.step } }
    set { state.withLock { $0.step = newValue } }
  }
}

/// What an item the test started offers the recorder: every `dispatch` and `send` of the test store runs
/// in a task of its own, so that a failsafe can stop waiting for it.
protocol OwnWork: AnyObject, Sendable {
  /// The item, for messages.
  var item: any Dispatchable { get }
  /// Where the test dispatched or sent it.
  var location: SourceLocation { get }
  /// Whether the item has reached the interceptor.
  var hasStarted: Bool { get }
  /// Whether the item has reached the interceptor or finished without reaching it (withdrawn, rejected
  /// before the chain): the test's next item may go to the store.
  var isAdmitted: Bool { get }
  /// The task that dispatches the item, once it runs: it carries the item's work in the store.
  var task: TaskIdentity? { get }
  /// The error the item ended with, if it is not a cancellation and the test never looked at the outcome.
  var unacknowledgedError: (any Error)? { get }
  func cancel()
}

/// A task the test store started to dispatch an item of the test, and the outcome once it is done.
final class OwnTask<Value: Sendable>: OwnWork {
  private struct TaskState {
    var task: Task<Void, Never>?
    var identity: TaskIdentity?
    var isCancelled = false
    var isAcknowledged = false
    var result: Result<Value, any Error>?
  }

  let id: UInt64
  let item: any Dispatchable
  let claim: DispatchClaim
  let location: SourceLocation
  private let state = TestLock(TaskState())

  init(id: UInt64, item: any Dispatchable, claim: DispatchClaim, location: SourceLocation) {
    self.id = id
    self.item = item
    self.claim = claim
    self.location = location
  }

  var hasStarted: Bool { claim.isClaimed }

  var isAdmitted: Bool { claim.isClaimed || result != nil }

  var task: TaskIdentity? {
    state.withLock { $0.identity }
  }

  var result: Result<Value, any Error>? {
    state.withLock { $0.result }
  }

  var unacknowledgedError: (any Error)? {
    state.withLock { state in
      guard !state.isAcknowledged, case .failure(let error) = state.result, !(error is CancellationError) else {
        return nil
      }
      return error
    }
  }

  /// Records that the test looked at (or deliberately ignored) the outcome: an error is then its business.
  func acknowledge() {
    state.withLock { $0.isAcknowledged = true }
  }

  func setTask(_ task: Task<Void, Never>) {
    let isCancelled = state.withLock { state in
      state.task = task
      return state.isCancelled
    }
    if isCancelled { task.cancel() }
  }

  /// Called first thing in the task: the identity of the task that carries the item.
  func setIdentity(_ identity: TaskIdentity?) {
    state.withLock { $0.identity = identity }
  }

  func complete(_ result: Result<Value, any Error>) {
    state.withLock { state in
      state.result = result
      state.identity = nil
    }
  }

  func cancel() {
    let task = state.withLock { state in
      state.isCancelled = true
      return state.task
    }
    task?.cancel()
  }
}
