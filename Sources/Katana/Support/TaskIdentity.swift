/// The identity of a running task, kept only to compare with: deadlock detection (is the waiting task the one
/// holding the turn, or running the state initializer?) and shutdown from inside a store-owned task.
///
/// It wraps the task's `UnsafeCurrentTask` and compares with that type's own `==`, which is true exactly when
/// both refer to the same task. It is never used to reach the task (no cancellation, no priority, no
/// task-locals through it).
///
/// Why keeping it is sound: two identities could only compare equal for different tasks if one of them
/// outlived its task and a new task reused its memory. The store never lets that happen: it keeps an identity
/// only while its task is alive and cannot end: while the task holds the turn (the turn is released before the
/// dispatch returns), waits in the mailbox (a suspended task stays alive until resumed, and cancellation
/// withdraws the entry), runs the state initializer (cleared when it returns), or runs as a store-owned task
/// (removed as the task's last step). `StoreCoreInvariantTests` and the schedule fuzzer check that a store at
/// rest holds no identity.
@usableFromInline
struct TaskIdentity: Equatable, @unchecked Sendable {
  // Sendable: only compared, never used to reach the task.
  @usableFromInline let task: UnsafeCurrentTask

  @inlinable
  init(_ task: UnsafeCurrentTask) {
    self.task = task
  }

  /// The identity of the calling task, or nil outside of any task.
  @inlinable
  static var current: TaskIdentity? {
    withUnsafeCurrentTask { task in task.map(TaskIdentity.init) }
  }

  @inlinable
  static func == (lhs: TaskIdentity, rhs: TaskIdentity) -> Bool {
    lhs.task == rhs.task
  }
}
