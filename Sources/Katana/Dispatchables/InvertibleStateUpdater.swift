#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A state updater whose change returns its own inverse: the updater that, applied to the state this change
/// produced, gives back the state it started from. An ``UndoHistory`` of the whole store undoes such a step by
/// applying the inverse, instead of replaying the commits it keeps.
///
/// ```swift
/// struct AddTodo: InvertibleStateUpdater {
///   let title: String
///   func updateState(_ state: inout AppState) -> RemoveLastTodo {
///     state.todos.append(Todo(title: title))
///     return RemoveLastTodo()
///   }
/// }
///
/// struct SetTitle: InvertibleStateUpdater {
///   let title: String
///   func updateState(_ state: inout AppState) -> SetTitle {
///     defer { state.title = title }
///     return SetTitle(title: state.title)   // the inverse puts the old title back
///   }
/// }
/// ```
///
/// It is a ``StateUpdater`` like any other: every path applies it through the plain `updateState(_:)` this protocol
/// supplies, which applies the change and hands the inverse to the undo histories that follow the store (it is
/// kept with the step). Nothing else changes: interceptors, observers, recorders and replays see the updater
/// itself, and a history that sees no inverse (a scope's history, a step through a scope, a step of several
/// commits of which one is not invertible) undoes by replaying, as for any updater.
///
/// - Important: The inverse must be exact: applied to the state the change produced, it gives back the state
///   before, field for field (the history applies it instead of a replay that would compute that state, so a wrong
///   inverse is a wrong undo). Do not implement the plain `updateState(_:)` yourself: it is the one that hands the
///   inverse on. A type cannot be both a ``ReturningStateUpdater`` and an invertible one (both supply the plain
///   form).
///
/// - Note: A history keeps an inverse with its step until the step is folded or dropped, and the last inverse
///   computed on a thread is also kept until that thread computes the next one (that is how it reaches the
///   history): an inverse that holds a large value (the old contents of a collection) holds it that long.
public protocol InvertibleStateUpdater: StateUpdater {
  /// The state this updater changes; see ``StateUpdater/StateType``. (Restated here so that Swift infers it from
  /// the inverting `updateState(_:)`.)
  associatedtype StateType
  /// The type of the inverse: a state updater of the same state.
  associatedtype Inverse: StateUpdater where Inverse.StateType == StateType

  /// Applies the change to `state` and returns the updater that undoes it.
  func updateState(_ state: inout StateType) -> Inverse
}

extension InvertibleStateUpdater {
  /// Applies the change and hands its inverse to the undo histories of the store that commits it: how every path
  /// (typed, `send`, interceptors, type-erased, replays) applies it.
  public func updateState(_ state: inout StateType) {
    let inverse: Inverse = updateState(&state)
    InverseChannel.publish(inverse, from: Self.self)
  }
}

/// How the inverse of an ``InvertibleStateUpdater``'s commit reaches the ``UndoHistory`` that records the commit,
/// without a change to the store's commit path: a per-thread slot.
///
/// The store runs a commit's mutation under its lock and then, on the same thread and before anything else can commit
/// on that store (the committing dispatch holds the turn), hands the commit to its hooks (``CommitHook``): so when
/// a hook is handed an item of type `U`, the slot holds the inverse `U`'s change published last on this thread,
/// which is this commit's. The slot keeps the type that published it, and a hook takes the inverse only if that is
/// the committed item's own type (a scoped item, whose change published a feature's inverse, takes none).
///
/// The slot keeps the last inverse until the next one on the thread replaces it (several histories of one store all
/// read it); it is released then, or when the thread exits. A history's own applications of updaters (folding,
/// replaying, undoing and redoing in place) run ``muted(_:)``: a history that folds an invertible step while the
/// commit is handed to the hooks leaves the next history the inverse of the commit, not of the step it folded.
enum InverseChannel {
  /// One thread's slot.
  final class Slot {
    var inverse: (any AnyStateUpdater)?
    var producer: ObjectIdentifier?
    /// How many ``muted(_:)`` calls are under way on the thread.
    var muted = 0

    init() {}
  }

  /// Keeps `inverse`, the inverse of a change of `producer`'s, as this thread's latest (unless muted).
  static func publish<Inverse: StateUpdater>(_ inverse: Inverse, from producer: Any.Type) {
    let slot = current
    guard slot.muted == 0 else { return }
    slot.inverse = inverse
    slot.producer = ObjectIdentifier(producer)
  }

  /// Runs `body`, in which changes publish nothing: what a history applies itself.
  static func muted<Result>(_ body: () throws -> Result) rethrows -> Result {
    let slot = current
    slot.muted += 1
    defer { slot.muted -= 1 }
    return try body()
  }

  /// The inverse of the change this thread made last, if it was `item`'s type's; nil otherwise.
  ///
  /// Only an invertible updater's change publishes, under its own type: a slot whose type is the item's holds the
  /// inverse of the item's change (no conformance check needed, which would cost more than the rest).
  static func inverse(of item: any Dispatchable) -> (any AnyStateUpdater)? {
    guard let pointer = pthread_getspecific(key) else { return nil }
    let slot = Unmanaged<Slot>.fromOpaque(pointer).takeUnretainedValue()
    guard slot.producer == ObjectIdentifier(type(of: item)) else { return nil }
    return slot.inverse
  }

  /// This thread's slot, created on first use and released when the thread exits.
  private static var current: Slot {
    if let pointer = pthread_getspecific(key) {
      return Unmanaged<Slot>.fromOpaque(pointer).takeUnretainedValue()
    }
    let slot = Slot()
    pthread_setspecific(key, Unmanaged.passRetained(slot).toOpaque())
    return slot
  }

  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    #if canImport(Darwin)
      let result = pthread_key_create(&key) { Unmanaged<Slot>.fromOpaque($0).release() }
    #else
      let result = pthread_key_create(&key) { pointer in
        guard let pointer else { return }
        Unmanaged<Slot>.fromOpaque(pointer).release()
      }
    #endif
    // Internal invariant: a process has room for hundreds of keys; this module creates one.
    precondition(result == 0, "pthread_key_create failed: \(result)")
    return key
  }()
}
