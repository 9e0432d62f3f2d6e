/// The identity of a running task, kept only to compare with: deadlock detection (is the waiting task the one
/// holding the turn, or running the state initializer?) and shutdown from inside a store-owned task.
///
/// It keeps the address of the task's object, taken from its `UnsafeCurrentTask` (whose one stored property
/// is that reference), as a plain integer: `UnsafeCurrentTask` is a resilient type, so every copy and compare
/// of one goes through the runtime's value witnesses, which cost the intercepted dispatch about 20% of its
/// time. Two identities are equal exactly when they were taken from the same task. It is never used to reach
/// the task (no cancellation, no priority, no task-locals through it), and it does not keep the task alive.
///
/// Why keeping it is sound: two identities could only compare equal for different tasks if one of them
/// outlived its task and a new task reused its memory. The store never lets that happen: it keeps an identity
/// only while its task is alive and cannot end: while the task holds the turn (the turn is released before the
/// dispatch returns), waits in the mailbox (a suspended task stays alive until resumed, and cancellation
/// withdraws the entry), runs the state initializer (cleared when it returns), runs as a store-owned task
/// (removed as the task's last step), carries in-flight work of a store that tracks activity (removed as the
/// work ends, before the task can), or waits for, or runs, an effect tool's run or throttle window (removed
/// by the task itself when the wait or run ends). `StoreCoreInvariantTests` and the schedule fuzzer check that a store at
/// rest holds no identity.
@usableFromInline package struct TaskIdentity: Hashable, Sendable {
  /// The address of the task's object.
  @usableFromInline let address: UInt

  /// The identity of `task`: the plain way to take one, which ``current`` takes without copying the task's optional
  /// (the library no longer calls this; `TaskIdentityTests` compares the two).
  @inlinable
  package init(_ task: UnsafeCurrentTask) {
    // A run-time checked cast: it traps if `UnsafeCurrentTask` ever stops being one reference wide.
    address = unsafeBitCast(task, to: UInt.self)
  }

  /// An identity from an address: a task's (``current``), or any (tests of the state machines compare identities only).
  @usableFromInline init(address: UInt) {
    self.address = address
  }

  /// The identity of the calling task, or nil outside of any task.
  @inlinable
  package static var current: TaskIdentity? {
    withUnsafeCurrentTask { task in
      // The optional as it lies, one reference wide, nil the null pointer (also a run-time checked cast): unwrapping it
      // copied it (a resilient type, through its value witnesses, retaining the task) and destroyed the copy, about
      // 25 ns of a dispatch through one interceptor.
      let address = unsafeBitCast(task, to: UInt.self)
      return address == 0 ? nil : TaskIdentity(address: address)
    }
  }
}
